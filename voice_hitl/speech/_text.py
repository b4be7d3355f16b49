"""Transcript normalisation shared by the understanding modules.

A transcript becomes a list of lower-case tokens: contractions are expanded ("don't" ->
"do not"), punctuation is dropped (digit groups like "1,000" and decimals like "2.5" are kept
whole), and filler words are removed. `split_corrections` cuts a token list at
self-correction markers ("red, no, blue" -> ``[["red"], ["blue"]]``).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence

__all__ = [
    "CORRECTION_MARKERS",
    "FILLERS",
    "contains_phrase",
    "edit_distance",
    "find_phrase",
    "normalise",
    "split_corrections",
    "strip_fillers",
    "tokens",
]

_CONTRACTIONS: tuple[tuple[str, str], ...] = (
    (r"\bwon't\b", "will not"),
    (r"\bcan't\b", "can not"),
    (r"\bcannot\b", "can not"),
    (r"\bain't\b", "is not"),
    (r"\bshan't\b", "shall not"),
    (r"n't\b", " not"),
    (r"\b(do|does|did|is|are|was|were|should|would|could|have|has)nt\b", r"\1 not"),
    (r"\bdont\b", "do not"),
    (r"\bwont\b", "will not"),
    (r"\bcant\b", "can not"),
    (r"'re\b", " are"),
    (r"'ll\b", " will"),
    (r"'ve\b", " have"),
    (r"'m\b", " am"),
    (r"'d\b", " would"),
    (r"\bit's\b", "it is"),
    (r"\bthat's\b", "that is"),
    (r"\bwhat's\b", "what is"),
    (r"\blet's\b", "let us"),
)

FILLERS: frozenset[str] = frozenset(
    {"um", "umm", "uh", "uhh", "er", "erm", "hmm", "hm", "ah", "eh", "like", "well", "so"}
)
"""Words dropped before matching (hesitations carry no answer)."""

_FILLER_PHRASES: tuple[tuple[str, ...], ...] = (
    ("i", "think"),
    ("i", "guess"),
    ("you", "know"),
    ("let", "me", "see"),
    ("let", "me", "think"),
)

CORRECTION_MARKERS: tuple[tuple[str, ...], ...] = (
    ("no", "wait"),
    ("i", "mean"),
    ("or", "rather"),
    ("scratch", "that"),
    ("make", "that"),
    ("actually",),
    ("sorry",),
    ("wait",),
    ("rather",),
    ("instead",),
    ("no",),
)
"""Phrases after which the caller's answer replaces what came before."""

_TOKEN = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


def normalise(text: str) -> str:
    """Lower-case, unify apostrophes, expand contractions and drop currency symbols."""
    s = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)  # 1,000 -> 1000
    for pattern, repl in _CONTRACTIONS:
        s = re.sub(pattern, repl, s)
    s = re.sub(r"(?<=[a-z])'s\b", "", s)
    return s.replace("'", "")


def tokens(text: str) -> list[str]:
    """Normalise ``text`` and split it into word and number tokens (fillers kept)."""
    return _TOKEN.findall(normalise(text))


def find_phrase(toks: Sequence[str], phrase: Sequence[str], start: int = 0) -> int:
    """Index of the first occurrence of ``phrase`` in ``toks`` at or after ``start``, or -1."""
    n = len(phrase)
    if n == 0:
        return -1
    for i in range(start, len(toks) - n + 1):
        if toks[i] == phrase[0] and tuple(toks[i : i + n]) == tuple(phrase):
            return i
    return -1


def contains_phrase(toks: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether ``phrase`` occurs as consecutive tokens in ``toks``."""
    return find_phrase(toks, phrase) >= 0


def strip_fillers(toks: Iterable[str]) -> list[str]:
    """Remove filler words and filler phrases ("um", "I think")."""
    out = [t for t in toks if t not in FILLERS]
    for phrase in _FILLER_PHRASES:
        i = find_phrase(out, phrase)
        while i >= 0:
            del out[i : i + len(phrase)]
            i = find_phrase(out, phrase)
    return out


def split_corrections(
    toks: Sequence[str], markers: Sequence[tuple[str, ...]] = CORRECTION_MARKERS
) -> list[list[str]]:
    """Split at self-correction markers; the caller meant the last non-empty segment."""
    segments: list[list[str]] = [[]]
    i = 0
    while i < len(toks):
        for marker in markers:
            if tuple(toks[i : i + len(marker)]) == marker:
                segments.append([])
                i += len(marker)
                break
        else:
            segments[-1].append(toks[i])
            i += 1
    return [s for s in segments if s]


def edit_distance(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    """Levenshtein distance between two sequences (letters, phones) over the longer length.

    0.0 for equal sequences (two empty ones included), 1.0 when nothing lines up.
    """
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i]
        for j, b in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1] / max(len(first), len(second), 1)
