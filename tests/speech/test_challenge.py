"""A challenge answer is the challenge word said alone (issue 32, item 1).

Table-driven from the shapes that approved at the high tier on audio nobody here had heard:
sentences that use the word as a verb inside something else, refusals and questions back that
hold it, and noise or numbers heard with it among other words. Each must fail the challenge
layer, whichever reading holds the extra words, and with or without audio figures.
"""

from __future__ import annotations

import pytest

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.responder._risk import weigh_yes
from voice_hitl.speech import AnswerSpec, AudioQuality, NoMatch
from voice_hitl.speech._challenge import QUESTION_BACK, challenge_extras, said_alone
from voice_hitl.speech._text import tokens

CLEAN = AudioQuality(speech_ms=600, speech_probability=0.95, snr_db=30.0, clipped=0.0)
CONFIRM = AnswerSpec.confirm(default=None)

NOT_AN_ANSWER = [
    # a request to wait
    "I'd like to confirm it tomorrow",
    "can I confirm tomorrow",
    "confirm it later",
    "I will confirm next week",
    "confirm in an hour",
    # check with someone first
    "check with my wife first, then confirm",
    "I need to ask my manager before I approve",
    "let my accountant confirm",
    # confirm a different thing first
    "confirm the amount first",
    "first confirm the account number",
    "I want to confirm the address",
    # questions back
    "why do I need to confirm",
    "what am I confirming, do I confirm",
    "who approved this",
    "approved by whom",
    "should I confirm",
    "do I say confirm",
    # refusals that hold the word
    "I don't confirm",
    "I will not approve this",
    "no, don't confirm",
    "I refuse to approve",
    # noise and numbers heard with the word
    "and confirm the ... ok",
    "and confirm the agent ok",
    "approve, and 4072",
    "approve and 5",
    "confirm 500",
    "I'd like an agent, confirm",
    "go and confirm",
    "I'll confirm later",
    "I do not confirm",
    "confirm the transfer",
    "thank you, who approved",
]

AN_ANSWER = [
    "confirm",
    "Confirm.",
    "confirmed",
    "approve",
    "approved",
    "confirm, please",
    "uh, confirm",
    "um confirm",
    "yes, confirm",
    "yeah, approve",
    "okay, confirm",
    "I confirm",
    "I approve",
    "confirm it",
    "confirm that",
    "confirm, thank you",
    "yeah, go ahead, I confirm",
    "I'll confirm",
    "I do confirm",
]


@pytest.mark.parametrize("said", NOT_AN_ANSWER)
def test_the_word_among_other_words_is_never_an_approval(said: str) -> None:
    assert challenge_extras(tokens(said)), said
    heard = Heard("speech", said, transcript=said, confidence=0.99, quality=CLEAN)
    verdict = weigh_yes(heard)
    assert not verdict.accepted
    assert verdict.layers["challenge"] == "failed"
    assert verdict.retry == "alone"


@pytest.mark.parametrize(
    "said", [s for s in NOT_AN_ANSWER if not set(tokens(s)) & {"no", "not", "refuse", "ok"}]
)
def test_the_word_in_a_sentence_is_no_yes_at_the_low_tier_either(said: str) -> None:
    understood = understand_heard(Heard("speech", said, transcript=said), CONFIRM)
    assert getattr(understood, "value", None) is not True, said


@pytest.mark.parametrize("said", NOT_AN_ANSWER)
def test_whichever_reading_holds_the_extra_words(said: str) -> None:
    # a recogniser mapped the words onto "confirm" (text), but heard a sentence (transcript)
    mapped = Heard("speech", "confirm", transcript=said, confidence=0.99, quality=CLEAN)
    assert weigh_yes(mapped).layers["challenge"] == "failed"
    # a provider transcript: no figures at all, only the words
    provider = Heard("speech", said, transcript=said)
    assert weigh_yes(provider).layers["challenge"] == "failed"
    assert not weigh_yes(provider).accepted


@pytest.mark.parametrize("said", AN_ANSWER)
def test_the_word_alone_with_fillers_politeness_or_a_yes(said: str) -> None:
    assert said_alone([said]) == (True, "")
    heard = Heard("speech", said, transcript=said, confidence=0.99, quality=CLEAN)
    understood = understand_heard(heard, CONFIRM)
    assert getattr(understood, "value", None) is True, said
    verdict = weigh_yes(heard)
    assert verdict.accepted, verdict.reason
    assert verdict.layers["challenge"] == "passed"


def test_the_reason_names_the_extra_words() -> None:
    answered, why = said_alone(["I'd like to confirm it tomorrow"])
    assert not answered
    assert why == "the challenge word was not said alone (also heard: i, would, like, to, tomorrow)"
    assert said_alone(["yes please"]) == (False, "the challenge word was not said")
    # a grammar phrase alone (no verbatim words) is held to the rule too
    assert said_alone(["confirm", "approve and 5"])[0] is False


@pytest.mark.parametrize(
    "said", ["nah, nah, nah", "please, no, no, no", "no no no no", "Nope. Nope. Nope."]
)
def test_a_no_built_from_one_short_word_repeated_asks_again(said: str) -> None:
    understood = understand_heard(Heard("speech", said, transcript=said), CONFIRM)
    assert isinstance(understood, NoMatch), understood
    assert understood.detail == "one short word repeated"


@pytest.mark.parametrize("said", ["no", "no, no", "no thanks", "nah, leave it", "no, not yet"])
def test_a_plain_no_is_still_a_no(said: str) -> None:
    understood = understand_heard(Heard("speech", said, transcript=said), CONFIRM)
    assert getattr(understood, "value", None) is False, understood


@pytest.mark.parametrize(
    "said", ["confirm confirm", "confirm, confirm", "Confirm. Confirm.", "I confirm, I confirm"]
)
def test_the_word_said_twice_is_still_an_answer(said: str) -> None:
    # Whisper writes one "confirm" on a muffled line as "confirm, confirm"; a near-miss written
    # that way ("firm, firm") is stopped by the free reading's check (`doubt_yes`), not here
    assert said_alone([said]) == (True, "")
    verdict = weigh_yes(Heard("speech", said, transcript=said, confidence=0.99, quality=CLEAN))
    assert verdict.accepted, verdict


@pytest.mark.parametrize("said", ["I approve, right?", "Confirm?", "confirm? ", "approved?"])
def test_a_reading_that_ends_with_a_question_mark_is_a_question_back(said: str) -> None:
    assert said_alone([said]) == (False, QUESTION_BACK)
    assert said_alone(["confirm", said]) == (False, QUESTION_BACK)
    verdict = weigh_yes(Heard("speech", "confirm", transcript=said, confidence=0.99, quality=CLEAN))
    assert (verdict.accepted, verdict.retry) == (False, "challenge")
