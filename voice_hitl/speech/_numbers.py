"""Spoken numbers and digit strings.

`parse_numbers` reads every amount in a token list ("five hundred dollars" -> 500, "two point
five" -> 2.5, "one thousand two hundred and five" -> 1205, "two and a half" -> 2.5, "$40" ->
40). Two number words that cannot belong to one amount ("five six") start a new amount, so
"five or six" yields two numbers and the caller can treat it as ambiguous.

`parse_digits` reads a digit string ("one two oh four" -> "1204", "double five" -> "55",
"twenty one" -> "21").
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DIGIT_WORDS", "NUMBER_WORDS", "parse_digits", "parse_numbers"]

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9,
}  # fmt: skip
_TEENS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_FRACTIONS = {"half": 0.5, "quarter": 0.25}

NUMBER_WORDS: frozenset[str] = frozenset(
    {*_UNITS, *_TEENS, *_TENS, *_SCALES, "hundred", "point", "half", "quarter", "minus"}
)
"""Words that can be part of a spoken amount."""

DIGIT_WORDS: dict[str, str] = {**{w: str(v) for w, v in _UNITS.items()}, "oh": "0", "o": "0"}
"""Single spoken digits, including "oh" for zero."""

_UNIT_NOUNS = frozenset(
    {"dollar", "dollars", "buck", "bucks", "euro", "euros", "pound", "pounds", "percent"}
)


class _Amount:
    """Accumulates one spoken amount; `add` says whether a word fits."""

    def __init__(self) -> None:
        self.total = 0
        self.group = 0  # value below the current scale
        self.last = ""  # "unit" | "teen" | "tens" | "hundred" | "scale" | "digits"
        self.words = 0
        self.negative = False

    @property
    def value(self) -> int:
        v = self.total + self.group
        return -v if self.negative else v

    def add(self, word: str) -> bool:
        last = self.last
        if word.isdigit():
            if self.words:
                return False
            self.group, self.last = int(word), "digits"
        elif word in _UNITS or word in _TEENS:
            small = _UNITS.get(word, _TEENS.get(word, 0))
            if last in ("unit", "teen", "digits"):
                return False
            if last == "tens" and word in _TEENS:
                return False
            if last == "tens" and small == 0:
                return False
            self.group += small
            self.last = "unit" if word in _UNITS else "teen"
        elif word in _TENS:
            if last in ("unit", "teen", "tens", "digits"):
                return False
            self.group += _TENS[word]
            self.last = "tens"
        elif word == "hundred":
            if last == "hundred" or last == "scale" or (self.group % 100 == 0 and self.group > 0):
                return False
            self.group = (self.group or 1) * 100
            self.last = "hundred"
        elif word in _SCALES:
            if last == "scale" or (self.group == 0 and self.words and last != "digits"):
                return False
            self.total += (self.group or 1) * _SCALES[word]
            self.group, self.last = 0, "scale"
        else:
            return False
        self.words += 1
        return True


def parse_numbers(toks: Sequence[str]) -> list[int | float]:
    """Every amount in ``toks`` in order; words that are not part of a number are skipped."""
    found: list[int | float] = []
    i, n = 0, len(toks)
    while i < n:
        amount = _Amount()
        start = i
        if toks[i] in ("minus", "negative") and i + 1 < n:
            amount.negative = True
            i += 1
        if toks[i] == "a" and i + 1 < n and toks[i + 1] in ("hundred", "thousand", "million"):
            i += 1
        if _is_decimal(toks[i]):
            value: int | float = float(toks[i])
            found.append(-value if amount.negative else value)
            i += 1
            continue
        while i < n:
            word = toks[i]
            if word == "and" and amount.words and i + 1 < n and toks[i + 1] in _AFTER_AND:
                i += 1
                continue
            if not amount.add(word):
                break
            i += 1
        if amount.words == 0:
            i = start + 1
            continue
        value = amount.value
        value, i = _fraction_tail(toks, i, value)
        found.append(value)
    return found


_AFTER_AND = frozenset({*_UNITS, *_TEENS, *_TENS}) - {"zero"}


def _is_decimal(word: str) -> bool:
    return "." in word and word.replace(".", "", 1).isdigit()


def _fraction_tail(toks: Sequence[str], i: int, value: int) -> tuple[int | float, int]:
    """Handle "point five", "and a half" and "dollars and fifty cents" after an amount."""
    n = len(toks)
    if i + 1 < n and toks[i] == "point":
        digits = ""
        j = i + 1
        while j < n and (toks[j] in _UNITS or toks[j] == "oh" or toks[j].isdigit()):
            digits += DIGIT_WORDS.get(toks[j], toks[j])
            j += 1
        if digits:
            sign = -1 if value < 0 else 1
            return sign * (abs(value) + float("0." + digits)), j
    if i + 2 < n and toks[i] == "and" and toks[i + 1] == "a" and toks[i + 2] in _FRACTIONS:
        return value + _FRACTIONS[toks[i + 2]], i + 3
    if i < n and toks[i] in _UNIT_NOUNS:
        j = i + 1
        if j + 1 < n and toks[j] == "and":
            cents = parse_numbers(toks[j + 1 : j + 3])
            if j + 2 < n and toks[j + 2] in ("cents", "cent", "pence") and cents:
                c = cents[0]
                if isinstance(c, int) and 0 <= c < 100:
                    return value + c / 100, j + 3
        return value, j
    return value, i


def parse_digits(toks: Sequence[str]) -> str:
    """The digit string spoken in ``toks`` ("" if none); non-number words are skipped."""
    out: list[str] = []
    i, n = 0, len(toks)
    while i < n:
        word = toks[i]
        repeat = {"double": 2, "triple": 3}.get(word)
        if repeat and i + 1 < n and toks[i + 1] in DIGIT_WORDS:
            out.append(DIGIT_WORDS[toks[i + 1]] * repeat)
            i += 2
        elif word in DIGIT_WORDS and not (
            word in _UNITS and i + 1 < n and (toks[i + 1] == "hundred" or toks[i + 1] in _SCALES)
        ):
            out.append(DIGIT_WORDS[word])
            i += 1
        elif word.isdigit():
            out.append(word)
            i += 1
        elif word in _UNITS or word in _TEENS or word in _TENS or word == "hundred":
            amount = _Amount()
            while i < n and toks[i] not in ("oh", "o") and amount.add(toks[i]):
                i += 1
            if amount.words:
                out.append(str(amount.value))
            else:
                i += 1
        else:
            i += 1
    return "".join(out)
