"""Keypad entries as answers.

Mapping (``via="dtmf"``, confidence 1.0, ``transcript`` = the keys):

- confirm: ``1`` yes, ``2`` no.
- choices: the key is the choice's position (``1`` = first); with ten or more choices a
  position of two digits is entered and ended with ``#``.
- number / digits: digits ended by ``#`` (a trailing ``#`` is optional here); ``*`` discards
  what was keyed before it, so the caller can start over.
- free text: cannot be keyed (`NoMatch` ``unsupported``).
- Meta-intents: an entry of just ``*`` asks to repeat the question; for confirm, choices and
  free text, ``0`` asks for an operator.
"""

from __future__ import annotations

from .._answer import Answer, MetaAnswer, MetaIntent, NoMatch, NoMatchReason, Understood
from .._spec import AnswerKind, AnswerSpec
from ._tones import KEYS

__all__ = ["dtmf_entry_complete", "dtmf_to_answer"]


def _validate(keys: str) -> str:
    if not isinstance(keys, str):
        raise TypeError(f"keys must be a str, got {type(keys).__name__}")
    bad = sorted({k for k in keys.upper() if k not in KEYS})
    if bad:
        raise ValueError(f"not DTMF keys: {''.join(bad)!r} (expected {KEYS})")
    return keys.upper()


def dtmf_entry_complete(keys: str, spec: AnswerSpec) -> bool:
    """Whether a keypad entry is finished and can be passed to `dtmf_to_answer`.

    Raises:
        ValueError: ``keys`` holds a character that is not a DTMF key.
    """
    keys = _validate(keys)
    if not keys:
        return False
    if keys.endswith("#") or keys == "*":
        return True
    if spec.kind in (AnswerKind.CONFIRM, AnswerKind.FREE_TEXT):
        return True
    if spec.kind is AnswerKind.CHOICES:
        return len(spec.choices) < 10 or len(keys) >= 2 or keys == "0"
    if spec.kind is AnswerKind.DIGITS and spec.length is not None:
        return len(keys.rsplit("*", 1)[-1]) >= spec.length
    return False


def dtmf_to_answer(keys: str, spec: AnswerSpec) -> Understood:
    """Turn a keypad entry into an answer (mapping in the module docstring).

    Raises:
        ValueError: ``keys`` holds a character that is not a DTMF key.
    """
    raw = _validate(keys)
    entry = raw.rstrip("#")
    if entry == "*":
        return MetaAnswer(MetaIntent.REPEAT, 1.0, raw, "dtmf")
    if not entry:
        return NoMatch(NoMatchReason.EMPTY, raw, "no keys were pressed")
    kind = spec.kind
    if entry == "0" and kind in (AnswerKind.CONFIRM, AnswerKind.CHOICES, AnswerKind.FREE_TEXT):
        return MetaAnswer(MetaIntent.OPERATOR, 1.0, raw, "dtmf")
    if kind is AnswerKind.FREE_TEXT:
        return NoMatch(NoMatchReason.UNSUPPORTED, raw, "free text cannot be keyed")
    if kind in (AnswerKind.NUMBER, AnswerKind.DIGITS):
        digits = entry.rsplit("*", 1)[-1]
        if not digits:
            return NoMatch(NoMatchReason.EMPTY, raw, "the entry was cleared with *")
        if not digits.isdigit():
            return NoMatch(NoMatchReason.NOT_UNDERSTOOD, raw, f"non-digit keys in {digits!r}")
        if kind is AnswerKind.DIGITS:
            problem = spec.digits_problem(digits)
            if problem is not None:
                return NoMatch(NoMatchReason.WRONG_LENGTH, raw, f"keyed {problem}")
            return Answer(digits, None, 1.0, raw, "dtmf")
        value = int(digits)
        problem = spec.number_problem(value)
        if problem is not None:
            return NoMatch(NoMatchReason.OUT_OF_RANGE, raw, problem)
        return Answer(value, None, 1.0, raw, "dtmf")
    if not entry.isdigit():
        return NoMatch(NoMatchReason.NOT_UNDERSTOOD, raw, f"{entry!r} is not a position")
    if kind is AnswerKind.CONFIRM:
        if entry == "1":
            return Answer(True, "yes", 1.0, raw, "dtmf")
        if entry == "2":
            return Answer(False, "no", 1.0, raw, "dtmf")
        return NoMatch(NoMatchReason.NOT_UNDERSTOOD, raw, "press 1 for yes or 2 for no")
    position = int(entry)
    if not 1 <= position <= len(spec.choices):
        return NoMatch(NoMatchReason.NOT_UNDERSTOOD, raw, f"there is no choice {position}")
    choice = spec.choices[position - 1]
    return Answer(choice.label, choice.id, 1.0, raw, "dtmf")
