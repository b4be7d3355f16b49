"""What answer a question expects: `AnswerSpec`, `Choice` and `AnswerKind`.

Mapping from tool calls (`AnswerSpec.from_tool_call`):

=================  ====================================================================
Tool call          Spec
=================  ====================================================================
``ConfirmAction``  ``{"action": str}`` -> ``confirm``; the question is ``action``; the
                   deadline default is ``"no"``, so a timeout never confirms.
``AskUserQuestion``  ``{"question": str, "choices"?: [...], "mode"?: str,
                   "default_choice_id"?: str}``. ``mode`` is one of ``confirm``
                   (alias ``yes_no``), ``choices``, ``number``, ``digits``, ``free_text``;
                   without it the kind is ``choices`` when ``choices`` is non-empty, else
                   ``free_text``. Each choice is a string (its label; the id is the label
                   in lower case with runs of non-alphanumerics replaced by ``_``) or an
                   object ``{"id"?, "label", "synonyms"?}``. Optional ``min``/``max``
                   bound a number; optional ``length`` fixes the digit count.
=================  ====================================================================

Any other tool name, or arguments that do not fit, raise `AnswerSpecError` (a ``ValueError``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._exceptions import VoiceHitlError
from ._answer import Answer

__all__ = ["AnswerKind", "AnswerSpec", "AnswerSpecError", "Choice"]


class AnswerSpecError(VoiceHitlError, ValueError):
    """An `AnswerSpec` (or the tool arguments it was built from) is invalid."""


class AnswerKind(enum.StrEnum):
    """The kind of answer a question expects."""

    CONFIRM = "confirm"
    """Yes or no."""
    CHOICES = "choices"
    """One of a list of `Choice`."""
    NUMBER = "number"
    """A spoken amount, e.g. "five hundred dollars" -> 500."""
    DIGITS = "digits"
    """A digit string, e.g. "one two oh four" -> "1204"."""
    FREE_TEXT = "free_text"
    """Anything; the cleaned transcript is the answer."""


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_") or "choice"


@dataclass(frozen=True, slots=True)
class Choice:
    """One answer a ``choices`` question offers.

    Attributes:
        id: stable identifier returned as `Answer.choice_id`.
        label: what the caller hears and is most likely to say.
        synonyms: other ways to say it ("navy" for "blue").
    """

    id: str
    label: str
    synonyms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id:
            raise AnswerSpecError("Choice.id must be a non-empty string")
        if not self.label.strip():
            raise AnswerSpecError(f"Choice {self.id!r} has an empty label")
        if isinstance(self.synonyms, str):
            raise AnswerSpecError(f"Choice {self.id!r}: synonyms must be a sequence of str")


_CONFIRM_CHOICES = (Choice("yes", "yes"), Choice("no", "no"))


@dataclass(frozen=True, slots=True)
class AnswerSpec:
    """What answer a question expects.

    Build one with the class-method constructors (`confirm`, `choose`, `number`, `digits`,
    `free_text`) or `from_tool_call`.

    Attributes:
        kind: the kind of answer.
        question: the question text (used for prompts and logs only).
        choices: the offered choices (``choices`` kind); confirm uses ids ``yes``/``no``.
        default_choice_id: the answer to assume when the deadline passes, if any.
        minimum: lowest accepted number (``number`` kind), inclusive.
        maximum: highest accepted number (``number`` kind), inclusive.
        length: exact digit count (``digits`` kind), if fixed.
    """

    kind: AnswerKind
    question: str = ""
    choices: tuple[Choice, ...] = field(default=())
    default_choice_id: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    length: int | None = None

    def __post_init__(self) -> None:
        if self.kind is AnswerKind.CHOICES:
            if not self.choices:
                raise AnswerSpecError("a choices question needs at least one Choice")
            ids = [c.id for c in self.choices]
            if len(set(ids)) != len(ids):
                raise AnswerSpecError(f"duplicate choice ids: {ids}")
        elif self.choices and self.kind is not AnswerKind.CONFIRM:
            raise AnswerSpecError(f"a {self.kind} question takes no choices")
        if self.default_choice_id is not None:
            valid = {c.id for c in self.effective_choices}
            if self.default_choice_id not in valid:
                raise AnswerSpecError(
                    f"default_choice_id {self.default_choice_id!r} is not one of {sorted(valid)}"
                )
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise AnswerSpecError(f"minimum {self.minimum} exceeds maximum {self.maximum}")
        if self.length is not None and self.length < 1:
            raise AnswerSpecError(f"length must be >= 1, got {self.length}")

    # -- constructors -------------------------------------------------------------------

    @classmethod
    def confirm(cls, question: str = "", *, default: bool | None = False) -> AnswerSpec:
        """A yes/no question; the deadline default is "no" unless ``default`` says otherwise."""
        default_id = None if default is None else ("yes" if default else "no")
        return cls(AnswerKind.CONFIRM, question, _CONFIRM_CHOICES, default_id)

    @classmethod
    def choose(
        cls,
        question: str,
        choices: Sequence[Choice | str],
        *,
        default_choice_id: str | None = None,
    ) -> AnswerSpec:
        """A question with a list of choices; plain strings become `Choice` by label."""
        built: list[Choice] = []
        taken: set[str] = set()
        for item in choices:
            choice = item if isinstance(item, Choice) else _choice_from_label(item, taken)
            taken.add(choice.id)
            built.append(choice)
        return cls(AnswerKind.CHOICES, question, tuple(built), default_choice_id)

    @classmethod
    def number(
        cls, question: str = "", *, minimum: float | None = None, maximum: float | None = None
    ) -> AnswerSpec:
        """A spoken amount, optionally bounded (inclusive)."""
        return cls(AnswerKind.NUMBER, question, minimum=minimum, maximum=maximum)

    @classmethod
    def digits(cls, question: str = "", *, length: int | None = None) -> AnswerSpec:
        """A digit string, optionally of a fixed length."""
        return cls(AnswerKind.DIGITS, question, length=length)

    @classmethod
    def free_text(cls, question: str = "") -> AnswerSpec:
        """Any answer; the cleaned transcript is returned."""
        return cls(AnswerKind.FREE_TEXT, question)

    @classmethod
    def from_tool_call(cls, tool_name: str, arguments: Mapping[str, Any]) -> AnswerSpec:
        """Build the spec for a human-input tool call (mapping in the module docstring).

        Raises:
            AnswerSpecError: unknown tool, or arguments of the wrong shape.
        """
        if not isinstance(arguments, Mapping):
            raise AnswerSpecError(f"{tool_name} arguments must be an object")
        if tool_name == "ConfirmAction":
            action = _required_str(arguments, "action", tool_name)
            return cls.confirm(action, default=False)
        if tool_name != "AskUserQuestion":
            raise AnswerSpecError(
                f"no answer mapping for tool {tool_name!r} "
                "(expected AskUserQuestion or ConfirmAction)"
            )
        question = _required_str(arguments, "question", tool_name)
        raw_choices = arguments.get("choices") or []
        if not isinstance(raw_choices, list | tuple):
            raise AnswerSpecError("AskUserQuestion.choices must be a list")
        mode = arguments.get("mode")
        if mode is None:
            mode = "choices" if raw_choices else "free_text"
        if mode == "yes_no":
            mode = "confirm"
        try:
            kind = AnswerKind(mode)
        except ValueError:
            valid = ", ".join(k.value for k in AnswerKind)
            raise AnswerSpecError(
                f"AskUserQuestion.mode {mode!r} is not one of: {valid}, yes_no"
            ) from None
        default_id = arguments.get("default_choice_id")
        if default_id is not None and not isinstance(default_id, str):
            raise AnswerSpecError("AskUserQuestion.default_choice_id must be a string")
        if kind is AnswerKind.CONFIRM:
            spec = cls.confirm(question, default=None)
            return cls(kind, question, spec.choices, default_id)
        if kind is AnswerKind.CHOICES:
            return cls.choose(
                question, [_choice_from_json(c) for c in raw_choices], default_choice_id=default_id
            )
        if kind is AnswerKind.NUMBER:
            return cls.number(
                question,
                minimum=_optional_number(arguments, "min"),
                maximum=_optional_number(arguments, "max"),
            )
        if kind is AnswerKind.DIGITS:
            length = arguments.get("length")
            if length is not None and (not isinstance(length, int) or isinstance(length, bool)):
                raise AnswerSpecError("AskUserQuestion.length must be an integer")
            return cls.digits(question, length=length)
        return cls.free_text(question)

    # -- helpers ------------------------------------------------------------------------

    @property
    def effective_choices(self) -> tuple[Choice, ...]:
        """The choices answers are drawn from (``yes``/``no`` for confirm)."""
        if self.kind is AnswerKind.CONFIRM:
            return _CONFIRM_CHOICES
        return self.choices

    def choice(self, choice_id: str) -> Choice:
        """The choice with this id.

        Raises:
            KeyError: no such choice.
        """
        for c in self.effective_choices:
            if c.id == choice_id:
                return c
        raise KeyError(choice_id)

    def number_problem(self, value: float) -> str | None:
        """Why ``value`` does not answer this number question (None: it fits the bounds)."""
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            return f"{value} is outside [{self.minimum}, {self.maximum}]"
        return None

    def digits_problem(self, digits: str) -> str | None:
        """Why ``digits`` does not answer this digits question (None: the length fits)."""
        if self.length is not None and len(digits) != self.length:
            return f"{len(digits)} digits, expected {self.length}"
        return None

    def default_answer(self) -> Answer | None:
        """The answer to assume when the deadline passes (``via="default"``), if any."""
        if self.default_choice_id is None:
            return None
        value: bool | str
        if self.kind is AnswerKind.CONFIRM:
            value = self.default_choice_id == "yes"
        else:
            value = self.choice(self.default_choice_id).label
        return Answer(value, self.default_choice_id, 1.0, "", "default")


def _choice_from_label(label: str, taken: set[str]) -> Choice:
    if not isinstance(label, str):
        raise AnswerSpecError(f"a choice must be a string or Choice, got {type(label).__name__}")
    base = _slug(label)
    cid, n = base, 2
    while cid in taken:
        cid, n = f"{base}_{n}", n + 1
    return Choice(cid, label)


def _choice_from_json(raw: Any) -> Choice | str:
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, Mapping):
        raise AnswerSpecError(f"a choice must be a string or an object, got {raw!r}")
    label = raw.get("label")
    if not isinstance(label, str):
        raise AnswerSpecError(f"choice {raw!r} needs a string 'label'")
    cid = raw.get("id", _slug(label))
    synonyms = raw.get("synonyms", [])
    if not isinstance(cid, str) or not isinstance(synonyms, list | tuple):
        raise AnswerSpecError(f"choice {raw!r}: 'id' must be a string, 'synonyms' a list")
    if not all(isinstance(s, str) for s in synonyms):
        raise AnswerSpecError(f"choice {raw!r}: synonyms must be strings")
    return Choice(cid, label, tuple(synonyms))


def _required_str(arguments: Mapping[str, Any], key: str, tool: str) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or not value.strip():
        raise AnswerSpecError(f"{tool}.{key} must be a non-empty string")
    return value


def _optional_number(arguments: Mapping[str, Any], key: str) -> float | None:
    value = arguments.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AnswerSpecError(f"AskUserQuestion.{key} must be a number")
    return float(value)
