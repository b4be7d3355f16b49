"""Issue 32 item 6: a reading built from a short unit repeated is how Whisper writes babble;
such a yes or no is asked again (`_repeat`, applied by `understand` at every tier)."""

from __future__ import annotations

import pytest
from scripted_whisper import scripted_hearing

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.speech import Answer, AnswerSpec, NoMatch, NoMatchReason, understand
from voice_hitl.speech._repeat import repeated_no, repeated_yes, runs
from voice_hitl.speech._text import tokens
from voice_hitl.speech.asr import WhisperRecognizer

pytestmark = pytest.mark.timeout(30)

CONFIRM = AnswerSpec.confirm("Shall I send the payment?")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("", []),
        ("fine", [(("fine",), 1)]),
        ("fine fine", [(("fine",), 2)]),
        ("alright alright fine fine fine", [(("alright",), 2), (("fine",), 3)]),
        ("okay good okay good", [(("okay", "good"), 2)]),
        ("no no no", [(("no",), 3)]),  # the shortest unit first
        ("do not do not do", [(("do", "not"), 2), (("do",), 1)]),
        ("yeah yeah sure", [(("yeah",), 2), (("sure",), 1)]),
        ("a b c a b c", [(("a", "b", "c"), 2)]),
        ("a b c d a b c d", [(("a",), 1), (("b",), 1), (("c",), 1), (("d",), 1)] * 2),
    ],
)
def test_runs(words: str, expected: list[tuple[tuple[str, ...], int]]) -> None:
    assert runs(words.split()) == expected


@pytest.mark.parametrize(
    ("said", "repeated"),
    [
        ("alright, alright, fine, fine, fine", True),  # adversarial6: babble
        ("it's fine, fine", True),  # adversarial6: a noisy line
        ("okay, I'm good, ok, I'm good", True),  # adversarial6: muffled
        ("I'm fine, fine, I'm fine", True),
        ("that's right, that's right, that's right", True),
        ("yes, fine, yes, fine", True),
        ("sure, please, sure", True),  # "please" is a stopword
        ("fine, fine", False),  # one yes word alone, said over: how Whisper writes one yes
        ("yes, yes, yes", False),
        ("okay, ok", False),
        ("yeah, yeah, sure", False),  # "sure" said once
        ("alright, great, great, alright", False),
        ("yes, that's fine", False),
        ("yes please", False),
        ("fine", False),
        ("confirm, confirm", False),  # one muffled "confirm" (`_challenge`)
        ("yes, confirm, yes, confirm", False),
        ("", False),
    ],
)
def test_a_yes_built_from_repeats(said: str, repeated: bool) -> None:
    assert repeated_yes(tokens(said)) is repeated


@pytest.mark.parametrize(
    ("said", "repeated"),
    [
        ("nah nah nah", True),
        ("please no no no", True),
        ("do not do not do not do", True),
        ("not not not", True),
        ("no no", False),  # twice is an emphatic no
        ("never never never", False),  # a long word
        ("no no no leave it", False),
        ("nah", False),
    ],
)
def test_a_no_built_from_repeats(said: str, repeated: bool) -> None:
    assert repeated_no(said.split()) is repeated


@pytest.mark.parametrize(
    "said",
    [
        "alright, alright, fine, fine, fine",
        "it's fine, fine",
        "okay, that's good, ok, that's good",
        "All right, all right, fine, fine.",
    ],
)
def test_a_repeated_yes_is_asked_again_at_every_tier(said: str) -> None:
    for understood in (
        understand(said, CONFIRM),
        understand_heard(Heard("speech", said, transcript=said), CONFIRM),
    ):
        assert isinstance(understood, NoMatch), understood
        assert understood.reason is NoMatchReason.UNCERTAIN
        assert understood.detail == "a short yes repeated"


@pytest.mark.parametrize(
    "said",
    ["Yes, yes.", "alright, alright", "yeah, yeah, sure", "confirm, confirm", "okay, that's good"],
)
def test_a_yes_with_more_than_repeats_is_a_yes(said: str) -> None:
    understood = understand(said, CONFIRM)
    assert isinstance(understood, Answer) and understood.value is True, understood


def _whisper_hears(prompted: str, unprompted: str) -> list[str]:
    """Both passes scripted; the texts kept."""
    return scripted_hearing(WhisperRecognizer(), CONFIRM, prompted, unprompted)


@pytest.mark.parametrize(
    ("prompted", "unprompted", "taken"),
    [
        ("alright, alright, fine, fine, fine", "Alright, alright, fine, fine.", False),
        ("okay", "Okay, I'm good, ok, I'm good.", False),  # either reading asks again
        ("it's fine, fine", "It's fine.", False),
        ("yes, yes, yes", "Yes, yes.", True),  # one yes word said over is a yes
        ("okay", "Okay.", True),
    ],
)
def test_whisper_asks_again_when_a_reading_is_a_yes_built_from_repeats(
    prompted: str, unprompted: str, taken: bool
) -> None:
    assert bool(_whisper_hears(prompted, unprompted)) is taken
