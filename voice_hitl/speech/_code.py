"""A spoken one-time code: the challenge nobody says by accident.

The challenge word ("confirm") has acoustic near-misses a recogniser hears word for word as the
word itself: on audio nobody here had heard, Whisper tiny.en wrote "confront it" and "can firm
it" as "confirm it", and "firm, firm" as "confirm, confirm". No acoustic margin separates them
from a true confirmation. A code drawn for each request ("four, seven, two") has no such
neighbours: a sentence, a refusal or noise holds those digits, in that order and nothing else,
about once in a thousand draws, and never because it sounds like a yes.

* `draw_code` draws the code (`secrets`; adjacent digits distinct, so it never holds "double"
  or a word said twice in a row); `check_code` validates one a test or a bench injects.
* `speak_code` phrases it for the question ("four, seven, two").
* `code_answered` is the analogue of `said_alone`: every reading of the utterance (the text
  understood and the words as heard, which may come from different recogniser passes) must
  hold the code's digits in order and nothing that does not go with them.

Digit forms taken: numerals ("472", "4 7 2", "4-7-2", "4, 7, 2"); the words zero / oh and one
to nine; tens with their unit ("seventy-two", "seventy two" -> 72; "four seventy-two" -> 472);
the teens; and the homophones "to" / "too" (2), "for" (4), "won" (1) and "ate" (8), but only
inside a run of digits. Beside the code may stand `CHALLENGE_COMPANIONS` (fillers, politeness, a
plain yes), "thank you", "go ahead", and a lead-in before it ("the code is", "it's", "code").
Anything else (a time, a person, a negation, a question word, another number, a partial or
wrong code, an extra digit) is no answer; so is a reading that ends with a question mark (a
question back).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence

from ._challenge import QUESTION_BACK, companion, in_phrase
from ._text import tokens

__all__ = [
    "CODE_NOT_ALONE",
    "CODE_NOT_SAID",
    "NOT_THE_CODE",
    "check_code",
    "code_answered",
    "digits_in",
    "draw_code",
    "says_a_code",
    "speak_code",
]

NOT_THE_CODE = "that was not the code"
CODE_NOT_SAID = "the code was not said"
CODE_NOT_ALONE = "the code was not said alone"

_UNITS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_TEENS = {
    "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
    "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19",
}  # fmt: skip
_TENS = {
    "twenty": "2", "thirty": "3", "forty": "4", "fifty": "5",
    "sixty": "6", "seventy": "7", "eighty": "8", "ninety": "9",
}  # fmt: skip
_HOMOPHONES = {"oh": "0", "o": "0", "to": "2", "too": "2", "for": "4", "won": "1", "ate": "8"}
"""Words that are digits only inside a run of digits ("four oh two"; "for seven two")."""

_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

_LEAD_INS = (("the", "code", "is"), ("code", "is"), ("the", "code"), ("code",), ("it", "is"))
"""Phrases allowed before the code ("the code is 472", "it's 472")."""


def draw_code(digits: int = 3) -> str:
    """A fresh code of ``digits`` digits, adjacent digits distinct (`secrets`)."""
    code = ""
    while len(code) < digits:
        digit = str(secrets.randbelow(10))
        if not code or digit != code[-1]:
            code += digit
    return code


def check_code(code: object, digits: int) -> str:
    """``code`` if it is a string of exactly ``digits`` ASCII digits.

    Raises:
        ValueError: anything else (the message shows it).
    """
    if not isinstance(code, str) or len(code) != digits or not (code.isascii() and code.isdigit()):
        raise ValueError(f"a challenge code must be {digits} digits (0-9), got {code!r}")
    return code


def speak_code(code: str) -> str:
    """The code as the question says it: "472" -> "four, seven, two"."""
    return ", ".join(_NAMES[int(digit)] for digit in code)


def _sure_digit(tok: str) -> bool:
    return tok.isdigit() or tok in _UNITS or tok in _TEENS or tok in _TENS


def _runs(toks: Sequence[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of digit tokens; homophones belong to a run only when it
    holds a token that is surely a digit (a numeral or a number word)."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if not (_sure_digit(toks[i]) or toks[i] in _HOMOPHONES):
            i += 1
            continue
        start = i
        while i < len(toks) and (_sure_digit(toks[i]) or toks[i] in _HOMOPHONES):
            i += 1
        if any(_sure_digit(tok) for tok in toks[start:i]):
            runs.append((start, i))
    return runs


def _run_digits(run: Sequence[str]) -> str:
    """The digits a run says ("four seventy two" -> "472"; "seventy" -> "70")."""
    out = ""
    i = 0
    while i < len(run):
        tok = run[i]
        if tok in _TENS:
            unit = _UNITS.get(run[i + 1], _HOMOPHONES.get(run[i + 1])) if i + 1 < len(run) else None
            if unit is not None and unit != "0":
                out += _TENS[tok] + unit
                i += 2
                continue
            out += _TENS[tok] + "0"
        elif tok in _TEENS:
            out += _TEENS[tok]
        elif tok in _UNITS:
            out += _UNITS[tok]
        elif tok in _HOMOPHONES:
            out += _HOMOPHONES[tok]
        else:
            out += tok
        i += 1
    return out


def _read(toks: Sequence[str], runs: Sequence[tuple[int, int]]) -> str:
    return "".join(_run_digits(toks[start:end]) for start, end in runs)


def digits_in(reading: str) -> str:
    """Every digit ``reading`` says, in order ("" when it says none)."""
    toks = tokens(reading)
    return _read(toks, _runs(toks))


def says_a_code(reading: str) -> str:
    """The code ``reading`` is an answer to ("" when it is none): digits said alone, with
    only what may go with a code, as `code_answered` holds them. A recogniser keeps such a
    reading of a yes/no question (it is never a yes by itself) so that a code challenge can
    weigh it."""
    said = digits_in(reading)
    return said if said and code_answered([reading], said)[0] else ""


def _extras(toks: Sequence[str], runs: Sequence[tuple[int, int]]) -> list[str]:
    """The tokens outside the runs that do not go with a code."""
    inside = {i for start, end in runs for i in range(start, end)}
    first = runs[0][0] if runs else len(toks)
    extras: list[str] = []
    for i, tok in enumerate(toks):
        if i in inside or companion(toks, i):
            continue
        if i < first and any(in_phrase(toks, i, phrase, before=first) for phrase in _LEAD_INS):
            continue
        extras.append(tok)
    return extras


def _answers(reading: str, code: str) -> tuple[str, list[str]]:
    """``(problem, extra words)`` of one reading; the problem is "" when it holds the code."""
    if reading.rstrip().endswith("?"):
        return QUESTION_BACK, []
    toks = tokens(reading)
    runs = _runs(toks)
    if not runs:
        return CODE_NOT_SAID, []
    if _read(toks, runs) != code:
        # "oh, four seven two": a leading "oh" may be the filler, not a zero
        trimmed = [(s + 1, e) if toks[s] in ("oh", "o") else (s, e) for s, e in runs]
        trimmed = [(s, e) for s, e in trimmed if s < e and any(map(_sure_digit, toks[s:e]))]
        if _read(toks, trimmed) != code:
            return NOT_THE_CODE, []
        runs = trimmed
    return "", _extras(toks, runs)


def code_answered(readings: Iterable[str], code: str) -> tuple[bool, str]:
    """Whether ``readings`` (one utterance's readings) answer the code challenge: every
    reading says the code's digits in order and nothing that does not go with them.

    Returns:
        ``(answered, why not)``: "" when answered; else a question back, "that was not the
        code" (wrong, partial or extra digits, another number), "the code was not said", or
        "the code was not said alone (also heard: ...)".
    """
    problems: list[str] = []
    extras: list[str] = []
    readings = list(readings)
    if not readings:
        return False, CODE_NOT_SAID
    for reading in readings:
        problem, extra = _answers(reading, code)
        if problem:
            problems.append(problem)
        extras += extra
    for problem in (QUESTION_BACK, NOT_THE_CODE, CODE_NOT_SAID):
        if problem in problems:
            return False, problem
    if extras:
        return False, f"{CODE_NOT_ALONE} (also heard: {', '.join(dict.fromkeys(extras))})"
    return True, ""
