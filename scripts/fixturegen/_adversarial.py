"""The recipe of the first two adversarial sets (``adversarial``, ``adversarial2``).

Non-speech (white, pink, clicks, coughs, babble, near silence at several levels) and speech
that is not a yes, each sentence in two of four voices, mixed with white noise and with
babble at 0, 5 and 10 dB SNR; every file at 16 kHz and as an 8 kHz mu-law round trip; a
-66 dBFS floor; 0.3 s lead and trail. Seeds come from the file names, after ``seed_prefix``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import soxr

from ._audio import RATE, TEL_RATE, FloatArray, padded, seeded, to_dbfs, trim, write_flac
from ._noise import Crowd, clicks, coughs, mulaw_line, near_silence, pink, white
from ._sets import CONFIRM, REJECT, write_manifest
from ._voices import Voice

__all__ = ["NOISES", "NONSPEECH", "RATES", "SNRS", "adversarial_set"]

NOISES = ("white", "babble")
SNRS = (0, 5, 10)
RATES = (RATE, TEL_RATE)
NONSPEECH: list[tuple[str, float]] = [
    *[("white", lv) for lv in (-40.0, -30.0, -20.0, -12.0)],
    *[("pink", lv) for lv in (-40.0, -30.0, -20.0, -12.0)],
    *[("clicks", lv) for lv in (-35.0, -25.0, -18.0, -12.0)],
    *[("cough", lv) for lv in (-30.0, -22.0, -16.0, -10.0)],
    *[("babble", lv) for lv in (-35.0, -25.0, -20.0, -15.0, -20.0, -20.0)],
    *[("silence", lv) for lv in (-70.0, -60.0, -55.0, -50.0)],
]
"""(kind, level dBFS) of each non-speech file; babble has 3 to 6 talkers, in turn."""

_KINDS: dict[str, Callable[[int, np.random.Generator], FloatArray]] = {
    "white": white,
    "pink": pink,
    "clicks": clicks,
    "cough": coughs,
    "silence": near_silence,
}


def _speech(voice: Voice, text: str) -> FloatArray:
    audio, rate = voice(text)
    return to_dbfs(soxr.resample(trim(audio, rate), rate, RATE, quality="HQ"), -20.0)


def _crowd(voices: Mapping[str, Voice], texts: Sequence[str]) -> Crowd:
    """Each babble line said by every second voice, in turn."""
    names = list(voices)
    return Crowd(
        [
            _speech(voices[voice], text)
            for i, text in enumerate(texts)
            for k, voice in enumerate(names)
            if not (i + k) % 2
        ]
    )


def adversarial_set(
    folder: Path,
    sentences: Sequence[tuple[str, str, str, str]],
    babble_texts: Sequence[str],
    voices: Mapping[str, Voice],
    description: str,
    seed_prefix: str = "",
) -> None:
    """Write the set and its manifest into ``folder``.

    Args:
        sentences: ``(id, category, text, fair reading)``; sentence j is said by voices j and
            j + 1 (of four, in turn).
        babble_texts: the lines the babble is made of (never the sentences).
        seed_prefix: put before every seed name (a new set with the same recipe).
    """
    folder.mkdir(parents=True, exist_ok=True)
    names = list(voices)
    crowd = _crowd(voices, babble_texts)
    entries: list[dict[str, Any]] = []

    def rng(key: str) -> np.random.Generator:
        return seeded(seed_prefix + key)

    def emit(base: str, x: FloatArray, fields: dict[str, Any]) -> None:
        """``x`` at 16 kHz and through the 8 kHz mu-law line, each with its floor."""
        for rate in RATES:
            name = f"{base}__{rate // 1000}k.flac"
            y = x if rate == RATE else mulaw_line(x)
            floor = rng("floor:" + name).normal(0.0, 10 ** (-66 / 20), len(y))
            write_flac(folder / name, y + floor, rate)
            tagged = {**fields, "condition": fields["condition"] + f"/{rate // 1000}k"}
            head = {"file": name, "sample_rate": rate, "rate": rate}
            entries.append(head | {"spec": CONFIRM, "expected": REJECT} | tagged)

    for i, (kind, level) in enumerate(NONSPEECH):
        base = f"{kind}_{i:02d}"
        r = rng(base)
        n = int(RATE * r.uniform(1.2, 3.0))
        talkers = 3 + i % 4 if kind == "babble" else None
        x = crowd(n, r, talkers) if kind == "babble" else _KINDS[kind](n, r)
        about: dict[str, Any] = {"id": base, "voice": "none", "condition": kind}
        about |= {"category": "nonspeech", "text": "", "fair": "reject", "noise": kind}
        about |= {"snr_db": None, "level_dbfs": level, "talkers": talkers}
        emit(base, to_dbfs(x, level), about)
        print(f"{base}: done", file=sys.stderr)

    for j, (uid, category, text, fair) in enumerate(sentences):
        for voice in (names[j % 4], names[(j + 1) % 4]):
            clean = padded(_speech(voices[voice], text), 0.3)
            for noise in NOISES:
                for snr in SNRS:
                    base = f"{uid}__{voice}__{noise}{snr:02d}"
                    r = rng(base)
                    bg = white(len(clean), r) if noise == "white" else crowd(len(clean), r)
                    said: dict[str, Any] = {"id": uid, "voice": voice, "condition": f"{noise}{snr}"}
                    said |= {"category": category, "text": text, "fair": fair}
                    said |= {"noise": noise, "snr_db": snr}
                    emit(base, clean + to_dbfs(bg, -20.0 - snr), said)
        print(f"{uid}: done", file=sys.stderr)

    write_manifest(
        folder,
        description,
        entries,
        voices=names,
        noises=list(NOISES),
        snr_db=list(SNRS),
        rates=list(RATES),
    )
