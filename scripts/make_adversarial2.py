#!/usr/bin/env python3
"""Regenerate the held-out adversarial set: ``audio_fixtures/adversarial2/`` (issue 17).

The first adversarial set (``audio_fixtures/adversarial``) has had its false yeses read and
named in ``bench/results_*.txt``, so a rule written after that is tuned on it. This set is the
measure from then on: the same recipe as ``scripts/make_adversarial.py`` (non-speech; speech
that is not a yes in white noise and babble at 0, 5 and 10 dB; 16 kHz and 8 kHz mu-law), with
new sentences (including near-misses: hedges, hesitations, a word that starts like "yes"), the
four voices of the second held-out set (none in the first adversarial set), new babble lines
and new random seeds. Written and committed before any recogniser heard it.

Needs what ``scripts/make_heldout2.py`` needs. Run from the repository root:
``python scripts/make_adversarial2.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from make_heldout2 import make_voices

OUT = fg.fixtures_root() / "adversarial2"

# (id, category, text, fair reading). Written before any recognition result was seen.
SENTENCES: list[tuple[str, str, str, str]] = [
    ("no_thank_you_not_now", "negation", "no thank you, not right now", "no"),
    ("please_dont", "negation", "please don't", "no"),
    ("i_do_not_agree", "negation", "I do not agree", "no"),
    ("thats_not_right", "negation", "that's not right", "no"),
    ("cancel_it_please", "cancel", "cancel it please", "cancel"),
    ("forget_the_whole_thing", "cancel", "forget the whole thing", "cancel"),
    ("speak_to_someone", "operator", "I need to speak to someone", "operator"),
    ("get_a_manager", "operator", "can I get a manager", "operator"),
    ("how_long_will_this_take", "question", "how long will this take", "reject"),
    ("whats_my_balance", "question", "what's my balance", "reject"),
    ("can_you_hear_me", "question", "can you hear me", "reject"),
    ("who_is_this", "question", "sorry, who is this", "reject"),
    ("yesterday_at_the_bank", "near_miss", "yesterday I went to the bank", "reject"),
    ("i_guess_so_maybe", "near_miss", "I guess so, maybe", "reject"),
    ("okay_wait_hold_on", "near_miss", "okay wait, hold on", "reject"),
    ("let_me_think", "near_miss", "right, let me think about it", "reject"),
]

BABBLE_TEXTS = [
    "the parcel should arrive some time on friday",
    "nobody told me the office would be closed",
    "we walked along the river until it got dark",
    "the printer on the third floor needs more toner",
    "he forgot his umbrella at the restaurant again",
    "the new bus timetable starts next month",
    "my neighbour is building a shed in the garden",
    "the soup was too salty for most of the guests",
]


def main() -> int:
    description = (
        "Held-out adversarial audio (issue 17): nothing here may be read as a yes; never "
        "tuned on; regenerate with scripts/make_adversarial2.py"
    )
    voices = make_voices()
    fg.adversarial_set(
        OUT, SENTENCES, BABBLE_TEXTS, voices, description, seed_prefix="adversarial2:"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
