#!/usr/bin/env python3
"""Regenerate the adversarial set in ``audio_fixtures/adversarial/`` (issue 17).

Every entry asks a ConfirmAction question and expects a reject: nothing in this set may be read
as a yes. (For the speech categories a "no", a cancel or an operator request would be a fair
reading too; the manifest's ``"fair"`` field names it. The bench counts yeses and any answer
separately.)

Contents:

- ``nonspeech``: white noise, pink noise, clicks, synthetic coughs (noise bursts shaped by a
  formant filter and a fast-attack envelope), babble (3-6 overlapping TTS voices saying
  unrelated sentences) and near silence, each in several levels/seeds;
- speech that is not affirmative: ``negation``, ``cancel``, ``operator`` and ``question``
  sentences, each spoken by two voices (rotating over four), mixed with white noise and with
  babble at 0, 5 and 10 dB SNR.

Every file exists at 16 kHz PCM16 (``rate`` 16000) and as an 8 kHz G.711 mu-law round trip
decoded back to PCM16 and stored at 8 kHz (``rate`` 8000). 16-bit FLAC, 0.3 s lead and trail,
every random generator seeded from the file name.

Run from the repository root::

    /work/venv/bin/python scripts/make_adversarial.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import soxr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_fixtures import CONFIRM, REJECT, _mulaw, _pink, _rng, _trim
from make_heldout import PiperSlow, espeak_voice, flite_voice, write_flac

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "audio_fixtures" / "adversarial"
RATE = 16_000
TEL_RATE = 8_000
LEAD_S = 0.3

# (id, category, text, fair reading)
SENTENCES: list[tuple[str, str, str, str]] = [
    ("no_absolutely_not", "negation", "no, absolutely not", "no"),
    ("dont_do_it", "negation", "don't do it", "no"),
    ("i_said_no", "negation", "I said no", "no"),
    ("i_dont_want_that", "negation", "no, I don't want that", "no"),
    ("cancel_whole_thing", "cancel", "cancel the whole thing", "cancel"),
    ("stop_never_mind", "cancel", "stop, never mind", "cancel"),
    ("talk_to_a_human", "operator", "let me talk to a human", "operator"),
    ("get_me_an_agent", "operator", "get me an agent please", "operator"),
    ("what_time_is_it", "question", "what time is it", "reject"),
    ("how_much_cost", "question", "how much will that cost", "reject"),
    ("rain_today", "question", "is it going to rain today", "reject"),
    ("who_am_i_speaking_with", "question", "who am I speaking with", "reject"),
]

# Unrelated sentences for babble (never the target sentences).
BABBLE_TEXTS = [
    "the meeting was moved to thursday afternoon",
    "she bought three loaves of bread at the market",
    "my brother lives near the old railway station",
    "they painted the kitchen last weekend",
    "the library closes early during the holidays",
    "we should water the plants before leaving",
    "his car needed new tyres after the trip",
    "the children played football in the park",
]

VOICES = ("piper_slow", "flite_rms", "espeak_gb", "flite_slt")
NOISES = ("white", "babble")
SNRS = (0, 5, 10)
RATES = (RATE, TEL_RATE)


def make_voices() -> dict[str, Any]:
    return {
        "piper_slow": PiperSlow(),
        "flite_rms": flite_voice("rms"),
        "espeak_gb": espeak_voice("en-gb+m3", 165),
        "flite_slt": flite_voice("slt"),
    }


def _norm(x: np.ndarray, dbfs: float) -> np.ndarray:
    rms = float(np.sqrt(np.mean(x**2)))
    return x * (10 ** (dbfs / 20) / rms) if rms > 0 else x


class Babble:
    """Babble tracks: 3-6 TTS voices saying unrelated sentences, overlapped at random offsets."""

    def __init__(self, voices: dict[str, Any]) -> None:
        self.clips: list[np.ndarray] = []
        for i, text in enumerate(BABBLE_TEXTS):
            for voice in VOICES:
                if (i + VOICES.index(voice)) % 2:
                    continue
                audio, rate = voices[voice](text)
                clip = soxr.resample(_trim(audio, rate), rate, RATE, quality="HQ")
                self.clips.append(_norm(clip, -20.0))

    def __call__(self, n: int, rng: np.random.Generator, talkers: int | None = None) -> np.ndarray:
        k = talkers if talkers is not None else int(rng.integers(3, 7))
        out = np.zeros(n)
        for idx in rng.choice(len(self.clips), size=k, replace=False):
            clip = self.clips[int(idx)]
            # Loop each talker to cover the whole length, starting at a random point.
            reps = np.tile(clip, n // len(clip) + 2)
            start = int(rng.integers(0, len(clip)))
            out += reps[start : start + n] * rng.uniform(0.6, 1.0)
        return _norm(out, -20.0)


def white(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(0.0, 1.0, n)


def clicks(n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n)
    for _ in range(int(rng.integers(3, 15))):
        at = int(rng.integers(0, n - 400))
        length = int(rng.integers(40, 400))
        decay = np.exp(-np.arange(length) / rng.uniform(5, 60))
        out[at : at + length] += rng.normal(0.0, 1.0, length) * decay * rng.uniform(0.3, 1.0)
    return out


def _resonate(x: np.ndarray, f: float, bw: float, rate: int) -> np.ndarray:
    """A two-pole resonator (one formant) run over ``x``."""
    r = np.exp(-np.pi * bw / rate)
    a1, a2 = -2 * r * np.cos(2 * np.pi * f / rate), r * r
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] - a1 * (y[i - 1] if i else 0.0) - a2 * (y[i - 2] if i > 1 else 0.0)
    return y


def coughs(n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n)
    for _ in range(int(rng.integers(1, 4))):
        length = int(RATE * rng.uniform(0.15, 0.4))
        at = int(rng.integers(0, max(1, n - length)))
        burst = rng.normal(0.0, 1.0, length)
        shaped = sum(
            _resonate(burst, f * rng.uniform(0.85, 1.15), bw, RATE)
            for f, bw in ((500.0, 150.0), (1400.0, 250.0), (2600.0, 400.0))
        )
        t = np.arange(length) / RATE
        env = (1 - np.exp(-t / 0.008)) * np.exp(-t / rng.uniform(0.04, 0.12))
        shaped = _norm(shaped * env, -12.0)
        out[at : at + length] += shaped
    return out


def near_silence(n: int, rng: np.random.Generator) -> np.ndarray:
    x = rng.normal(0.0, 1.0, n)
    t = np.arange(n) / RATE
    return x + 3.0 * np.sin(2 * np.pi * 50.0 * t + rng.uniform(0, 6.28))  # mains hum


# (kind, level dBFS) variants; babble gets a talker count too.
NONSPEECH: list[tuple[str, float]] = [
    *[("white", lv) for lv in (-40.0, -30.0, -20.0, -12.0)],
    *[("pink", lv) for lv in (-40.0, -30.0, -20.0, -12.0)],
    *[("clicks", lv) for lv in (-35.0, -25.0, -18.0, -12.0)],
    *[("cough", lv) for lv in (-30.0, -22.0, -16.0, -10.0)],
    *[("babble", lv) for lv in (-35.0, -25.0, -20.0, -15.0, -20.0, -20.0)],
    *[("silence", lv) for lv in (-70.0, -60.0, -55.0, -50.0)],
]


def to_rate(x: np.ndarray, rate: int) -> np.ndarray:
    if rate == RATE:
        return x
    return _mulaw(soxr.resample(x, RATE, TEL_RATE, quality="HQ"))


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    voices = make_voices()
    babble = Babble(voices)
    entries: list[dict[str, Any]] = []

    def emit(name: str, x: np.ndarray, rate: int, extra: dict[str, Any]) -> None:
        floor = _rng("floor:" + name).normal(0.0, 10 ** (-66 / 20), len(x))
        write_flac(OUT / name, x + floor, rate)
        entries.append(
            {
                "file": name,
                "sample_rate": rate,
                "rate": rate,
                "spec": CONFIRM,
                "expected": REJECT,
                **extra,
            }
        )

    for i, (kind, level) in enumerate(NONSPEECH):
        base = f"{kind}_{i:02d}"
        rng = _rng(base)
        n = int(RATE * rng.uniform(1.2, 3.0))
        talkers = 3 + i % 4 if kind == "babble" else None
        if kind == "white":
            x = white(n, rng)
        elif kind == "pink":
            x = _pink(n, rng)
        elif kind == "clicks":
            x = clicks(n, rng)
        elif kind == "cough":
            x = coughs(n, rng)
        elif kind == "babble":
            x = babble(n, rng, talkers)
        else:
            x = near_silence(n, rng)
        x = _norm(x, level)
        for rate in RATES:
            name = f"{base}__{rate // 1000}k.flac"
            emit(
                name,
                to_rate(x, rate),
                rate,
                {
                    "id": base,
                    "voice": "none",
                    "condition": f"{kind}/{rate // 1000}k",
                    "category": "nonspeech",
                    "text": "",
                    "fair": "reject",
                    "noise": kind,
                    "snr_db": None,
                    "level_dbfs": level,
                    "talkers": talkers,
                },
            )
        print(f"{base}: done", file=sys.stderr)

    for j, (uid, category, text, fair) in enumerate(SENTENCES):
        for voice in (VOICES[j % 4], VOICES[(j + 1) % 4]):
            audio, rate = voices[voice](text)
            speech = _norm(soxr.resample(_trim(audio, rate), rate, RATE, quality="HQ"), -20.0)
            pad = np.zeros(int(RATE * LEAD_S))
            clean = np.concatenate([pad, speech, pad])
            for noise in NOISES:
                for snr in SNRS:
                    base = f"{uid}__{voice}__{noise}{snr:02d}"
                    rng = _rng(base)
                    n = len(clean)
                    bg = white(n, rng) if noise == "white" else babble(n, rng)
                    x = clean + _norm(bg, -20.0 - snr)
                    for out_rate in RATES:
                        name = f"{base}__{out_rate // 1000}k.flac"
                        emit(
                            name,
                            to_rate(x, out_rate),
                            out_rate,
                            {
                                "id": uid,
                                "voice": voice,
                                "condition": f"{noise}{snr}/{out_rate // 1000}k",
                                "category": category,
                                "text": text,
                                "fair": fair,
                                "noise": noise,
                                "snr_db": snr,
                            },
                        )
        print(f"{uid}: done", file=sys.stderr)

    manifest = {
        "description": (
            "Adversarial audio (issue 17): nothing here may be read as a yes; "
            "regenerate with scripts/make_adversarial.py"
        ),
        "voices": list(VOICES),
        "noises": list(NOISES),
        "snr_db": list(SNRS),
        "rates": list(RATES),
        "fixtures": entries,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
