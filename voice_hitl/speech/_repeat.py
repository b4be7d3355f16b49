"""Readings built from repetition: how Whisper writes babble and noise.

Whisper writes sounds it cannot place as a short unit said again and again: "nah, nah, nah"
and "please, no, no, no" (for "please do") as no's, "alright, alright, fine, fine, fine",
"it's fine, fine" and "okay, I'm good, ok, I'm good" as yeses (babble and noisy lines of
``audio_fixtures/adversarial6``, none of them a yes). One rule serves both sides:

* `runs` splits a reading's words into *runs*, each a unit of one to three words said once
  or more in a row ("alright alright fine fine fine" is ``alright`` twice, ``fine`` three
  times);
* `repeated_no`: a no made of one short unit said three times or more ("nah, nah, nah");
* `repeated_yes`: a yes whose words, stopwords aside ("it's", "I'm"), are all runs said twice
  or more, "ok" and "okay" (and "all right", "alright") one word. Two shapes stay a yes: one
  word alone said over and over ("yes, yes, yes"; "alright, alright, alright, alright"),
  which is how Whisper wrote true yeses in babble (``heldout3``: 2 of 80 would be lost, and
  no adversarial yes was left that the other checks did not stop), and a challenge word said
  twice ("confirm, confirm": one muffled "confirm", `_challenge`).

`_confirm.understand_confirm` asks either again, so the rule holds at every tier, for every
reading Whisper checks and for every recogniser. Measured in bench/results_risk.txt
(2026-12-06, issue 32 item 6: adversarial6's low tier 16.7 -> 8.3 per 1,000, no true yes lost
on heldout3/4/6/7 or the confirmation sets).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._vocab import CHALLENGE_WORDS, NEGATION_WORDS, POLITE_WORDS, STOPWORDS

__all__ = ["Run", "one_spelling", "repeated_no", "repeated_yes", "runs"]

Run = tuple[tuple[str, ...], int]
"""A unit of words and how many times in a row it was said."""

_SAME = {"ok": "okay"}
"""Spellings of one word ("all right" is read as "alright" before this: `_understand`)."""


def one_spelling(toks: Sequence[str]) -> list[str]:
    """``toks`` with each word in one spelling of it ("ok" and "okay" are one word)."""
    return [_SAME.get(t, t) for t in toks]


_LONGEST = 3
"""Most words in a yes's repeated unit ("okay I'm good": okay, good once stopwords go)."""

_NO_LETTERS = 4
"""Most letters per word of a no's repeated unit ("nah", "nope"; "do not")."""


def _said_over(words: Sequence[str], start: int, unit: Sequence[str]) -> int:
    """How many times ``unit`` is said in a row from ``start`` in ``words``."""
    size, times = len(unit), 0
    while list(words[start + times * size : start + (times + 1) * size]) == list(unit):
        times += 1
    return times


def runs(words: Sequence[str], longest: int = _LONGEST) -> list[Run]:
    """``words`` as runs of one unit said in a row, the shortest unit that repeats first
    ("no no no" is ``no`` three times, not ``no no`` once and ``no`` once); a word that is
    not repeated is a run of one said once."""
    out: list[Run] = []
    i = 0
    while i < len(words):
        unit: tuple[str, ...] = (words[i],)
        for size in range(1, longest + 1):
            candidate = tuple(words[i : i + size])
            if len(candidate) == size and _said_over(words, i + size, candidate) >= 1:
                unit = candidate
                break
        times = _said_over(words, i, unit)
        out.append((unit, times))
        i += times * len(unit)
    return out


def repeated_no(toks: Sequence[str]) -> bool:
    """Whether ``toks`` (filler-free words of a no) are one short unit said three times or
    more, with nothing but politeness beside it and perhaps the unit begun once more ("nah,
    nah, nah", "please, no, no, no", "don't, don't, don't, do"). A unit is one word of up to
    four letters or two words ("do not")."""
    said = [t for t in toks if t not in POLITE_WORDS or t in NEGATION_WORDS]
    found = runs(said, 2)
    if not found:
        return False
    unit, times = found[0]
    leftover = said[times * len(unit) :]
    short = sum(len(t) for t in unit) <= _NO_LETTERS * len(unit)
    return short and times >= 3 and leftover == list(unit[: len(leftover)])


def repeated_yes(toks: Sequence[str]) -> bool:
    """Whether ``toks`` (filler-free words of a yes) are, stopwords aside, made only of units
    of one to three words each said twice or more in a row ("alright, alright, fine, fine,
    fine"; "okay, I'm good, ok, I'm good"; "it's fine, fine"). Not a yes word alone said over
    and over ("yes, yes, yes"): Whisper writes one true yes that way in babble, as it writes
    one "confirm" as "confirm, confirm"; nor a unit holding a challenge word."""
    same = one_spelling(toks)
    said = [t for t in same if t not in STOPWORDS]
    if len(set(same)) <= 1 or set(said) & CHALLENGE_WORDS:
        return False
    return all(times >= 2 for _, times in runs(said))
