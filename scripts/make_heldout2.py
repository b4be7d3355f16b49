#!/usr/bin/env python3
"""Regenerate the second held-out set: ``audio_fixtures/heldout2/`` (spoken answers, issue 14)
and ``audio_fixtures/heldout2_confirmations/`` (high-risk confirmations, issue 17).

Why a second set: the first held-out set (``audio_fixtures/heldout``) was measured once and
then, after its figures were reported, its failures were read to choose what to fix next. From
then on it is a development set. This set replaces it as the measure: its phrasings, voices and
noise were written and committed before any recogniser heard them, and nobody reads its
per-file results while tuning. Do not edit the phrasings to make a result look better; add a
new set instead.

Voices (none is used by any other set in ``audio_fixtures``):

- ``festival_ked``: Festival's ``ked_diphone`` (US English male; Debian ``festvox-kdlpc16k``);
- ``espeak_rp_f4``: espeak-ng ``en-gb-x-rp+f4`` (British received pronunciation, female
  variant) at 170 words a minute;
- ``espeak_nyc_m5``: espeak-ng ``en-us-nyc+m5`` at 150 words a minute;
- ``piper_fast``: piper "joe" at length_scale 0.85 (faster than any other set), zero noise.

Conditions of the answers: ``clean``; ``babble`` (10 dB SNR of two-talker babble, a noise no
other answer set uses); ``telephone_8k`` (300-3400 Hz, mu-law, 8 kHz) and ``telephone_16k``
(the same audio upsampled). The confirmations use clean / 10 dB white / 10 dB babble /
telephone 8 kHz, two takes each (take 2: 5 % slower, its own noise), like
``audio_fixtures/confirmations``.

Needs Debian's ``espeak-ng``, ``festival`` and ``festvox-kdlpc16k``, and the ``speech`` extra.
Run from the repository root: ``python scripts/make_heldout2.py``. Seeds come from file
names, so a rerun gives identical files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_confirmations import PiperVoice, _speech
from make_confirmations import render as confirmation_render
from make_fixtures import (
    AMOUNT,
    CODE,
    COLOUR,
    CONFIRM,
    PAY,
    REJECT,
    _read_wav,
    _rng,
    meta,
    no,
    pick,
    value,
    yes,
)
from make_heldout import espeak_voice, flite_voice, render, write_flac

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "audio_fixtures" / "heldout2"
OUT_CONFIRM = ROOT / "audio_fixtures" / "heldout2_confirmations"
RATE = 16_000
LEAD_S = 0.3

# (id, category, spec, text, expected). Written before any recognition result was seen.
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes_thats_fine", "confirm_yes", CONFIRM, "yes that's fine", yes()),
    ("okay_do_it", "confirm_yes", CONFIRM, "okay do it", yes()),
    ("alright_go_ahead", "confirm_yes", CONFIRM, "alright, go ahead with it", yes()),
    ("yes_correct", "confirm_yes", CONFIRM, "yes, correct", yes()),
    ("no_stop", "confirm_no", CONFIRM, "no, stop", no()),
    ("no_not_today", "confirm_no", CONFIRM, "no, not today", no()),
    ("changed_my_mind", "confirm_no", CONFIRM, "no, I changed my mind", no()),
    ("definitely_not", "confirm_no", CONFIRM, "definitely not", no()),
    ("blue_please", "polite_choice", COLOUR, "blue please", pick("blue", "Blue")),
    (
        "um_green_i_guess",
        "polite_choice",
        COLOUR,
        "um, the green one I guess",
        pick("green", "Green"),
    ),
    ("the_second_option", "polite_choice", COLOUR, "the second option", pick("green", "Green")),
    ("pay_with_cash", "polite_choice", PAY, "I'd like to pay with cash", pick("cash", "Cash")),
    (
        "credit_card_please",
        "polite_choice",
        PAY,
        "credit card, please",
        pick("credit_card", "Credit card"),
    ),
    ("green_sorry_red", "self_correction", COLOUR, "green, sorry, I mean red", pick("red", "Red")),
    ("transfer_no_cash", "self_correction", PAY, "bank transfer, no, cash", pick("cash", "Cash")),
    ("talk_to_an_agent", "operator", CONFIRM, "let me talk to an agent", meta("operator")),
    ("what_was_the_question", "repeat", COLOUR, "sorry, what was the question", meta("repeat")),
    ("say_that_again", "repeat", PAY, "can you say that again", meta("repeat")),
    ("cancel_everything", "cancel", CONFIRM, "stop, cancel everything", meta("cancel")),
    ("zero_nine_eight_one", "digits", CODE, "zero nine eight one", value("0981")),
    ("pin_two_oh_oh_five", "digits", CODE, "my pin is two oh oh five", value("2005")),
    ("five_five_five_two", "digits", CODE, "five five five two", value("5552")),
    ("its_seven_three_nine", "digits", CODE, "it's seven three nine", value("739")),
    ("three_hundred_and_twenty", "number", AMOUNT, "three hundred and twenty", value(320)),
    ("one_thousand_five_hundred", "number", AMOUNT, "one thousand five hundred", value(1500)),
    ("ninety_nine", "number", AMOUNT, "ninety nine", value(99)),
    ("eighty_dollars", "number", AMOUNT, "eighty dollars", value(80)),
    ("black_please", "out_of_set", COLOUR, "black please", REJECT),
    ("the_pink_one", "out_of_set", COLOUR, "the pink one", REJECT),
    ("by_cheque", "out_of_set", PAY, "by cheque", REJECT),
    ("driving_right_now", "unrelated", CONFIRM, "I'm driving right now", REJECT),
    ("where_is_my_package", "unrelated", PAY, "where is my package", REJECT),
]

# What people told "To go ahead, say confirm, or press 1" answer (issue 17's cost side).
CONFIRMATIONS = {
    "confirm_please": "confirm please",
    "yes_i_confirm_that": "yes, I confirm that",
    "i_approve_it": "I approve it",
    "confirm_the_transfer": "confirm the transfer",
    "okay_confirmed": "okay, confirmed",
}

VOICES = ("festival_ked", "espeak_rp_f4", "espeak_nyc_m5", "piper_fast")
CONDITIONS = ("clean", "babble", "telephone_8k", "telephone_16k")
CONFIRM_CONDITIONS = ("clean", "white10", "babble10", "telephone")
# Babble talkers: the tuning voices (flite slt, espeak-ng en-us), lines no set says.
BABBLE_LINES = (
    "did anyone see where I left my keys this morning",
    "the new coffee machine on the second floor is broken again",
    "we will need the numbers before the end of the quarter",
    "my sister is visiting us next weekend with the kids",
)


def festival(text: str) -> tuple[np.ndarray, int]:
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "in.txt", Path(tmp) / "out.wav"
        source.write_text(text + "\n")
        subprocess.run(
            ["text2wave", "-eval", "(voice_ked_diphone)", str(source), "-o", str(out)],
            check=True,
            capture_output=True,
        )
        return _read_wav(out)


def make_voices() -> dict[str, Any]:
    return {
        "festival_ked": festival,
        "espeak_rp_f4": espeak_voice("en-gb-x-rp+f4", 170),
        "espeak_nyc_m5": espeak_voice("en-us-nyc+m5", 150),
        "piper_fast": PiperVoice(0.85),
    }


def make_babblers() -> list[np.ndarray]:
    talkers = [flite_voice("slt"), espeak_voice("en-us", 150)]
    return [_speech(talkers[i % 2], line, 1.0) for i, line in enumerate(BABBLE_LINES)]


def _babble(n: int, babblers: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Two talkers at once, each from a random point of its line, unit RMS."""
    out = np.zeros(n)
    for b in rng.choice(len(babblers), size=2, replace=False):
        line = babblers[int(b)]
        start = int(rng.integers(0, len(line)))
        out += np.resize(np.roll(line, -start), n) * rng.uniform(0.7, 1.0)
    return out / np.sqrt(np.mean(out**2))


def render_answer(
    speech: np.ndarray, condition: str, name: str, babblers: list[np.ndarray]
) -> tuple[np.ndarray, int]:
    """The first held-out set's clean and telephone conditions; babble instead of its noise."""
    if condition != "babble":
        return render(speech, condition, name)
    pad = np.zeros(int(RATE * LEAD_S))
    x = np.concatenate([pad, speech, pad])
    return x + _babble(len(x), babblers, _rng(name)) * 10 ** (-30 / 20), RATE


def render_confirmation(
    speech: np.ndarray, condition: str, name: str, babblers: list[np.ndarray]
) -> tuple[np.ndarray, int]:
    """The tuning confirmations' conditions, with this set's two-talker babble."""
    return confirmation_render(speech, condition, name, babblers, babble=_babble)


def _write_manifest(
    folder: Path, what: str, conditions: tuple[str, ...], entries: list[dict[str, Any]]
) -> None:
    manifest = {
        "description": f"{what}, never tuned on; regenerate with scripts/make_heldout2.py",
        "voices": list(VOICES),
        "conditions": list(conditions),
        "fixtures": entries,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def answers(voices: dict[str, Any], babblers: list[np.ndarray]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    for uid, category, spec, text, expected in UTTERANCES:
        for voice in VOICES:
            speech = _speech(voices[voice], text, 1.0)
            for condition in CONDITIONS:
                name = f"{uid}__{voice}__{condition}.flac"
                x, rate = render_answer(speech, condition, name, babblers)
                write_flac(OUT / name, x, rate)
                entries.append(
                    {
                        "file": name,
                        "id": uid,
                        "voice": voice,
                        "condition": condition,
                        "sample_rate": rate,
                        "category": category,
                        "text": text,
                        "spec": spec,
                        "expected": expected,
                    }
                )
        print(f"{uid}: done", file=sys.stderr)
    _write_manifest(OUT, "Second held-out set of spoken answers (issue 14)", CONDITIONS, entries)


def confirmations(voices: dict[str, Any], babblers: list[np.ndarray]) -> None:
    OUT_CONFIRM.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    for pid, text in CONFIRMATIONS.items():
        for voice in VOICES:
            for take, speed in ((1, 1.0), (2, 0.95)):
                speech = _speech(voices[voice], text, speed)
                for condition in CONFIRM_CONDITIONS:
                    name = f"{pid}__{voice}__{condition}__{take}.flac"
                    x, rate = render_confirmation(speech, condition, name, babblers)
                    write_flac(OUT_CONFIRM / name, x, rate)
                    entries.append(
                        {
                            "file": name,
                            "id": pid,
                            "voice": voice,
                            "condition": condition,
                            "take": take,
                            "sample_rate": rate,
                            "category": "challenge",
                            "text": text,
                            "spec": {
                                "tool": "ConfirmAction",
                                "arguments": {"action": "move 500 dollars to savings"},
                            },
                            "expected": yes(),
                        }
                    )
        print(f"{pid}: done", file=sys.stderr)
    what = "Held-out true high-risk confirmations (issue 17)"
    _write_manifest(OUT_CONFIRM, what, CONFIRM_CONDITIONS, entries)


def main() -> int:
    voices = make_voices()
    babblers = make_babblers()
    answers(voices, babblers)
    confirmations(voices, babblers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
