"""JSGF grammars built from an `AnswerSpec`, for grammar-constrained recognisers.

The grammar accepts the answers the question expects and the meta-intent phrases. A garbage
loop (phone pseudo-words, or a few hundred ordinary words) was tried for rejecting out-of-set
speech, but PocketSphinx's FSG search became 50-500x slower (RTF 1-20) with it, so rejection
is done by the recogniser instead (see `PocketsphinxRecognizer`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .._choices import choice_phrases
from .._spec import AnswerKind, AnswerSpec
from .._text import tokens
from .._vocab import AFFIRMATIVE_PHRASES, NEGATIVE_PHRASES, ORDINALS

__all__ = ["GRAMMAR_META", "answer_phrases", "build_jsgf"]

GRAMMAR_META = (
    "cancel", "cancel that", "never mind", "forget it", "repeat", "repeat that",
    "say that again", "come again", "pardon", "operator", "agent", "representative",
    "a person", "real person", "human",
)  # fmt: skip
"""Meta-intent phrases the grammars accept (a subset of what `understand` knows: phrases
such as "what was that" attracted out-of-set speech in the fixtures)."""

_CONFIRM_EXTRA = (
    "don't", "don't do that", "don't do it", "do not do that", "not really", "thank you",
    "thanks", "please", "yeah sure", "sure", "absolutely not", "definitely not",
    "certainly not", "of course not", "not okay", "not now", "not yet", "please don't",
    "no thanks",
)  # fmt: skip
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    "hundred", "thousand", "million", "point", "and", "a", "half", "quarter", "dollars",
    "dollar", "cents", "bucks", "euros", "pounds", "minus",
)  # fmt: skip
_DIGIT_WORDS = (
    "zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    "double", "triple",
)  # fmt: skip
_UNITS = "one | two | three | four | five | six | seven | eight | nine"
_TEENS = (
    "ten | eleven | twelve | thirteen | fourteen | fifteen | sixteen | seventeen | eighteen"
    " | nineteen"
)
_TENS = "twenty | thirty | forty | fifty | sixty | seventy | eighty | ninety"
_DIGIT = "zero | oh | " + _UNITS
_CURRENCY = "dollars | dollar | bucks | euros | pounds"
_ORDINAL_WORDS = [w for w in ORDINALS if w.isalpha()]


def _join(phrases: Iterable[tuple[str, ...]]) -> list[str]:
    return [" ".join(p) for p in phrases]


def answer_phrases(spec: AnswerSpec) -> list[str] | None:
    """The phrases a grammar for ``spec`` accepts, or ``None`` for free text (no grammar).

    Number and digits questions return single words, which the grammar loops over.
    """
    if spec.kind is AnswerKind.CONFIRM:
        answers = _join(AFFIRMATIVE_PHRASES) + _join(NEGATIVE_PHRASES) + list(_CONFIRM_EXTRA)
    elif spec.kind is AnswerKind.CHOICES:
        answers = []
        for choice in spec.choices:
            for phrase in choice_phrases(choice):
                text = " ".join(phrase)
                answers += [text, f"the {text}", f"the {text} one", f"{text} please"]
        count = len(spec.choices)
        cardinals = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
        for word in _ORDINAL_WORDS[:count]:
            answers += [word, f"the {word}", f"the {word} one"]
        for word in cardinals[:count]:
            answers += [f"number {word}", f"option {word}"]
        answers += ["the last one", "last", "the middle one", "none of them", "please"]
    elif spec.kind is AnswerKind.NUMBER:
        answers = list(_NUMBER_WORDS)
    elif spec.kind is AnswerKind.DIGITS:
        answers = list(_DIGIT_WORDS)
    else:
        return None
    seen: dict[str, None] = {}
    for text in answers:
        seen.setdefault(" ".join(tokens(text)) if "'" not in text else text, None)
    return list(seen)


def _number_rules(spec: AnswerSpec) -> list[str]:
    """Rules for a spoken amount: cardinals, "twelve hundred", decimals, halves, currency.

    A bounded question (``maximum`` under a thousand or a million) leaves out the larger
    scales, and a non-negative one leaves out "minus", so fewer wrong readings compete.
    """
    top = max(abs(spec.minimum or 0.0), abs(spec.maximum)) if spec.maximum is not None else None
    scales = [w for w, size in (("thousand", 1e3), ("million", 1e6)) if top is None or top >= size]
    sign = "" if spec.minimum is not None and spec.minimum >= 0 else "[minus] "
    rules = [
        f"<units> = {_UNITS};",
        f"<teens> = {_TEENS};",
        f"<tens> = {_TENS};",
        f"<digit> = {_DIGIT};",
        "<n99> = <units> | <teens> | <tens> [<units>];",
        "<n999> = <n99> | (a | <n99>) hundred [[and] <n99>];",
    ]
    if scales:
        rules.append(f"<int> = zero | <n999> | (a | <n999>) ({' | '.join(scales)}) [[and] <n999>];")
    else:
        rules.append("<int> = zero | <n999>;")
    rules += [
        "<fraction> = and a (half | quarter);",
        f"<currency> = {_CURRENCY};",
        "<cents> = and <n99> cents;",
        f"<answer> = {sign}(<int> [<fraction>] | [<int>] point <digit>+ | a (half | quarter))"
        " [<currency> [<cents>]] | <n99> cents;",
    ]
    return rules


def _digit_rules(spec: AnswerSpec) -> list[str]:
    """Rules for a digit string: "oh" for zero, "double"/"triple", a fixed ``length``."""
    if spec.length is not None:
        return [f"<digit> = {_DIGIT};", "<answer> = " + " ".join(["<digit>"] * spec.length) + ";"]
    return [
        f"<digit> = {_DIGIT};",
        "<answer> = ([double | triple] <digit>)+;",
    ]


def build_jsgf(spec: AnswerSpec, known: Callable[[str], bool]) -> str | None:
    """A JSGF grammar for ``spec``, or ``None`` for free text.

    Confirm and choices grammars accept one phrase; number grammars a structured amount
    ("one thousand two hundred", "twelve hundred", "two point five", "five hundred dollars",
    "two and a half"); digits grammars a digit sequence ("nine oh five", "double four").
    Any of them may instead be one meta-intent phrase.

    Args:
        spec: the question.
        known: whether the recogniser's dictionary has a word; phrases with unknown words
            are left out.
    """
    phrases = answer_phrases(spec)
    if phrases is None:
        return None
    meta = [p for p in GRAMMAR_META if all(known(w) for w in p.split())]
    if spec.kind is AnswerKind.NUMBER:
        rules = _number_rules(spec)
    elif spec.kind is AnswerKind.DIGITS:
        rules = _digit_rules(spec)
    else:
        usable = [p for p in phrases if p and all(known(w) for w in p.split())]
        if not usable:
            return None
        rules = [f"<answer> = {' | '.join(usable)};"]
    return "\n".join(
        [
            "#JSGF V1.0;",
            "grammar answer;",
            "public <utterance> = <answer> | <meta>;",
            *rules,
            f"<meta> = {' | '.join(meta)};",
            "",
        ]
    )
