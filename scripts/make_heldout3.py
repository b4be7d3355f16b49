#!/usr/bin/env python3
"""Regenerate the third held-out set: ``audio_fixtures/heldout3/`` (spoken answers, issue 14)
and ``audio_fixtures/heldout3_confirmations/`` (high-risk confirmations, issue 17).

Why a third set: ``heldout2`` was never tuned on, but by the end of 2026-12-04 it had been run
five times (once per design and once per machine), so its figures were no longer a first
reading. This set was written in one sitting, committed, and then measured: once for the code
as it stood (commit a012e03) and once per later design. Its per-file results are not read
while designing. Do not edit the phrasings to make a result look better; add a new set instead.

Voices (no other answer set uses any of them):

- ``festival_slt_hts``: Festival's HTS voice ``cmu_us_slt_arctic_hts`` (US English female,
  Debian ``festvox-us-slt-hts``). The tuning set's flite "slt" is the same speaker's
  recordings, but a different synthesis method (statistical parametric, not clustergen);
- ``festival_kal``: Festival's ``kal_diphone`` (US English male, Debian ``festvox-kallpc16k``;
  the tuning confirmations' flite "kal" is the same diphone speaker, no answer set uses it);
- ``espeak_scot_m3``: espeak-ng ``en-gb-scotland+m3`` at 160 words a minute;
- ``espeak_029_f2``: espeak-ng ``en-029+f2`` (Caribbean English, female variant) at 145.

Conditions of the answers: ``clean``; ``white10`` (10 dB SNR white noise); ``babble``
(10 dB SNR of two-talker babble by voices and lines no other set uses); ``telephone_8k``
(300-3400 Hz, mu-law, 8 kHz) and ``telephone_16k`` (the same audio upsampled). The
confirmations use clean / 10 dB white / 10 dB babble / telephone 8 kHz, two takes each
(take 2: 5 % slower, its own noise), like ``audio_fixtures/confirmations``.

Needs Debian's ``espeak-ng``, ``flite``, ``festival``, ``festvox-us-slt-hts`` and
``festvox-kallpc16k``, and the ``speech`` extra. Run from the repository root:
``python scripts/make_heldout3.py``. Seeds come from file names, so a rerun gives identical
files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import AMOUNT, CODE, COLOUR, CONFIRM, PAY, REJECT, meta, no, pick, value, yes

OUT = fg.fixtures_root() / "heldout3"
OUT_CONFIRM = fg.fixtures_root() / "heldout3_confirmations"

# (id, category, spec, text, expected). Written before any recognition result was seen.
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_go_on", "confirm_yes", CONFIRM, "yes, go on", yes()),
    ("sure_do_it", "confirm_yes", CONFIRM, "sure, do it", yes()),
    ("yeah_thats_right", "confirm_yes", CONFIRM, "yeah, that's right", yes()),
    ("okay_yes", "confirm_yes", CONFIRM, "okay, yes", yes()),
    ("no_leave_it", "confirm_no", CONFIRM, "no, leave it", no()),
    ("no_please_dont", "confirm_no", CONFIRM, "no, please don't", no()),
    ("not_now_thanks", "confirm_no", CONFIRM, "not now, thanks", no()),
    ("no_dont_do_it", "confirm_no", CONFIRM, "no, don't do it", no()),
    ("red_i_think", "polite_choice", COLOUR, "red, I think", pick("red", "Red")),
    ("i_will_take_blue", "polite_choice", COLOUR, "I'll take blue", pick("blue", "Blue")),
    ("the_first_one", "polite_choice", COLOUR, "the first one", pick("red", "Red")),
    ("cash_is_fine", "polite_choice", PAY, "cash is fine", pick("cash", "Cash")),
    (
        "by_bank_transfer",
        "polite_choice",
        PAY,
        "by bank transfer please",
        pick("bank_transfer", "Bank transfer"),
    ),
    ("blue_actually_red", "self_correction", COLOUR, "blue, actually, red", pick("red", "Red")),
    (
        "cash_no_credit_card",
        "self_correction",
        PAY,
        "cash, no wait, credit card",
        pick("credit_card", "Credit card"),
    ),
    ("speak_to_a_human", "operator", PAY, "I want to speak to a human", meta("operator")),
    ("pardon_repeat", "repeat", COLOUR, "pardon, could you repeat that", meta("repeat")),
    ("never_mind_cancel_it", "cancel", CONFIRM, "never mind, cancel it", meta("cancel")),
    ("one_one_seven_six", "digits", CODE, "one one seven six", value("1176")),
    ("code_eight_oh_six_two", "digits", CODE, "the code is eight oh six two", value("8062")),
    ("three_five_nine", "digits", CODE, "three five nine", value("359")),
    ("zero_four_four_eight", "digits", CODE, "zero four four eight", value("0448")),
    ("four_hundred_and_ten", "number", AMOUNT, "four hundred and ten", value(410)),
    ("sixty_five", "number", AMOUNT, "sixty five", value(65)),
    ("two_thousand", "number", AMOUNT, "two thousand dollars", value(2000)),
    ("fifteen", "number", AMOUNT, "fifteen", value(15)),
    ("the_white_one", "out_of_set", COLOUR, "the white one", REJECT),
    ("with_paypal", "out_of_set", PAY, "with paypal", REJECT),
    ("is_it_raining", "unrelated", CONFIRM, "is it raining outside", REJECT),
    ("my_dog_is_barking", "unrelated", COLOUR, "sorry, my dog is barking", REJECT),
]

# What people told "To go ahead, say confirm, or press 1" answer (issue 17's cost side).
CONFIRMATIONS = {
    "confirm": "confirm",
    "yes_confirm": "yes, confirm",
    "i_confirm": "I confirm",
    "confirm_it_please": "confirm it, please",
    "confirmed_go_ahead": "confirmed, go ahead",
}

VOICES = ("festival_slt_hts", "festival_kal", "espeak_scot_m3", "espeak_029_f2")
CONDITIONS = fg.ANSWER_CONDITIONS
CONFIRM_CONDITIONS = fg.TAKE_CONDITIONS
# Babble talkers: voices no answer set uses as a speaker, lines no set says.
BABBLE_LINES = (
    "the printer on the third floor keeps jamming every single morning",
    "I think we should leave early to beat the traffic tonight",
    "has anybody booked the meeting room for thursday afternoon",
    "she told me the bakery on the corner closes at six",
)


def make_voices() -> dict[str, fg.Voice]:
    return {
        "festival_slt_hts": fg.festival("cmu_us_slt_arctic_hts"),
        "festival_kal": fg.festival("kal_diphone"),
        "espeak_scot_m3": fg.espeak("en-gb-scotland+m3", 160),
        "espeak_029_f2": fg.espeak("en-029+f2", 145),
    }


def main() -> int:
    fg.heldout_pair(
        make_voices(),
        fg.babblers((fg.flite("awb"), fg.espeak("en-gb-x-gbcwmd+m4", 155)), BABBLE_LINES),
        (OUT, "Third held-out set of spoken answers (issue 14)", UTTERANCES),
        (
            OUT_CONFIRM,
            "Third held-out set of true high-risk confirmations (issue 17)",
            CONFIRMATIONS,
        ),
        "make_heldout3.py",
        CONDITIONS,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
