"""understand(): the ways people really answer, per question kind."""

from __future__ import annotations

import pytest

from voice_hitl.speech import (
    Answer,
    AnswerSpec,
    Choice,
    MetaAnswer,
    MetaIntent,
    NoMatch,
    NoMatchReason,
    understand,
)

CONFIRM = AnswerSpec.confirm("Shall I transfer the money?")
COLOURS = AnswerSpec.choose(
    "Which colour?",
    [Choice("red", "Red"), Choice("green", "Green"), Choice("blue", "Blue", ("navy",))],
)


def _value(result: object) -> object:
    assert isinstance(result, Answer), result
    return result.value


@pytest.mark.parametrize(
    "text",
    ["yes", "Yeah.", "yep", "sure, go ahead", "uh huh", "of course", "okay, do it", "YES PLEASE"],
)
def test_confirm_yes(text: str) -> None:
    result = understand(text, CONFIRM)
    assert isinstance(result, Answer)
    assert result.value is True and result.choice_id == "yes"
    assert result.transcript == text and result.via == "speech"
    assert 0.5 < result.confidence <= 1.0


@pytest.mark.parametrize(
    "text",
    [
        "no",
        "nope",
        "no way",
        "absolutely not",
        "don't do that",
        "do not go ahead",
        "I don't think so",
        "of course not",
        "nah",
        "never",
        "not okay",
        "yes, I mean no",
    ],
)
def test_confirm_no(text: str) -> None:
    result = understand(text, CONFIRM)
    assert isinstance(result, Answer), result
    assert result.value is False and result.choice_id == "no"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no, I mean yes", NoMatchReason.CONTRADICTORY),
        ("yes no", NoMatchReason.CONTRADICTORY),
        ("yes, wait", NoMatchReason.CONTRADICTORY),
        ("maybe", NoMatchReason.UNCERTAIN),
        ("I'm not sure", NoMatchReason.UNCERTAIN),
        ("no problem", NoMatchReason.UNCERTAIN),
        ("I'm good, thanks", NoMatchReason.UNCERTAIN),  # may decline: asked again
        ("okay, okay, we're fine", NoMatchReason.UNCERTAIN),
        ("what's the weather like", NoMatchReason.NOT_UNDERSTOOD),
        ("", NoMatchReason.EMPTY),
        ("um, uh", NoMatchReason.EMPTY),
    ],
)
def test_confirm_no_match(text: str, reason: NoMatchReason) -> None:
    result = understand(text, CONFIRM)
    assert isinstance(result, NoMatch), result
    assert result.reason is reason
    assert result.transcript == text and result.detail


@pytest.mark.parametrize(
    ("text", "choice_id"),
    [
        ("blue", "blue"),
        ("the blue one", "blue"),
        ("um, I think blue", "blue"),
        ("navy", "blue"),
        ("red — no, blue", "blue"),
        ("red, sorry, green", "green"),
        ("the second one", "green"),
        ("number three", "blue"),
        ("option 1", "red"),
        ("the last one", "blue"),
        ("the first one", "red"),
        ("the middle one", "green"),
        ("two", "green"),
        ("not red, blue", "blue"),
        ("greens please", "green"),
    ],
)
def test_choices(text: str, choice_id: str) -> None:
    result = understand(text, COLOURS)
    assert isinstance(result, Answer), result
    assert result.choice_id == choice_id
    assert result.value == COLOURS.choice(choice_id).label


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("red or blue", NoMatchReason.AMBIGUOUS),
        ("purple", NoMatchReason.NOT_UNDERSTOOD),
        ("option four", NoMatchReason.NOT_UNDERSTOOD),
        ("none of them", NoMatchReason.NONE_OF_THEM),
        ("not the red one", NoMatchReason.NOT_UNDERSTOOD),
        ("yes", NoMatchReason.NOT_UNDERSTOOD),
        # "one" after an unknown word is the pronoun, not the first choice
        ("I want the orange one", NoMatchReason.NOT_UNDERSTOOD),
        ("the yellow one please", NoMatchReason.NOT_UNDERSTOOD),
    ],
)
def test_choices_no_match(text: str, reason: NoMatchReason) -> None:
    result = understand(text, COLOURS)
    assert isinstance(result, NoMatch), result
    assert result.reason is reason


def test_longer_label_wins_over_contained_one() -> None:
    spec = AnswerSpec.choose("Which?", ["Blue", "Dark blue"])
    assert understand("dark blue", spec) == Answer("Dark blue", "dark_blue", 0.95, "dark blue")
    assert _value(understand("blue", spec)) == "Blue"


def test_label_with_a_meta_word_is_a_choice() -> None:
    spec = AnswerSpec.choose("What next?", ["Repeat order", "New order"])
    assert _value(understand("repeat order", spec)) == "Repeat order"
    assert isinstance(understand("repeat that", spec), NoMatch | MetaAnswer)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("five hundred dollars", 500),
        ("two point five", 2.5),
        ("forty two", 42),
        ("one thousand two hundred and five", 1205),
        ("fifteen hundred", 1500),
        ("a hundred", 100),
        ("two and a half", 2.5),
        ("$1,000", 1000),
        ("7 dollars and 50 cents", 7.5),
        ("seven dollars and fifty cents", 7.5),
        ("um, seventeen", 17),
        ("five hundred, no, six hundred", 600),
        ("zero", 0),
    ],
)
def test_number(text: str, value: float) -> None:
    assert _value(understand(text, AnswerSpec.number())) == value


def test_number_bounds_and_ambiguity() -> None:
    spec = AnswerSpec.number(minimum=1, maximum=100)
    out = understand("five hundred", spec)
    assert isinstance(out, NoMatch) and out.reason is NoMatchReason.OUT_OF_RANGE
    out = understand("five or six", spec)
    assert isinstance(out, NoMatch) and out.reason is NoMatchReason.AMBIGUOUS
    out = understand("lots", spec)
    assert isinstance(out, NoMatch) and out.reason is NoMatchReason.NOT_UNDERSTOOD


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("one two three four", "1234"),
        ("nine oh five", "905"),
        ("double five one", "551"),
        ("my pin is 4 4 7 1", "4471"),
        ("twenty one", "21"),
        ("one two three, sorry, four five six", "456"),
    ],
)
def test_digits(text: str, digits: str) -> None:
    assert _value(understand(text, AnswerSpec.digits())) == digits


def test_digits_length() -> None:
    out = understand("one two three", AnswerSpec.digits(length=4))
    assert isinstance(out, NoMatch) and out.reason is NoMatchReason.WRONG_LENGTH
    assert _value(understand("one two three four", AnswerSpec.digits(length=4))) == "1234"


def test_free_text() -> None:
    spec = AnswerSpec.free_text("Anything else?")
    assert _value(understand("  my card was stolen ", spec)) == "my card was stolen"
    out = understand("I want to talk to a real person", spec)
    assert isinstance(out, MetaAnswer) and out.intent is MetaIntent.OPERATOR
    assert isinstance(understand("uh", spec), NoMatch)


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("cancel", MetaIntent.CANCEL),
        ("never mind", MetaIntent.CANCEL),
        ("forget it", MetaIntent.CANCEL),
        ("say that again", MetaIntent.REPEAT),
        ("pardon?", MetaIntent.REPEAT),
        ("one more time", MetaIntent.REPEAT),
        ("operator", MetaIntent.OPERATOR),
        ("let me talk to a person", MetaIntent.OPERATOR),
        ("blue, no wait, cancel", MetaIntent.CANCEL),
    ],
)
@pytest.mark.parametrize("spec", [CONFIRM, COLOURS, AnswerSpec.number(), AnswerSpec.digits()])
def test_meta_intents(text: str, intent: MetaIntent, spec: AnswerSpec) -> None:
    out = understand(text, spec)
    assert isinstance(out, MetaAnswer), out
    assert out.intent is intent and out.transcript == text


def test_answer_and_meta_together_is_contradictory() -> None:
    out = understand("yes, cancel", CONFIRM)
    assert isinstance(out, NoMatch) and out.reason is NoMatchReason.CONTRADICTORY


def test_negated_meta_is_not_meta() -> None:
    out = understand("don't cancel", CONFIRM)
    assert not isinstance(out, MetaAnswer)
    assert not (isinstance(out, Answer) and out.value is True)


def test_via_is_recorded() -> None:
    out = understand("yes", CONFIRM, via="text")
    assert isinstance(out, Answer) and out.via == "text"


def test_an_affirmative_undone_by_not_is_a_no() -> None:
    confirm = AnswerSpec.confirm()
    for text in ("No, please don't.", "please do not", "absolutely not"):
        result = understand(text, confirm)
        assert isinstance(result, Answer) and result.value is False, text


def test_asking_what_the_question_was_is_a_repeat() -> None:
    result = understand("sorry, what was the question?", AnswerSpec.choose("Which?", ["a", "b"]))
    assert isinstance(result, MetaAnswer) and result.intent is MetaIntent.REPEAT


def test_an_inflected_cancel_is_never_a_yes() -> None:
    # a recogniser's near-miss of "cancel that" beside an affirmative must re-prompt
    for text in ("ok, it cancels out", "okay, cancelled"):
        result = understand(text, AnswerSpec.confirm())
        assert not (isinstance(result, Answer) and result.value is True), text

