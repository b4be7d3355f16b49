"""Typed answers (operators): the spec's own rules, exact values only, never a guess."""

from __future__ import annotations

import pytest

from voice_hitl.speech import Answer, AnswerSpec, NoMatch, NoMatchReason, typed_answer

COLOURS = AnswerSpec.from_tool_call(
    "AskUserQuestion", {"question": "Colour?", "choices": ["Dark blue", "red"]}
)
AMOUNT = AnswerSpec.from_tool_call(
    "AskUserQuestion", {"question": "How much?", "mode": "number", "min": 1, "max": 1000}
)
PIN = AnswerSpec.from_tool_call(
    "AskUserQuestion", {"question": "PIN?", "mode": "digits", "length": 4}
)
CONFIRM = AnswerSpec.from_tool_call("ConfirmAction", {"action": "move 500 dollars"})
FREE = AnswerSpec.from_tool_call("AskUserQuestion", {"question": "Anything else?"})


@pytest.mark.parametrize(
    ("spec", "value", "answer", "choice_id"),
    [
        (COLOURS, "dark_blue", "Dark blue", "dark_blue"),
        (COLOURS, "DARK BLUE", "Dark blue", "dark_blue"),
        (AMOUNT, 500, 500, None),
        (AMOUNT, "1,000", 1000, None),
        (AMOUNT, 2.5, 2.5, None),
        (PIN, "0042", "0042", None),
        (CONFIRM, True, True, "yes"),
        (CONFIRM, "no", False, "no"),
        (FREE, "  call me back ", "call me back", None),
    ],
)
def test_fitting_values(spec: AnswerSpec, value: object, answer: object, choice_id: str) -> None:
    result = typed_answer(value, spec, via="operator")
    assert isinstance(result, Answer)
    assert (result.value, result.choice_id, result.via) == (answer, choice_id, "operator")


@pytest.mark.parametrize(
    ("spec", "value", "reason", "says"),
    [
        (COLOURS, "green", NoMatchReason.NOT_UNDERSTOOD, "'dark_blue', 'red'"),
        (COLOURS, 1, NoMatchReason.NOT_UNDERSTOOD, "not one of"),
        (AMOUNT, 5000, NoMatchReason.OUT_OF_RANGE, "outside [1.0, 1000.0]"),
        (AMOUNT, True, NoMatchReason.NOT_UNDERSTOOD, "not a number"),
        (AMOUNT, "five hundred", NoMatchReason.NOT_UNDERSTOOD, "not a number"),
        (AMOUNT, "nan", NoMatchReason.NOT_UNDERSTOOD, "not a number"),
        (PIN, "123", NoMatchReason.WRONG_LENGTH, "3 digits, expected 4"),
        (PIN, "12a4", NoMatchReason.NOT_UNDERSTOOD, "not a digit string"),
        (CONFIRM, "maybe", NoMatchReason.NOT_UNDERSTOOD, "not yes or no"),
        (CONFIRM, 1, NoMatchReason.NOT_UNDERSTOOD, "not yes or no"),
        (FREE, "   ", NoMatchReason.EMPTY, "non-empty"),
        (FREE, None, NoMatchReason.EMPTY, "non-empty"),
    ],
)
def test_values_that_do_not_fit(spec: AnswerSpec, value: object, reason: str, says: str) -> None:
    result = typed_answer(value, spec)
    assert isinstance(result, NoMatch)
    assert result.reason == reason
    assert says in result.detail
