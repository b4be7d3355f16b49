#!/usr/bin/env python3
"""Regenerate the held-out spoken-answer set in ``audio_fixtures/heldout/`` (issue 14).

The held-out set is for *measuring*, never for tuning: its phrasings and voices appear nowhere
in ``audio_fixtures/*.flac`` (made by ``scripts/make_fixtures.py``), and they were written and
committed before any recogniser was run on them. Do not edit the phrasings to make a result
look better; add a new set instead.

Needs what ``make_fixtures.py`` needs. Run from the repository root::

    python scripts/make_heldout.py

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

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import AMOUNT, CODE, COLOUR, CONFIRM, PAY, REJECT, meta, no, pick, value, yes

OUT = fg.fixtures_root() / "heldout"

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


def make_voices() -> dict[str, fg.Voice]:
    return {
        "piper_slow": fg.piper(1.25),
        "flite_awb": fg.flite("awb"),
        "flite_rms": fg.flite("rms"),
        "espeak_f3": fg.espeak("en-us+f3", 185),
    }


def main() -> int:
    render = fg.recipe(fg.render_heldout)
    entries = fg.generate(OUT, UTTERANCES, make_voices(), CONDITIONS, render, prepare=fg.resampled)
    description = (
        "Held-out spoken answers (issue 14): phrasings and voices unseen by tuning; "
        "regenerate with scripts/make_heldout.py"
    )
    fg.write_manifest(OUT, description, entries, voices=list(VOICES), conditions=list(CONDITIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
