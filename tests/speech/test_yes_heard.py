"""Issue 32, the low tier: a yes is heard, not made up (`_yes_heard`), and a challenge word
inside a sentence is no yes even beside another yes word (`_confirm`).

Text rules on readings written here, and `WhisperRecognizer.hear_sync` with its decoding
passes scripted, so each case says which pass wrote what.
"""

from __future__ import annotations

import pytest
from scripted_whisper import scripted_hearing

from voice_hitl.speech import Answer, AnswerSpec, understand
from voice_hitl.speech._yes_heard import (
    NEAR_MISS_WORDS,
    backs_the_word,
    doubt_yes,
    one_word_repeated,
)
from voice_hitl.speech.asr import WhisperRecognizer

pytestmark = pytest.mark.timeout(30)

CONFIRM = AnswerSpec.confirm("Shall I send the payment?")


def _yes(said: str) -> bool:
    result = understand(said, CONFIRM)
    return isinstance(result, Answer) and result.value is True


@pytest.mark.parametrize(
    ("said", "yes"),
    [
        ("yes, you confirm this", False),  # "who asked you to confirm this"
        ("okay, you approved it", False),
        ("sure, go ahead and confirm", False),
        ("yes, confirm the transfer", False),
        ("yes, confirm", True),
        ("okay, confirm it", True),
        ("alright then, I confirm", True),  # an adverb of agreement beside a yes word
        ("confirmed, go ahead", True),
        ("All right, confirmed.", True),  # "all right": Whisper's spelling of "alright"
        ("yes, confirm, yes, confirm", True),
        ("yes please", True),
        ("confirm then", False),  # the word alone: no yes word beside it (as before)
    ],
)
def test_a_challenge_word_in_a_sentence_is_no_yes_beside_a_yes_word(said: str, yes: bool) -> None:
    assert _yes(said) is yes


@pytest.mark.parametrize(
    ("said", "free", "why"),
    [
        ("confirm,", "Confront.", "the free reading heard 'confront'"),
        ("confirm, please", "Conformed, please.", "the free reading heard 'conformed'"),
        ("approve", "Approach!", "the free reading heard 'approach'"),
        ("confirm,", "Trim, trim.", "the free reading is one word repeated"),
        ("confirm, confirm", "Thumb thumb", "the free reading is one word repeated"),
        ("confirm, confirm", "Trump Trump.", "the free reading is one word repeated"),
        # the free pass spells a true "confirm" as sounds: nothing against it
        ("confirm", "Come firm.", None),
        ("confirm", "Can food?", None),
        ("confirm, confirm", "Okay.", None),
        ("confirm, confirm", "Okay, okay.", None),  # a yes repeated is a yes
        ("I confirm", "I confirm.", None),
        ("uh, confirm", "conferring.", None),
        ("yes please", "Trim, trim.", None),  # no challenge word: left to the other checks
    ],
)
def test_what_the_free_reading_says_against_a_challenge_answer(
    said: str, free: str, why: str | None
) -> None:
    assert doubt_yes(said, free) == why


def test_the_near_miss_words_are_single_words() -> None:
    assert {"conform", "confront", "comfort", "confer", "approach"} <= NEAR_MISS_WORDS
    assert all(" " not in word for word in NEAR_MISS_WORDS)


@pytest.mark.parametrize(
    ("reading", "repeated"),
    [("Trim, trim.", True), ("hello hello hello", True), ("sorry, sorry, please", True),
     ("yes, yes", False), ("Thank you very much.", False), ("trim", False), ("", False)],
)  # fmt: skip
def test_one_word_repeated(reading: str, repeated: bool) -> None:
    assert one_word_repeated(reading) is repeated


def _hear(prompted: str, unprompted: str, third: str) -> list[str]:
    """Every pass scripted (no encoder: no near-miss scoring, no audio rule)."""
    return scripted_hearing(WhisperRecognizer(), CONFIRM, prompted, unprompted, third)


@pytest.mark.parametrize(
    ("prompted", "unprompted", "third", "taken"),
    [
        ("confirm,", "Confront.", "confirm", False),
        ("confirm, confirm,", "Trump Trump.", "confirm, confirm", False),
        ("confirm,", "Trim, trim.", "confirm, confirm", False),
        # a "confirm" the free pass spelt as sounds is asked again (no third-pass rescue)
        ("confirm.", "Come firm.", "confirm", False),
        ("confirm", "Confirm.", "", True),
    ],
)
def test_whisper_asks_again_when_the_free_reading_speaks_against_the_word(
    prompted: str, unprompted: str, third: str, taken: bool
) -> None:
    assert bool(_hear(prompted, unprompted, third)) is taken


@pytest.mark.parametrize(
    ("said", "free", "backed"),
    [
        ("confirm", "Confirm.", True),
        ("yes, confirm", "Yes, come in.", True),  # the other yes word is heard by both
        ("alright, confirm", "All right, thank you.", True),
        ("ok, confirm", "Okay firm.", True),  # "ok" and "okay" are one word
        ("confirm,", "Okay, I'm fine.", False),  # a yes in words of its own: no evidence
        ("confirm, please", "Can some please?", False),
        ("yes please", "Okay.", True),  # no challenge word: not this check's business
    ],
)
def test_the_free_reading_must_back_the_challenge_word(said: str, free: str, backed: bool) -> None:
    assert backs_the_word(said, free) is backed


def test_whisper_asks_again_when_the_free_reading_says_yes_in_other_words() -> None:
    assert _hear("confirm,", "Okay, I'm fine.", "confirm") == []
    assert _hear("yes, confirm", "Yes, come in.", "") == ["yes, confirm"]
