#!/usr/bin/env python3
"""Regenerate the fourth held-out set: ``audio_fixtures/heldout4/`` (spoken answers, issue 14)
and ``audio_fixtures/heldout4_confirmations/`` (high-risk confirmations, issue 17).

Why a fourth set: ``heldout3`` gave one honest first reading of the code at commit a012e03
(78.7 %, and 9 of its 80 affirmatives read as no). Finding out why means reading its failures,
and from then on it is a development set. This set was written and committed before any of
``heldout3``'s per-file results were read, so whatever is designed on ``heldout3`` is measured
here. Do not edit the phrasings to make a result look better; add a new set instead.

Voices (no other answer set speaks with any of them):

- ``flite_kal16``: flite's 16 kHz ``kal16`` (the tuning confirmations use its 8 kHz ``kal``);
- ``espeak_lancs_f1``: espeak-ng ``en-gb-x-gbclan+f1`` (Lancashire) at 155 words a minute;
- ``espeak_us_m7``: espeak-ng ``en-us+m7`` at 175 words a minute (faster than any other set);
- ``espeak_wmids_f3``: espeak-ng ``en-gb-x-gbcwmd+f3`` (West Midlands) at 150 (``heldout3``'s
  babble has an ``m4`` variant of this accent in the background, never as the speaker).

Conditions and rendering are ``heldout3``'s (`fixturegen.heldout_pair`), with babble of its
own talkers and lines.

Needs Debian's ``espeak-ng``, ``flite`` and the ``speech`` extra. Run from the repository
root: ``python scripts/make_heldout4.py``. Seeds come from file names, so a rerun gives
identical files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import AMOUNT, CODE, COLOUR, CONFIRM, PAY, REJECT, meta, no, pick, value, yes
from make_heldout3 import CONDITIONS

OUT = fg.fixtures_root() / "heldout4"
OUT_CONFIRM = fg.fixtures_root() / "heldout4_confirmations"

# (id, category, spec, text, expected). Written before any heldout3 result was read.
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_please_go_ahead", "confirm_yes", CONFIRM, "yes, please go ahead", yes()),
    ("thats_fine_do_it", "confirm_yes", CONFIRM, "that's fine, do it", yes()),
    ("yeah_okay", "confirm_yes", CONFIRM, "yeah, okay", yes()),
    ("absolutely", "confirm_yes", CONFIRM, "absolutely", yes()),
    ("no_not_yet", "confirm_no", CONFIRM, "no, not yet", no()),
    ("nah_leave_it", "confirm_no", CONFIRM, "nah, leave it", no()),
    ("no_i_dont_want_that", "confirm_no", CONFIRM, "no, I don't want that", no()),
    ("i_dont_think_so", "confirm_no", CONFIRM, "I don't think so", no()),
    ("green_would_be_nice", "polite_choice", COLOUR, "green would be nice", pick("green", "Green")),
    ("lets_go_with_red", "polite_choice", COLOUR, "let's go with red", pick("red", "Red")),
    ("the_third_one", "polite_choice", COLOUR, "the third one", pick("blue", "Blue")),
    (
        "credit_card_would_be_best",
        "polite_choice",
        PAY,
        "credit card would be best",
        pick("credit_card", "Credit card"),
    ),
    ("ill_pay_cash", "polite_choice", PAY, "I'll pay cash", pick("cash", "Cash")),
    ("green_no_blue", "self_correction", COLOUR, "green, no, blue", pick("blue", "Blue")),
    (
        "card_sorry_transfer",
        "self_correction",
        PAY,
        "credit card, sorry, bank transfer",
        pick("bank_transfer", "Bank transfer"),
    ),
    ("put_me_through", "operator", CONFIRM, "put me through to a person", meta("operator")),
    ("what_were_the_options", "repeat", PAY, "what were the options again", meta("repeat")),
    ("just_cancel_it", "cancel", PAY, "just cancel it", meta("cancel")),
    ("seven_two_two_nine", "digits", CODE, "seven two two nine", value("7229")),
    ("code_five_oh_one_three", "digits", CODE, "my code is five oh one three", value("5013")),
    ("eight_eight_four", "digits", CODE, "eight eight four", value("884")),
    ("two_zero_six_one", "digits", CODE, "two zero six one", value("2061")),
    ("one_hundred_and_five", "number", AMOUNT, "one hundred and five", value(105)),
    ("thirty", "number", AMOUNT, "thirty", value(30)),
    ("seven_hundred_dollars", "number", AMOUNT, "seven hundred dollars", value(700)),
    ("two_thousand_five_hundred", "number", AMOUNT, "two thousand five hundred", value(2500)),
    ("orange_please", "out_of_set", COLOUR, "orange please", REJECT),
    ("with_apple_pay", "out_of_set", PAY, "with apple pay", REJECT),
    ("im_in_a_meeting", "unrelated", CONFIRM, "I'm in a meeting", REJECT),
    ("how_long_will_this_take", "unrelated", PAY, "how long will this take", REJECT),
]

# What people told "To go ahead, say confirm, or press 1" answer (issue 17's cost side).
CONFIRMATIONS = {
    "confirm_that": "confirm that",
    "yes_confirmed": "yes, confirmed",
    "ill_confirm": "I'll confirm",
    "please_confirm": "please confirm",
    "confirm_thanks": "confirm, thanks",
}

BABBLE_LINES = (
    "we ran out of milk so somebody needs to go to the shop",
    "the football match last night went into extra time",
    "can you send me the slides before lunch tomorrow",
    "my phone battery dies every afternoon these days",
)


def make_voices() -> dict[str, fg.Voice]:
    return {
        "flite_kal16": fg.flite("kal16"),
        "espeak_lancs_f1": fg.espeak("en-gb-x-gbclan+f1", 155),
        "espeak_us_m7": fg.espeak("en-us+m7", 175),
        "espeak_wmids_f3": fg.espeak("en-gb-x-gbcwmd+f3", 150),
    }


def main() -> int:
    fg.heldout_pair(
        make_voices(),
        fg.babblers((fg.flite("rms"), fg.espeak("en-gb-x-rp+m2", 160)), BABBLE_LINES),
        (OUT, "Fourth held-out set of spoken answers", UTTERANCES),
        (OUT_CONFIRM, "Fourth held-out set of true high-risk confirmations", CONFIRMATIONS),
        "make_heldout4.py",
        CONDITIONS,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
