"""One-time codes a high-risk question asks the caller to say ("To go ahead, say the code
four, seven, two, or press 1"): three digits, adjacent digits distinct. `say` speaks a digit
string; `code_phrase` says it the ways a true confirmation does; the rest make the wrong
codes an adversarial set says, and `check_codes` refuses one that is the code after all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "CODE_FORMS",
    "DIGIT_WORDS",
    "check_codes",
    "code_phrase",
    "is_code",
    "replaced",
    "say",
    "say_tens",
    "swapped",
    "with_digit",
    "without",
]

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
CODE_FORMS = ("plain", "commas", "uh", "please", "yes", "code_is", "tens")
"""The forms of `code_phrase`."""
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def is_code(code: str) -> bool:
    """Three digits, adjacent digits distinct."""
    return len(code) == 3 and code.isdigit() and code[0] != code[1] != code[2]


def say(digits: str, sep: str = " ") -> str:
    """``"472"`` as ``"four seven two"`` (``sep=", "``: ``"four, seven, two"``)."""
    return sep.join(DIGIT_WORDS[int(d)] for d in digits)


def say_tens(code: str) -> str:
    """``"472"`` as ``"four seventy-two"``: the first digit, then the last two as a number.

    Raises:
        ValueError: the middle digit is under 2 or the last is 0 ("four oh two", "four ten",
            "four seventy" say it otherwise).
    """
    if not code.isdigit() or len(code) != 3 or code[1] in "01" or code[2] == "0":
        raise ValueError(f"{code!r} has no plain 'four seventy-two' reading")
    return f"{DIGIT_WORDS[int(code[0])]} {_TENS[int(code[1])]}-{DIGIT_WORDS[int(code[2])]}"


def replaced(code: str, at: int, digit: str) -> str:
    """``code`` with its digit ``at`` replaced by ``digit`` (one digit off)."""
    return code[:at] + digit + code[at + 1 :]


def swapped(code: str, at: int) -> str:
    """``code`` with digits ``at`` and ``at + 1`` swapped."""
    return code[:at] + code[at + 1] + code[at] + code[at + 2 :]


def with_digit(code: str, at: int, digit: str) -> str:
    """``code`` with ``digit`` put in at ``at`` (``at == len(code)``: appended)."""
    return code[:at] + digit + code[at:]


def without(code: str, at: int) -> str:
    """``code`` without its digit ``at``."""
    return code[:at] + code[at + 1 :]


def code_phrase(form: str, code: str) -> str:
    """The code said in ``form`` (`CODE_FORMS`): ``"four seven two"``, ``"four, seven,
    two"``, ``"uh, ..."``, ``"..., please"``, ``"yes, ..."``, ``"the code is ..."``,
    ``"four seventy-two"``."""
    plain = say(code)
    return {
        "plain": plain,
        "commas": say(code, ", "),
        "uh": "uh, " + plain,
        "please": plain + ", please",
        "yes": "yes, " + plain,
        "code_is": "the code is " + plain,
        "tens": say_tens(code),
    }[form]


def check_codes(
    codes: Iterable[str],
    rows: Iterable[Sequence[str]],
    wrong: Iterable[str] = ("wrong_code", "stale_code"),
) -> None:
    """Refuse a code that is not one (`is_code`), and a row ``(id, category, code, text)`` of
    a ``wrong`` category whose digit words spell its code.

    Raises:
        SystemExit: naming the first fault.
    """
    codes = tuple(codes)
    if not all(is_code(c) for c in codes):
        raise SystemExit(f"not a code: {codes}")
    words = {w: str(d) for d, w in enumerate(DIGIT_WORDS)}
    categories = set(wrong)
    for uid, category, code, text in rows:
        digits = "".join(words.get(w.strip(",?.:"), "") for w in text.split())
        if category in categories and digits == code:
            raise SystemExit(f"{uid}: says the code it should get wrong")
