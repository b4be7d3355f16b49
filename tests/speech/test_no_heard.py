"""Issue 32 item 6: a no is taken only when it is heard, not made up (`_no_heard`).

Text rules on readings written here, and `WhisperRecognizer.hear_sync` with both decoding
passes scripted, so each case says which pass wrote what.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scripted_whisper import scripted_hearing

from voice_hitl.speech import AnswerSpec
from voice_hitl.speech._no_heard import (
    doubt_no,
    negation_swapped,
    off_topic_words,
    plain_refusal,
    yes_counterpart,
    yes_word_undone,
)
from voice_hitl.speech.asr import WhisperRecognizer

CONFIRM = AnswerSpec.confirm("Shall I send the payment?")


@pytest.mark.parametrize(
    "said",
    ["no", "No.", "nope", "no thanks", "No, thank you.", "Nah, leave it.", "no, not today",
     "definitely not", "absolutely not", "do not", "please don't", "um, no, stop",
     "no way", "not now, thanks", "Now, please don't."],
)  # fmt: skip
def test_plain_refusals(said: str) -> None:
    assert plain_refusal(said)


@pytest.mark.parametrize(
    "said",
    ["I do not, I do not", "it's not in the mail", "don't mean anything", "hopefully not",
     "I did not say that", "nay, my mind", "", "please"],
)  # fmt: skip
def test_not_plain_refusals(said: str) -> None:
    assert not plain_refusal(said)


@pytest.mark.parametrize("said", ["not fine, do not", "it's not okay, no", "not right, do not"])
def test_a_yes_word_undone_beside_another_negation(said: str) -> None:
    assert yes_word_undone(said)


@pytest.mark.parametrize(
    "said",
    ["definitely not", "absolutely not, no", "don't do it", "do not go ahead", "not now, no",
     "that's not right", "it's not okay"],
)  # fmt: skip
def test_an_intensifier_an_order_or_a_single_not_is_no_undone_yes(said: str) -> None:
    assert not yes_word_undone(said)


def test_a_plain_refusal_stands_whatever_the_other_reading() -> None:
    assert doubt_no("no, leave it", ["no, leave it", "Now we've it."], CONFIRM) is None
    assert doubt_no("definitely not", ["definitely not", ""], CONFIRM) is None


def test_an_opening_not_before_a_sentence_is_no_plain_refusal() -> None:
    # "the dog wants to go out" written "but not ones to go out" by one pass: its opening
    # "not" does not make it a refusal, and the other reading heard no negation
    said = "but not ones to go out."
    reason = doubt_no(said, [said, "that God wants to go out."], CONFIRM)
    assert reason == "the readings disagree on the no"
    # with one word a no does not go with, an opening "not" still refuses, and "no" always
    assert doubt_no("not today, I'm busy", ["not today, I'm busy", "Today."], CONFIRM) is None
    said = "no, not ones to go out"
    assert doubt_no(said, [said, "Go out."], CONFIRM) is None


def test_a_longer_no_stands_when_both_readings_read_as_no() -> None:
    said = "I don't want that"
    assert doubt_no(said, [said, "I don't want that."], CONFIRM) is None
    assert doubt_no(said, [said, ""], CONFIRM) is None  # the other pass heard nothing


def test_a_longer_no_one_reading_alone_wrote_asks_again() -> None:
    said = "it's not the present"
    reason = doubt_no(said, [said, "It's the president."], CONFIRM)
    assert reason == "the readings disagree on the no"
    # the other reading is a request, not a no
    assert doubt_no(said, [said, "Get me a person."], CONFIRM) is not None
    # off: only a yes in a reading counts against the no
    assert doubt_no(said, [said, "It's the president."], CONFIRM, agree=False) is None


def test_a_yes_word_undone_asks_again_even_when_the_readings_agree() -> None:
    said = "not fine, do not"
    assert doubt_no(said, [said, "Not fine, we knit."], CONFIRM) == "a yes word undone by a not"
    # behind a "no" it is a refusal with its reason
    said = "no, not right, do not"
    assert doubt_no(said, [said, "Snow, not bright."], CONFIRM) is None
    # one negation alone is a plain no when the readings agree
    assert doubt_no("that's not right", ["that's not right", "That's not right."], CONFIRM) is None


def test_a_yes_in_any_reading_asks_again() -> None:
    for agree in (True, False):
        reason = doubt_no("no", ["no", "Yes, please."], CONFIRM, agree=agree)
        assert reason == "a yes in a reading of the no"


def _hear(rec: WhisperRecognizer, prompted: str, unprompted: str) -> list[str]:
    """Both passes scripted (no encoder, so the audio rule has nothing to judge by)."""
    return scripted_hearing(rec, CONFIRM, prompted, unprompted)


def test_whisper_asks_again_about_a_no_one_pass_made_up() -> None:
    rec = WhisperRecognizer()
    # the prompted pass wrote a no into a request the unprompted one heard
    assert _hear(rec, "it's not the present", "Get me a person.") == []
    # the prompted pass heard nothing it could map: the unprompted no alone is not taken
    assert _hear(rec, "well, the little happen", "Well, it shouldn't.") == []
    # both passes heard the no, or it is a plain refusal
    assert _hear(rec, "I don't want that", "I don't want that.") == ["I don't want that"]
    assert _hear(rec, "no, leave it", "Now we've it.") == ["no, leave it"]
    assert _hear(rec, "", "No, not today.") == ["No, not today."]
    off = WhisperRecognizer(agree_no=False)
    assert _hear(off, "it's not the present", "Get me a person.") == ["it's not the present"]


@pytest.mark.parametrize(
    ("said", "counterpart"),
    [
        ("I don't think so", "I do think so"),
        ("can't go clean", "can go clean"),
        ("No, I do not want that.", "I do want that."),
        ("I won't say", "I will say"),
        ("nothing at all", "nothing at all"),  # no negation word to take out
    ],
)
def test_the_yes_counterpart_takes_the_negations_out(said: str, counterpart: str) -> None:
    assert yes_counterpart(said) == counterpart


def test_a_no_the_audio_barely_prefers_to_its_yes_counterpart_asks_again() -> None:
    scored: list[list[str]] = []

    def hear(margin: float | None, no: float, yes: float, said: str) -> list[str]:
        rec = WhisperRecognizer(no_margin=margin)

        def score(encoded: Any, texts: list[str]) -> list[tuple[float, int]]:
            scored.append(texts)
            return [(no, 4), (yes, 4)]

        rec.score_sync = score  # type: ignore[method-assign]
        rec._no_on_speech = lambda *args: True  # type: ignore[method-assign]
        rec.encode_sync = lambda pcm16, rate: object()  # type: ignore[method-assign,assignment]
        rec.decode_sync = lambda encoded, spec, *, hotwords, words=None: (said, -0.1)  # type: ignore[method-assign]
        hearing = rec.hear_sync(np.zeros(32000, dtype=np.int16), 16000, CONFIRM)
        return [h.text for h in hearing.hypotheses]

    said = "I did not want it"
    assert hear(2.0, -10.0, -11.0, said) == []  # 1 nat: asked again
    assert scored[-1] == [said, "I did want it"]
    assert hear(2.0, -10.0, -13.0, said) == [said]  # 3 nats: the no stands
    assert hear(None, -10.0, -10.0, said) == [said]  # off
    count = len(scored)
    assert hear(2.0, -10.0, -10.0, "no, leave it") == ["no, leave it"]  # plain: not scored
    # only the end taken out: tiny.en scores a transcript that ends early about as well
    assert hear(2.0, -10.0, -10.0, "I want it, not") == ["I want it, not"]
    assert len(scored) == count


@pytest.mark.parametrize(
    ("said", "other", "why"),
    [
        # sentences about something else, read as a no by both passes
        ("you don't talk into the car", "you don't talk into the car.",
         "words a no does not go with (into, car)"),
        ("is never a human I could tell", "Is never a human I could tell.",
         "words a no does not go with (human, tell)"),
        ("I did not believe it, man", "I did not believe it.",
         "words a no does not go with (believe, man)"),
        # one stray word is tolerated
        ("I don't think so, mate", "I don't think so.", None),
        ("we know, not yet", "You know, not yet.", None),
        # refusals: the words go with a no, or are the question's own
        ("I don't think so", "I don't think so.", None),
        ("I'd rather you didn't", "I'd rather you didn't.", None),
        ("do not confirm the payment", "Do not confirm the payment.", None),
        ("I don't want to send it", "I don't want to send it.", None),
        ("not at the moment", "Not at the moment.", None),
    ],
)  # fmt: skip
def test_a_no_must_be_made_of_words_that_go_with_a_no(
    said: str, other: str, why: str | None
) -> None:
    assert doubt_no(said, [said, other], CONFIRM) == why


def test_the_off_topic_words_leave_the_questions_own_words() -> None:
    assert off_topic_words("don't send the payment to Bob", CONFIRM) == ["bob"]


@pytest.mark.parametrize(
    ("said", "other", "swapped"),
    [
        ("please, no.", "Please go.", True),
        ("no", "Go.", False),  # no word shared besides
        ("nope, nope,", "I know.", False),
        ("nope, not even twisted", "Lord, not even twisted.", False),  # still a negation
        ("no, thanks", "Now, thanks.", False),  # "now": tiny.en's spelling of a leading no
        ("no, thanks", "No thanks.", False),
        ("please, no", "Please, no, no.", False),  # not the same words
        ("no, leave it", "Now we've it.", False),
        ("ah, no", "No.", False),
        ("no, I go into it", "So, I go into it.", False),  # a hesitation in its place
    ],
)
def test_a_negation_the_other_pass_heard_as_another_word(
    said: str, other: str, swapped: bool
) -> None:
    assert negation_swapped(said, other) is swapped


def test_a_plain_refusal_the_other_pass_heard_without_its_negation_asks_again() -> None:
    reason = doubt_no("please, no.", ["please, no.", "Please go."], CONFIRM)
    assert reason == "another reading heard another word for the no"
    assert doubt_no("please, no.", ["please, no.", "Please, no!"], CONFIRM) is None


def test_digits_said_alone_are_kept_for_a_code_challenge_when_both_passes_say_them() -> None:
    rec = WhisperRecognizer()
    assert _hear(rec, "4, 7, 2", "For 7-2.") == ["4, 7, 2"]
    assert _hear(rec, "the code is 2, 8, 6", "The code is 2-8-6.") == ["the code is 2, 8, 6"]
    assert _hear(rec, "953", "Oh 953.") == ["953"]
    assert _hear(rec, "472", "4.72") == ["472"]
    # the passes disagree on the digits: asked again
    assert _hear(rec, "3, 6, 5", "Three, six, four.") == []
    # digits beside other words are not a code answer, and a yes beside digits stays held
    # to the yes rules (not plain: rejected), as before the code challenge
    assert _hear(rec, "6, 4, and 1, please", "6, 4, and 1, please.") == []
    assert _hear(rec, "yes, 539", "Yes, 539.") == []
