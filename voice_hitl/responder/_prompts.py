"""What a spoken question sounds like: phrasing from the tool call and its ``AnswerSpec``.

A high-risk confirmation asks for the challenge word ("say confirm, or press 1") or, given a
``code`` (``EvidencePolicy(challenge="code")``), for that code ("say the code four, seven,
two, or press 1"); every re-prompt that asks for it again says the code again. On a line
without a keypad (``keypad=False``: a conference whose addressed lines carry no tones) no
prompt offers one: the spoken word, or the operator console or an answer link instead.
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
    keypad: bool = True,
) -> str:
    """The question as it is spoken: a confirm ends with "Please say yes or no" (with
    ``challenge``, a high-risk confirm, with "say confirm, or press 1", or with a ``code``
    "say the code four, seven, two, or press 1", or without ``spoken`` approvals with "press
    1" alone), choices are read out, keypad entry is offered for digits; without a ``keypad``
    on the line, nothing offers one (the console or an answer link instead of "press 1")."""
    return _for_line(_question(tool_name, spec, challenge, spoken, code), keypad)


def _question(
    tool_name: str, spec: AnswerSpec, challenge: bool, spoken: bool, code: str | None
) -> str:
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
    keypad: bool = True,
) -> str:
    """The re-prompt after an answer that could not be understood."""
    question = phrase_question(
        tool_name, spec, challenge=challenge, spoken=spoken, code=code, keypad=keypad
    )
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
_ELSEWHERE = "approve from the operator console or your answer link"
_WITHOUT_KEYPAD = {
    _PRESS_ONE: f"To go ahead, {_ELSEWHERE}. To stop, say no.",
    _CHALLENGE_RETRIES["keypad"]: (
        f"I could not hear that clearly. Please say it once more, or {_ELSEWHERE}."
    ),
    _CHALLENGE_RETRIES["keypad_only"]: (
        f"I could not take that as a yes. Please say it once more, or {_ELSEWHERE}."
    ),
    ", or press 1": "",
    " You can also key it in, then press pound.": "",
}
"""What a prompt says instead of the keypad on a line that has none."""


def _for_line(text: str, keypad: bool) -> str:
    if keypad:
        return text
    for with_keys, without in _WITHOUT_KEYPAD.items():
        text = text.replace(with_keys, without)
    return text


def phrase_challenge_retry(
    retry: str, *, spoken: bool = True, code: str | None = None, keypad: bool = True
) -> str:
    """What to say when a high-risk yes lacked evidence (``Verdict.retry``); with a ``code``,
    the code again (after ``"repeat"``, the new one); without ``spoken`` approvals, whatever
    the retry, the keypad alone (without a ``keypad``, the console or an answer link)."""
    if not spoken:
        text = _SPOKEN_OFF
    elif code is not None:
        text = _CODE_RETRIES.get(retry, _CODE_RETRIES["again"]).format(code=speak_code(code))
    else:
        text = _CHALLENGE_RETRIES.get(retry, _CHALLENGE_RETRIES["again"])
    return _for_line(text, keypad)


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
