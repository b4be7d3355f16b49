"""What a spoken question sounds like: phrasing from the tool call and its ``AnswerSpec``.

A high-risk confirmation asks for the challenge word ("say confirm, or press 1") or, given a
``code`` (``EvidencePolicy(challenge="code")``), for that code ("say the code four, seven,
two, or press 1"); every re-prompt that asks for it again says the code again.
"""

from __future__ import annotations

from ..speech import Answer, AnswerKind, AnswerSpec
from ..speech._code import speak_code

__all__ = ["phrase_challenge_retry", "phrase_question", "phrase_read_back", "phrase_reprompt"]

_SAY_YES_OR_NO = "Please say yes or no."
_SAY_CONFIRM = "To go ahead, say confirm, or press 1. To stop, say no."
_PRESS_ONE = "To go ahead, press 1. To stop, say no."
_SAY_CODE = "To go ahead, say the code {code}, or press 1. To stop, say no."


def _join_or(labels: list[str]) -> str:
    if len(labels) <= 1:
        return "".join(labels)
    return ", ".join(labels[:-1]) + f", or {labels[-1]}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".?!" else text + "."


def _closing(challenge: bool, spoken: bool, code: str | None) -> str:
    if not challenge:
        return _SAY_YES_OR_NO
    if not spoken:
        return _PRESS_ONE
    return _SAY_CONFIRM if code is None else _SAY_CODE.format(code=speak_code(code))


def phrase_question(
    tool_name: str,
    spec: AnswerSpec,
    *,
    challenge: bool = False,
    spoken: bool = True,
    code: str | None = None,
) -> str:
    """The question as it is spoken: a confirm ends with "Please say yes or no" (with
    ``challenge``, a high-risk confirm, with "say confirm, or press 1", or with a ``code``
    "say the code four, seven, two, or press 1", or without ``spoken`` approvals with "press
    1" alone), choices are read out, keypad entry is offered for digits."""
    closing = _closing(challenge, spoken, code)
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
    tool_name: str,
    spec: AnswerSpec,
    *,
    challenge: bool = False,
    spoken: bool = True,
    code: str | None = None,
) -> str:
    """The re-prompt after an answer that could not be understood."""
    question = phrase_question(tool_name, spec, challenge=challenge, spoken=spoken, code=code)
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
_CODE_RETRIES = {
    "challenge": "To go ahead, please say the code {code}, or press 1.",
    "alone": "To go ahead, please say just the code {code}, on its own, or press 1.",
    "keypad": _CHALLENGE_RETRIES["keypad"],
    "speaker": "I could not tell who said that. Please say the code {code} on your own.",
    "again": "Sorry, I was not sure I heard you. To go ahead, say the code {code}, or press 1.",
    "repeat": "To be sure, please say a new code: {code}, or press 1.",
    "keypad_only": _CHALLENGE_RETRIES["keypad_only"],
}
_SPOKEN_OFF = f"A spoken yes cannot approve this. {_PRESS_ONE}"


def phrase_challenge_retry(retry: str, *, spoken: bool = True, code: str | None = None) -> str:
    """What to say when a high-risk yes lacked evidence (``Verdict.retry``); with a ``code``,
    the code again (after ``"repeat"``, the new one); without ``spoken`` approvals, whatever
    the retry, the keypad alone."""
    if not spoken:
        return _SPOKEN_OFF
    if code is not None:
        return _CODE_RETRIES.get(retry, _CODE_RETRIES["again"]).format(code=speak_code(code))
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
