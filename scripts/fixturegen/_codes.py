"""One-time codes a high-risk question asks the caller to say ("To go ahead, say the code
four, seven, two, or press 1"): three digits, adjacent digits distinct. `say` speaks a digit
string; the rest make the wrong codes an adversarial set says.
"""

from __future__ import annotations

__all__ = [
    "DIGIT_WORDS",
    "is_code",
    "replaced",
    "say",
    "say_tens",
    "swapped",
    "with_digit",
    "without",
]

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
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
