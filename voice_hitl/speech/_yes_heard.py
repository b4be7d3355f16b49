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

And the free reading must *back* the word (`backs_the_word`): hold it too, or hold the other
yes word the answer has beside it ("Yes, come in." for "yes, confirm"). A free reading that
says yes only in words of its own ("Okay, I'm fine." for a prompted "confirm": a never-heard
"conferred" on a clipping line, approved at the high tier) is no evidence that the word was
said (bench/results_risk.txt, 2026-12-06, branch backs).
"""

from __future__ import annotations

from ._near_miss import NEAR_MISSES
from ._repeat import one_spelling, runs
from ._text import FILLERS, find_phrase, tokens
from ._understand import prepared_words
from ._vocab import AFFIRMATIVE_PHRASES, CHALLENGE_WORDS, POLITE_WORDS

__all__ = ["NEAR_MISS_WORDS", "backs_the_word", "doubt_yes", "one_word_repeated"]

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


def _yes_phrases(reading: str) -> set[tuple[str, ...]]:
    """The yes phrases (`AFFIRMATIVE_PHRASES`) ``reading`` holds, challenge words aside."""
    toks = one_spelling(prepared_words(reading))
    return {
        phrase
        for phrase in AFFIRMATIVE_PHRASES
        if not set(phrase) & CHALLENGE_WORDS and find_phrase(toks, phrase) >= 0
    }


def backs_the_word(said: str, free: str) -> bool:
    """Whether the free reading ``free`` backs the challenge word of the yes ``said``: it
    holds a challenge word too, or one of the other yes phrases ``said`` holds ("Yes, come
    in." for "yes, confirm"). True when ``said`` holds no challenge word."""
    if not set(tokens(said)) & CHALLENGE_WORDS:
        return True
    if set(tokens(free)) & CHALLENGE_WORDS:
        return True
    return bool(_yes_phrases(said) & _yes_phrases(free))
