#!/usr/bin/env python3
"""Regenerate the second held-out set: ``audio_fixtures/heldout2/`` (spoken answers, issue 14)
and ``audio_fixtures/heldout2_confirmations/`` (high-risk confirmations, issue 17).

Why a second set: the first held-out set (``audio_fixtures/heldout``) was measured once and
then, after its figures were reported, its failures were read to choose what to fix next. From
then on it is a development set. This set replaces it as the measure: its phrasings, voices and
noise were written and committed before any recogniser heard them, and nobody reads its
per-file results while tuning. Do not edit the phrasings to make a result look better; add a
new set instead.

Voices (none is used by any other set in ``audio_fixtures``):

- ``festival_ked``: Festival's ``ked_diphone`` (US English male; Debian ``festvox-kdlpc16k``);
- ``espeak_rp_f4``: espeak-ng ``en-gb-x-rp+f4`` (British received pronunciation, female
  variant) at 170 words a minute;
- ``espeak_nyc_m5``: espeak-ng ``en-us-nyc+m5`` at 150 words a minute;
- ``piper_fast``: piper "joe" at length_scale 0.85 (faster than any other set), zero noise.

Conditions of the answers: ``clean``; ``babble`` (10 dB SNR of two-talker babble, a noise no
other answer set uses); ``telephone_8k`` (300-3400 Hz, mu-law, 8 kHz) and ``telephone_16k``
(the same audio upsampled). The confirmations use clean / 10 dB white / 10 dB babble /
telephone 8 kHz, two takes each (take 2: 5 % slower, its own noise), like
``audio_fixtures/confirmations``.

Needs Debian's ``espeak-ng``, ``festival`` and ``festvox-kdlpc16k``, and the ``speech`` extra.
Run from the repository root: ``python scripts/make_heldout2.py``. Seeds come from file
names, so a rerun gives identical files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import AMOUNT, CODE, COLOUR, CONFIRM, PAY, REJECT, meta, no, pick, value, yes

OUT = fg.fixtures_root() / "heldout2"
OUT_CONFIRM = fg.fixtures_root() / "heldout2_confirmations"

# (id, category, spec, text, expected). Written before any recognition result was seen.
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_thats_fine", "confirm_yes", CONFIRM, "yes that's fine", yes()),
    ("okay_do_it", "confirm_yes", CONFIRM, "okay do it", yes()),
    ("alright_go_ahead", "confirm_yes", CONFIRM, "alright, go ahead with it", yes()),
    ("yes_correct", "confirm_yes", CONFIRM, "yes, correct", yes()),
    ("no_stop", "confirm_no", CONFIRM, "no, stop", no()),
    ("no_not_today", "confirm_no", CONFIRM, "no, not today", no()),
    ("changed_my_mind", "confirm_no", CONFIRM, "no, I changed my mind", no()),
    ("definitely_not", "confirm_no", CONFIRM, "definitely not", no()),
    ("blue_please", "polite_choice", COLOUR, "blue please", pick("blue", "Blue")),
    (
        "um_green_i_guess",
        "polite_choice",
        COLOUR,
        "um, the green one I guess",
        pick("green", "Green"),
    ),
    ("the_second_option", "polite_choice", COLOUR, "the second option", pick("green", "Green")),
    ("pay_with_cash", "polite_choice", PAY, "I'd like to pay with cash", pick("cash", "Cash")),
    (
        "credit_card_please",
        "polite_choice",
        PAY,
        "credit card, please",
        pick("credit_card", "Credit card"),
    ),
    ("green_sorry_red", "self_correction", COLOUR, "green, sorry, I mean red", pick("red", "Red")),
    ("transfer_no_cash", "self_correction", PAY, "bank transfer, no, cash", pick("cash", "Cash")),
    ("talk_to_an_agent", "operator", CONFIRM, "let me talk to an agent", meta("operator")),
    ("what_was_the_question", "repeat", COLOUR, "sorry, what was the question", meta("repeat")),
    ("say_that_again", "repeat", PAY, "can you say that again", meta("repeat")),
    ("cancel_everything", "cancel", CONFIRM, "stop, cancel everything", meta("cancel")),
    ("zero_nine_eight_one", "digits", CODE, "zero nine eight one", value("0981")),
    ("pin_two_oh_oh_five", "digits", CODE, "my pin is two oh oh five", value("2005")),
    ("five_five_five_two", "digits", CODE, "five five five two", value("5552")),
    ("its_seven_three_nine", "digits", CODE, "it's seven three nine", value("739")),
    ("three_hundred_and_twenty", "number", AMOUNT, "three hundred and twenty", value(320)),
    ("one_thousand_five_hundred", "number", AMOUNT, "one thousand five hundred", value(1500)),
    ("ninety_nine", "number", AMOUNT, "ninety nine", value(99)),
    ("eighty_dollars", "number", AMOUNT, "eighty dollars", value(80)),
    ("black_please", "out_of_set", COLOUR, "black please", REJECT),
    ("the_pink_one", "out_of_set", COLOUR, "the pink one", REJECT),
    ("by_cheque", "out_of_set", PAY, "by cheque", REJECT),
    ("driving_right_now", "unrelated", CONFIRM, "I'm driving right now", REJECT),
    ("where_is_my_package", "unrelated", PAY, "where is my package", REJECT),
]

# What people told "To go ahead, say confirm, or press 1" answer (issue 17's cost side).
CONFIRMATIONS = {
    "confirm_please": "confirm please",
    "yes_i_confirm_that": "yes, I confirm that",
    "i_approve_it": "I approve it",
    "confirm_the_transfer": "confirm the transfer",
    "okay_confirmed": "okay, confirmed",
}

VOICES = ("festival_ked", "espeak_rp_f4", "espeak_nyc_m5", "piper_fast")
CONDITIONS = ("clean", "babble", "telephone_8k", "telephone_16k")
CONFIRM_CONDITIONS = fg.TAKE_CONDITIONS
# Babble talkers: the tuning voices (flite slt, espeak-ng en-us), lines no set says.
BABBLE_LINES = (
    "did anyone see where I left my keys this morning",
    "the new coffee machine on the second floor is broken again",
    "we will need the numbers before the end of the quarter",
    "my sister is visiting us next weekend with the kids",
)


def make_voices() -> dict[str, fg.Voice]:
    return {
        "festival_ked": fg.festival("ked_diphone"),
        "espeak_rp_f4": fg.espeak("en-gb-x-rp+f4", 170),
        "espeak_nyc_m5": fg.espeak("en-us-nyc+m5", 150),
        "piper_fast": fg.piper(0.85),
    }


def main() -> int:
    fg.heldout_pair(
        make_voices(),
        fg.babblers((fg.flite("slt"), fg.espeak("en-us", 150)), BABBLE_LINES),
        (OUT, "Second held-out set of spoken answers (issue 14)", UTTERANCES),
        (OUT_CONFIRM, "Held-out true high-risk confirmations (issue 17)", CONFIRMATIONS),
        "make_heldout2.py",
        CONDITIONS,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
