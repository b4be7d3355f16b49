#!/usr/bin/env python3
"""Regenerate the development set of wrapped numbers and digit strings in
``audio_fixtures/dev_values/``.

A *development* set: the numbers-and-digits rule of `WhisperRecognizer` (two readings that
must agree) was designed on it. It uses the tuning voices (piper joe, flite slt, espeak-ng
en-us) and the tuning conditions (clean, 10 dB pink noise, telephone 8 kHz), with phrasings
that wrap the value in a sentence ("the code is two eight four seven", "let's say nine
hundred"); none of them is in the held-out set. Needs what ``make_fixtures.py`` needs and
``soundfile``. Run from the repository root: ``python scripts/make_dev_values.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_fixtures import AMOUNT, CODE, CONDITIONS, VOICES, Piper, espeak, flite, render, value

OUT = Path(__file__).resolve().parent.parent / "audio_fixtures" / "dev_values"

PHRASES: list[tuple[str, str, dict[str, Any], Any]] = [
    ("code_is_2847", "the code is two eight four seven", CODE, "2847"),
    ("its_9316", "it's nine three one six", CODE, "9316"),
    ("pin_5028", "my pin is five oh two eight", CODE, "5028"),
    ("sure_7701", "sure, it's seven seven zero one", CODE, "7701"),
    ("number_is_3141", "okay, the number is three one four one", CODE, "3141"),
    ("um_6289", "um, six two, eight nine", CODE, "6289"),
    ("would_be_4009", "that would be four oh oh nine", CODE, "4009"),
    ("bare_1882", "one eight eight two", CODE, "1882"),
    ("about_250", "it's about two hundred fifty", AMOUNT, 250),
    ("move_75", "I'd like to move seventy five dollars", AMOUNT, 75),
    ("make_it_1200", "make it one thousand two hundred", AMOUNT, 1200),
    ("uh_40", "uh, forty", AMOUNT, 40),
    ("and_320", "three hundred and twenty", AMOUNT, 320),
    ("say_900", "let's say nine hundred", AMOUNT, 900),
]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    voices = {"piper": Piper(), "flite": flite, "espeak": espeak}
    fixtures = []
    for uid, text, spec, expected in PHRASES:
        for voice in VOICES:
            audio, _ = voices[voice](text)
            for condition in CONDITIONS:
                name = f"{uid}__{voice}__{condition}"
                x, rate = render(audio, condition, name)
                soundfile.write(OUT / f"{name}.flac", np.clip(x, -1.0, 1.0), rate, "PCM_16")
                fixtures.append({
                    "file": f"{name}.flac", "id": uid, "voice": voice, "condition": condition,
                    "sample_rate": rate, "category": spec["arguments"]["mode"], "text": text,
                    "spec": spec, "expected": value(expected),
                })  # fmt: skip
    manifest = {
        "description": "Development set (wrapped numbers and digit strings, tuning voices); "
        "regenerate with scripts/make_dev_values.py",
        "voices": list(VOICES),
        "conditions": list(CONDITIONS),
        "fixtures": fixtures,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(fixtures)} files in {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
