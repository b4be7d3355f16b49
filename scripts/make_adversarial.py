#!/usr/bin/env python3
"""Regenerate the adversarial set in ``audio_fixtures/adversarial/`` (issue 17).

Every entry asks a ConfirmAction question and expects a reject: nothing in this set may be read
as a yes. (For the speech categories a "no", a cancel or an operator request would be a fair
reading too; the manifest's ``"fair"`` field names it. The bench counts yeses and any answer
separately.)

Contents:

- ``nonspeech``: white noise, pink noise, clicks, synthetic coughs (noise bursts shaped by a
  formant filter and a fast-attack envelope), babble (3-6 overlapping TTS voices saying
  unrelated sentences) and near silence, each in several levels/seeds;
- speech that is not affirmative: ``negation``, ``cancel``, ``operator`` and ``question``
  sentences, each spoken by two voices (rotating over four), mixed with white noise and with
  babble at 0, 5 and 10 dB SNR.

Every file exists at 16 kHz PCM16 (``rate`` 16000) and as an 8 kHz G.711 mu-law round trip
decoded back to PCM16 and stored at 8 kHz (``rate`` 8000). 16-bit FLAC, 0.3 s lead and trail,
every random generator seeded from the file name.

Run from the repository root::

    /work/venv/bin/python scripts/make_adversarial.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg

OUT = fg.fixtures_root() / "adversarial"

# (id, category, text, fair reading)
SENTENCES: list[tuple[str, str, str, str]] = [
    ("no_absolutely_not", "negation", "no, absolutely not", "no"),
    ("dont_do_it", "negation", "don't do it", "no"),
    ("i_said_no", "negation", "I said no", "no"),
    ("i_dont_want_that", "negation", "no, I don't want that", "no"),
    ("cancel_whole_thing", "cancel", "cancel the whole thing", "cancel"),
    ("stop_never_mind", "cancel", "stop, never mind", "cancel"),
    ("talk_to_a_human", "operator", "let me talk to a human", "operator"),
    ("get_me_an_agent", "operator", "get me an agent please", "operator"),
    ("what_time_is_it", "question", "what time is it", "reject"),
    ("how_much_cost", "question", "how much will that cost", "reject"),
    ("rain_today", "question", "is it going to rain today", "reject"),
    ("who_am_i_speaking_with", "question", "who am I speaking with", "reject"),
]

# Unrelated sentences for babble (never the target sentences).
BABBLE_TEXTS = [
    "the meeting was moved to thursday afternoon",
    "she bought three loaves of bread at the market",
    "my brother lives near the old railway station",
    "they painted the kitchen last weekend",
    "the library closes early during the holidays",
    "we should water the plants before leaving",
    "his car needed new tyres after the trip",
    "the children played football in the park",
]

VOICES = ("piper_slow", "flite_rms", "espeak_gb", "flite_slt")


def make_voices() -> dict[str, fg.Voice]:
    return {
        "piper_slow": fg.piper(1.25),
        "flite_rms": fg.flite("rms"),
        "espeak_gb": fg.espeak("en-gb+m3", 165),
        "flite_slt": fg.flite("slt"),
    }


def main() -> int:
    description = (
        "Adversarial audio (issue 17): nothing here may be read as a yes; "
        "regenerate with scripts/make_adversarial.py"
    )
    fg.adversarial_set(OUT, SENTENCES, BABBLE_TEXTS, make_voices(), description)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
