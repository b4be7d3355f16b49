"""A spoken one-time code (issue 32): the challenge nobody says by accident.

`code_answered` is held to the same rule as `said_alone`: every reading says the code's digits
in order and nothing that does not go with them. Table-driven: the forms a person (or Whisper)
writes the code in, and the shapes that must never pass, each with the reason it names.
"""

from __future__ import annotations

import itertools

import pytest

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._risk import EvidencePolicy, weigh_yes
from voice_hitl.speech import AudioQuality
from voice_hitl.speech._challenge import QUESTION_BACK
from voice_hitl.speech._code import (
    CODE_NOT_SAID,
    NOT_THE_CODE,
    check_code,
    code_answered,
    digits_in,
    draw_code,
    speak_code,
)
from voice_hitl.speech._near_miss import Competition

CODE = "472"
CLEAN = AudioQuality(speech_ms=600, speech_probability=0.95, snr_db=30.0, clipped=0.0)

THE_CODE = [
    "472",
    "4 7 2",
    "4-7-2",
    "4, 7, 2",
    "4,7,2",
    "Four, seven, two.",
    "four seven two",
    "four seventy-two",
    "four seventy two",
    "forty-seven two",
    # homophones inside a run of digits
    "for seven two",
    "four seven to",
    "four seven too",
    # what may stand beside it
    "the code is 472",
    "The code is four, seven, two.",
    "it's 472",
    "it is four seven two",
    "code: 4 7 2",
    "uh, 472",
    "four seven two, please",
    "yes, 472",
    "okay, four seven two, thank you",
    "oh, four seven two",
]

NOT_THE_CODE_SHAPES = [
    ("473", NOT_THE_CODE),  # a wrong code
    ("four seven", NOT_THE_CODE),  # a partial code
    ("4 7 2 2", NOT_THE_CODE),  # an extra digit
    ("472 472", NOT_THE_CODE),  # said twice
    ("2 7 4", NOT_THE_CODE),  # out of order
    ("472 at 5 pm", NOT_THE_CODE),  # a time
    ("move 500 dollars", NOT_THE_CODE),  # another number
    ("I want to 4 7 2", NOT_THE_CODE),  # a homophone that joins the run
    ("confirm", CODE_NOT_SAID),
    ("yes please", CODE_NOT_SAID),
    ("", CODE_NOT_SAID),
    ("is it 472?", QUESTION_BACK),  # a question back
    ("four seven two?", QUESTION_BACK),
    ("not 472", "the code was not said alone (also heard: not)"),  # a negation
    ("472, ask Bob first", "the code was not said alone (also heard: ask, bob, first)"),
    ("what is 472", "the code was not said alone (also heard: what, is)"),
    ("472, confirm", "the code was not said alone (also heard: confirm)"),
    ("four hundred seventy two", "the code was not said alone (also heard: hundred)"),
    ("472 is the code", "the code was not said alone (also heard: is, the, code)"),
]


@pytest.mark.parametrize("said", THE_CODE)
def test_the_code_in_the_forms_people_say_it(said: str) -> None:
    assert code_answered([said], CODE) == (True, ""), said
    assert digits_in(said).endswith(CODE)


@pytest.mark.parametrize(("said", "why"), NOT_THE_CODE_SHAPES)
def test_anything_else_is_no_answer_and_the_reason_says_which(said: str, why: str) -> None:
    assert code_answered([said], CODE) == (False, why)


@pytest.mark.parametrize(("said", "why"), NOT_THE_CODE_SHAPES)
def test_whichever_reading_holds_it(said: str, why: str) -> None:
    # the understood text says the code, the words as heard (another pass) do not
    assert code_answered(["472", said], CODE) == (False, why)
    assert code_answered([said, "four seven two"], CODE) == (False, why)
    assert code_answered([], CODE) == (False, CODE_NOT_SAID)


def test_a_zero_and_a_leading_oh() -> None:
    assert code_answered(["oh four seven"], "047") == (True, "")
    assert code_answered(["zero four seven"], "047") == (True, "")
    assert code_answered(["oh, oh four seven"], "047") == (True, "")
    assert code_answered(["four oh two"], "402") == (True, "")
    assert code_answered(["four oh two"], "42") == (False, NOT_THE_CODE)


def test_drawing_phrasing_and_checking_codes() -> None:
    for _ in range(200):
        code = draw_code(4)
        assert len(code) == 4 and code.isdigit()
        assert all(a != b for a, b in itertools.pairwise(code)), code
    assert speak_code("407") == "four, zero, seven"
    assert check_code("472", 3) == "472"
    for bad in ("47", "4721", "4a2", "٤٧٢", 472, None):
        with pytest.raises(ValueError, match=r"a challenge code must be 3 digits \(0-9\), got"):
            check_code(bad, 3)


def test_the_policy_draws_validated_codes() -> None:
    assert EvidencePolicy().challenge == "word"
    policy = EvidencePolicy(challenge="code", code_digits=4)
    assert len(policy.new_code()) == 4
    assert EvidencePolicy(challenge="code", codes=lambda: "905").new_code() == "905"
    with pytest.raises(ValueError, match=r"must be 3 digits \(0-9\), got '9a5'"):
        EvidencePolicy(challenge="code", codes=lambda: "9a5").new_code()
    with pytest.raises(ValueError, match=r"must be 3 digits \(0-9\), got '95'"):
        EvidencePolicy(challenge="code", codes=lambda: "95").new_code()
    for digits in (1, 7, True, 3.0):
        with pytest.raises(ValueError, match="code_digits must be an integer from 2 to 6"):
            EvidencePolicy(code_digits=digits)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="challenge must be 'word' or 'code', got 'pin'"):
        EvidencePolicy(challenge="pin")  # type: ignore[arg-type]


CODE_POLICY = EvidencePolicy(challenge="code")


def test_weighing_a_code_answer() -> None:
    good = Heard("speech", "472", transcript="Four, seven, two.", confidence=0.95, quality=CLEAN)
    verdict = weigh_yes(good, CODE_POLICY, code=CODE)
    assert verdict.accepted and verdict.layers == {
        "challenge": "passed", "confidence": "passed", "audio": "passed", "speaker": "passed"
    }  # fmt: skip
    # the near-miss layer is the word's: not applicable to a code, not "unmeasured"
    scored = Heard(
        "speech", "472", transcript="472", confidence=0.95, quality=CLEAN,
        competition=Competition("472", "confront", -1.0),
    )  # fmt: skip
    assert weigh_yes(scored, CODE_POLICY, code=CODE).layers == verdict.layers
    # the challenge word is no answer to a code challenge, nor a code to the word's
    word = Heard("speech", "confirm", transcript="confirm", confidence=0.95, quality=CLEAN)
    assert weigh_yes(word, CODE_POLICY, code=CODE).reason == CODE_NOT_SAID
    assert not weigh_yes(good).accepted
    # no code asked: nothing passes
    missing = weigh_yes(good, CODE_POLICY)
    assert (missing.accepted, missing.reason) == (False, "no code was asked for")
    wrong = weigh_yes(good, CODE_POLICY, code="518")
    assert (wrong.accepted, wrong.retry, wrong.reason) == (False, "challenge", NOT_THE_CODE)
    sentence = Heard("speech", "472 tomorrow", transcript="472 tomorrow", confidence=0.95)
    assert weigh_yes(sentence, CODE_POLICY, code=CODE).retry == "alone"
    question = Heard("speech", "472?", transcript="472?", confidence=0.95, quality=CLEAN)
    assert weigh_yes(question, CODE_POLICY, code=CODE).reason == QUESTION_BACK
    # unmeasured layers: a second answer (to a new code) is needed, as for the word
    provider = weigh_yes(Heard("speech", "472"), CODE_POLICY, code=CODE)
    assert (provider.accepted, provider.retry) == (False, "repeat")
    assert weigh_yes(Heard("speech", "518"), CODE_POLICY, code="518", repeated=True).accepted
