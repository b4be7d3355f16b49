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

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import AMOUNT, CODE, value
from make_fixtures import CONDITIONS, VOICES, make_voices

OUT = fg.fixtures_root() / "dev_values"

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
    said = [
        (uid, spec["arguments"]["mode"], spec, text, value(v)) for uid, text, spec, v in PHRASES
    ]
    render = fg.recipe(fg.render_tuning, seed_stem=True)
    voices, write = make_voices(), fg.write_flac_float
    fixtures = fg.generate(OUT, said, voices, CONDITIONS, render, prepare=fg.raw, write=write)
    description = (
        "Development set (wrapped numbers and digit strings, tuning voices); "
        "regenerate with scripts/make_dev_values.py"
    )
    fg.write_manifest(OUT, description, fixtures, voices=list(VOICES), conditions=list(CONDITIONS))
    print(f"{len(fixtures)} files in {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
