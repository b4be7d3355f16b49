"""What a spoken question sounds like: phrasing from the tool call and its ``AnswerSpec``."""

from __future__ import annotations

from .speech import Answer, AnswerKind, AnswerSpec

__all__ = ["phrase_question", "phrase_read_back", "phrase_reprompt"]

_SAY_YES_OR_NO = "Please say yes or no."


def _join_or(labels: list[str]) -> str:
    if len(labels) <= 1:
        return "".join(labels)
    return ", ".join(labels[:-1]) + f", or {labels[-1]}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".?!" else text + "."


def phrase_question(tool_name: str, spec: AnswerSpec) -> str:
    """The question as it is spoken: a confirm ends with "Please say yes or no", choices are
    read out, keypad entry is offered for digits."""
    if tool_name == "ConfirmAction":
        return f"Please confirm: {_sentence(spec.question)} {_SAY_YES_OR_NO}"
    question = _sentence(spec.question)
    if spec.kind is AnswerKind.CONFIRM:
        return f"{question} {_SAY_YES_OR_NO}"
    if spec.kind is AnswerKind.CHOICES:
        return f"{question} You can say {_join_or([c.label for c in spec.choices])}."
    if spec.kind is AnswerKind.DIGITS:
        return f"{question} You can also key it in, then press pound."
    return question


def phrase_reprompt(tool_name: str, spec: AnswerSpec) -> str:
    """The re-prompt after an answer that could not be understood."""
    return f"Sorry, I didn't catch that. {phrase_question(tool_name, spec)}"


def phrase_read_back(answer: Answer) -> str:
    """The read-back of a high-stakes answer, itself a yes/no question."""
    value = answer.value
    if isinstance(value, bool):
        said = "yes" if value else "no"
    elif isinstance(value, float) and value.is_integer():
        said = str(int(value))
    else:
        said = str(value)
    return f"You said {said}. Is that right? {_SAY_YES_OR_NO}"
