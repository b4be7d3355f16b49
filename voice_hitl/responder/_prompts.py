"""What a spoken question sounds like: phrasing from the tool call and its ``AnswerSpec``."""

from __future__ import annotations

from ..speech import Answer, AnswerKind, AnswerSpec

__all__ = ["phrase_challenge_retry", "phrase_question", "phrase_read_back", "phrase_reprompt"]

_SAY_YES_OR_NO = "Please say yes or no."
_SAY_CONFIRM = "To go ahead, say confirm, or press 1. To stop, say no."
_PRESS_ONE = "To go ahead, press 1. To stop, say no."


def _join_or(labels: list[str]) -> str:
    if len(labels) <= 1:
        return "".join(labels)
    return ", ".join(labels[:-1]) + f", or {labels[-1]}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".?!" else text + "."


def phrase_question(
    tool_name: str, spec: AnswerSpec, *, challenge: bool = False, spoken: bool = True
) -> str:
    """The question as it is spoken: a confirm ends with "Please say yes or no" (with
    ``challenge``, a high-risk confirm, with "say confirm, or press 1", or without ``spoken``
    approvals with "press 1" alone), choices are read out, keypad entry is offered for
    digits."""
    closing = (_SAY_CONFIRM if spoken else _PRESS_ONE) if challenge else _SAY_YES_OR_NO
    if tool_name == "ConfirmAction":
        return f"Please confirm: {_sentence(spec.question)} {closing}"
    question = _sentence(spec.question)
    if spec.kind is AnswerKind.CONFIRM:
        return f"{question} {closing}"
    if spec.kind is AnswerKind.CHOICES:
        return f"{question} You can say {_join_or([c.label for c in spec.choices])}."
    if spec.kind is AnswerKind.DIGITS:
        return f"{question} You can also key it in, then press pound."
    return question


def phrase_reprompt(
    tool_name: str, spec: AnswerSpec, *, challenge: bool = False, spoken: bool = True
) -> str:
    """The re-prompt after an answer that could not be understood."""
    question = phrase_question(tool_name, spec, challenge=challenge, spoken=spoken)
    return f"Sorry, I didn't catch that. {question}"


_CHALLENGE_RETRIES = {
    "challenge": "To go ahead, please say the word confirm, or press 1.",
    "alone": "To go ahead, please say just the word confirm, on its own, or press 1.",
    "keypad": "I could not hear that clearly. Press 1 to confirm, or 2 to cancel.",
    "speaker": "I could not tell who said that. Please say confirm on your own.",
    "again": "Sorry, I was not sure I heard you. To go ahead, say confirm, or press 1.",
    "repeat": "To be sure, please say confirm once more, or press 1.",
    "keypad_only": "I could not take that as a yes. Press 1 to confirm, or 2 to cancel.",
}
_SPOKEN_OFF = f"A spoken yes cannot approve this. {_PRESS_ONE}"


def phrase_challenge_retry(retry: str, *, spoken: bool = True) -> str:
    """What to say when a high-risk yes lacked evidence (``Verdict.retry``); without
    ``spoken`` approvals, whatever the retry, the keypad alone."""
    if not spoken:
        return _SPOKEN_OFF
    return _CHALLENGE_RETRIES.get(retry, _CHALLENGE_RETRIES["again"])


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
