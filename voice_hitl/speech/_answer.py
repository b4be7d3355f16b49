"""Result types of answer understanding: `Answer`, `MetaAnswer` and `NoMatch`.

`understand` returns exactly one of three frozen dataclasses:

- `Answer`: the caller answered the question; ``value`` is typed by the question's kind
  (``bool`` for confirm, the choice label for choices, ``int | float`` for number, ``str`` for
  digits and free text).
- `MetaAnswer`: the caller did not answer but asked for something every question understands:
  cancel, repeat the question, or a person (`MetaIntent`). It is a separate type, never an
  `Answer` with a magic ``choice_id``, so code that handles answers cannot mistake it for one.
- `NoMatch`: nothing trustworthy was heard; ``reason`` says why (`NoMatchReason`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "Answer",
    "AnswerValue",
    "MetaAnswer",
    "MetaIntent",
    "NoMatch",
    "NoMatchReason",
    "Understood",
    "Via",
]

Via: TypeAlias = Literal["speech", "dtmf", "text", "default", "operator"]
"""How an answer arrived: a transcript, keypad tones, typed text, a deadline default, or an
operator's typed answer (console, CLI, API)."""

AnswerValue: TypeAlias = bool | int | float | str
"""The typed value of an `Answer`."""


class MetaIntent(enum.StrEnum):
    """Requests every question understands besides its own answers."""

    CANCEL = "cancel"
    """The caller wants to stop: "cancel", "never mind", "forget it"."""
    REPEAT = "repeat"
    """The caller wants the question again: "say that again", "pardon"."""
    OPERATOR = "operator"
    """The caller wants a person: "operator", "let me talk to a human"."""


class NoMatchReason(enum.StrEnum):
    """Why `understand` refused to produce an answer."""

    EMPTY = "empty"
    """Nothing but silence or filler words was heard."""
    NOT_UNDERSTOOD = "not_understood"
    """Words were heard but none of them answers the question."""
    AMBIGUOUS = "ambiguous"
    """More than one answer fits (for example "red or blue")."""
    CONTRADICTORY = "contradictory"
    """The transcript both affirms and negates (for example "no, yes")."""
    UNCERTAIN = "uncertain"
    """The caller hedged ("maybe", "I'm not sure")."""
    NONE_OF_THEM = "none_of_them"
    """The caller rejected every offered choice."""
    OUT_OF_RANGE = "out_of_range"
    """A number was heard but falls outside the question's bounds."""
    WRONG_LENGTH = "wrong_length"
    """A digit string was heard but has the wrong number of digits."""
    UNSUPPORTED = "unsupported"
    """The input channel cannot answer this kind of question (keypad for free text)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer to the question.

    Attributes:
        value: ``bool`` (confirm), the chosen label (choices), ``int`` or ``float`` (number),
            a string of ``0-9`` (digits) or the cleaned transcript (free text).
        choice_id: ``"yes"``/``"no"`` for confirm, the `Choice` id for choices, else ``None``.
        confidence: 0..1, how sure understanding is (not the recogniser's score).
        transcript: the text (or keys) the answer was read from.
        via: how the answer arrived.
    """

    value: AnswerValue
    choice_id: str | None
    confidence: float
    transcript: str
    via: Via = "speech"
    type: Literal["answer"] = "answer"


@dataclass(frozen=True, slots=True)
class MetaAnswer:
    """A request to cancel, repeat the question or reach a person, instead of an answer.

    Attributes:
        intent: which request.
        confidence: 0..1.
        transcript: the text (or keys) it was read from.
        via: how it arrived.
    """

    intent: MetaIntent
    confidence: float
    transcript: str
    via: Via = "speech"
    type: Literal["meta"] = "meta"


@dataclass(frozen=True, slots=True)
class NoMatch:
    """No trustworthy answer: the caller should be asked again.

    Attributes:
        reason: why (`NoMatchReason`; it is a ``str`` too).
        transcript: the text (or keys) that was examined.
        detail: a human-readable explanation, for logs.
    """

    reason: NoMatchReason
    transcript: str
    detail: str = ""
    type: Literal["no_match"] = "no_match"


Understood: TypeAlias = Answer | MetaAnswer | NoMatch
"""What `understand` and `dtmf_to_answer` return."""
