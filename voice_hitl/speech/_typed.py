"""`typed_answer`: check a typed value (an operator's answer) against an `AnswerSpec`.

A typed answer is not heard, so nothing is guessed: the value must be exactly one of what the
question accepts, by the same rules as spoken and keyed answers (the spec's bounds and length):

=============  ===========================================================================
Kind           Accepted values
=============  ===========================================================================
confirm        ``true`` / ``false``, or the strings ``yes`` / ``no`` / ``true`` / ``false``
choices        a choice id or a choice label (case-insensitive); the label is the value
number         a number (not a boolean) or a string holding one, within the bounds
digits         a string of ``0-9`` (or a non-negative integer), of the fixed length if any
free_text      a non-empty string
=============  ===========================================================================
"""

from __future__ import annotations

import math

from ._answer import Answer, NoMatch, NoMatchReason, Via
from ._spec import AnswerKind, AnswerSpec

__all__ = ["typed_answer"]

_YES = {"yes", "true", "y"}
_NO = {"no", "false", "n"}


def typed_answer(value: object, spec: AnswerSpec, *, via: Via = "text") -> Answer | NoMatch:
    """Check a typed ``value`` against ``spec``.

    Args:
        value: what was typed or sent (a JSON value).
        spec: what answer the question expects.
        via: recorded on the result.

    Returns:
        An `Answer` (confidence 1.0, ``transcript`` the value as text) when ``value`` is one of
        the accepted values in the module docstring, else a `NoMatch` whose ``detail`` says
        what would fit.
    """
    shown = _shown(value)
    kind = spec.kind
    if kind is AnswerKind.CONFIRM:
        return _confirm(value, shown, via)
    if kind is AnswerKind.CHOICES:
        if isinstance(value, str):
            wanted = value.strip().casefold()
            for choice in spec.choices:
                if wanted in (choice.id.casefold(), choice.label.casefold()):
                    return Answer(choice.label, choice.id, 1.0, shown, via)
        offered = ", ".join(repr(c.id) for c in spec.choices)
        return NoMatch(NoMatchReason.NOT_UNDERSTOOD, shown, f"{shown} is not one of: {offered}")
    if kind is AnswerKind.NUMBER:
        number = _number(value)
        if number is None:
            return NoMatch(NoMatchReason.NOT_UNDERSTOOD, shown, f"{shown} is not a number")
        problem = spec.number_problem(number)
        if problem is not None:
            return NoMatch(NoMatchReason.OUT_OF_RANGE, shown, problem)
        return Answer(number, None, 1.0, shown, via)
    if kind is AnswerKind.DIGITS:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            value = str(value)
        if not isinstance(value, str) or not value.isascii() or not value.isdigit():
            return NoMatch(NoMatchReason.NOT_UNDERSTOOD, shown, f"{shown} is not a digit string")
        problem = spec.digits_problem(value)
        if problem is not None:
            return NoMatch(NoMatchReason.WRONG_LENGTH, shown, problem)
        return Answer(value, None, 1.0, shown, via)
    if not isinstance(value, str) or not value.strip():
        return NoMatch(NoMatchReason.EMPTY, shown, "a free-text answer must be a non-empty string")
    return Answer(value.strip(), None, 1.0, shown, via)


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def _confirm(value: object, shown: str, via: Via) -> Answer | NoMatch:
    if isinstance(value, str):
        word = value.strip().casefold()
        value = True if word in _YES else False if word in _NO else value
    if isinstance(value, bool):
        return Answer(value, "yes" if value else "no", 1.0, shown, via)
    return NoMatch(NoMatchReason.NOT_UNDERSTOOD, shown, f"{shown} is not yes or no")


def _number(value: object) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None
