"""Is a challenge answer heard, or made up? `doubt_yes`: what the free reading says against it.

A recogniser prompted with the challenge words ("confirm", "approve") writes them for sounds
that are not them: "confront", "conform, please", "firm, firm" were all written "confirm" by
the prompted passes. The pass without a prompt (the *free* reading) has no pull toward the
word, and two of its shapes are evidence that the person did not say it:

* **it wrote a near-miss of the word, word for word** ("Confront.", "Conformed, please." for
  a prompted "confirm"): the sound the prompted pass turned into the challenge word is
  another word (`NEAR_MISSES`, single words only: the splits "can firm", "come firm" are
  how the free pass spells a true "confirm" too);
* **it is one short word said again and again** ("Trim, trim.", "Thumb thumb"): the
  person repeated a short sound, which the prompted passes wrote "confirm, confirm" (a
  reading built from a repeated token; see also `_repeat`: the repeated no, and the repeated
  yes at every tier).

Either asks again, at every tier: a re-ask costs a turn, a wrong yes can move money.
Measured in bench/results_risk.txt (2026-12-06, branch lowtier).
"""

from __future__ import annotations

from ._near_miss import NEAR_MISSES
from ._repeat import runs
from ._text import FILLERS, tokens
from ._vocab import AFFIRMATIVE_PHRASES, CHALLENGE_WORDS, POLITE_WORDS

__all__ = ["NEAR_MISS_WORDS", "doubt_yes", "one_word_repeated"]

NEAR_MISS_WORDS: frozenset[str] = frozenset(
    near for nears in NEAR_MISSES.values() for near in nears if " " not in near
)
"""The single-word near-misses of the challenge words ("conform", "confront", "approach")."""

_YES_WORDS = frozenset(word for phrase in AFFIRMATIVE_PHRASES for word in phrase)


def one_word_repeated(reading: str) -> bool:
    """Whether ``reading`` is one word, not a yes word, said twice or more and nothing else
    but fillers and politeness ("Trim, trim.", "Thumb thumb")."""
    said = [t for t in tokens(reading) if t not in FILLERS and t not in POLITE_WORDS]
    found = runs(said, 1)
    return len(found) == 1 and found[0][1] >= 2 and said[0] not in _YES_WORDS


def doubt_yes(said: str, free: str) -> str | None:
    """Why the challenge answer ``said`` (a prompted reading) should be asked again, given
    the free (unprompted) reading ``free``, or ``None`` when the free reading says nothing
    against it (see the module docstring). A reading without a challenge word is left to the
    other checks."""
    if not set(tokens(said)) & CHALLENGE_WORDS:
        return None
    near = [t for t in tokens(free) if t in NEAR_MISS_WORDS]
    if near:
        return f"the free reading heard {near[0]!r}"
    if one_word_repeated(free):
        return "the free reading is one word repeated"
    return None
