"""`plain_yes` and `plain_no`: a recognised yes (or a second reading's no) must be the whole
utterance, not one word among others.

In babble, Whisper writes the other talkers' words around an affirmative it also heard or
invented: "yeah, let me apologize for a minute", "alright, much more of that time, alright"
(the development adversarial set, ``audio_fixtures/adversarial``, at 5-10 dB babble). The text
rule of `understand` reads those as yes, because an affirmative is there and nothing negates
it. A person who means yes says a yes phrase, perhaps with politeness, filler, a word or two
that go with a yes ("sure thing", "that works") or the words of the question itself ("yes,
move it to savings"); anything else around the yes makes the reading doubtful, and the
recogniser then gives no hypothesis, so the person is asked again.
"""

from __future__ import annotations

from .._spec import AnswerSpec
from .._text import FILLERS, tokens
from .._vocab import (
    AFFIRMATIVE_PHRASES,
    CHALLENGE_WORDS,
    NEGATION_WORDS,
    NEGATIVE_PHRASES,
    POLITE_WORDS,
    STOPWORDS,
)

__all__ = ["plain_no", "plain_yes"]

_YES_WORDS = frozenset(word for phrase in AFFIRMATIVE_PHRASES for word in phrase)
_COMPANIONS = frozenset(
    {"thing", "works", "looks", "perfect", "true", "totally", "really", "very", "much", "too",
     "also", "now", "then", "does", "was", "we", "its", "on", "yours", "mhm", "mm", "huh"}
)  # fmt: skip
"""Words that go with a yes ("sure thing", "that works", "perfect, thanks", "we are good")
beyond the affirmatives, politeness, stopwords and fillers, which `_ALLOWED` adds."""

_ALLOWED = _YES_WORDS | POLITE_WORDS | STOPWORDS | FILLERS | _COMPANIONS


def plain_yes(transcript: str, spec: AnswerSpec) -> bool:
    """Whether every word of ``transcript`` belongs with a yes to ``spec``'s question (see
    the module docstring): affirmatives, politeness, filler, yes companions, or the question's
    own words. A transcript holding a challenge word ("confirm", "approve") is judged by the
    challenge's own checks instead: recognisers rarely invent those words, and in babble the
    other talkers' words around a real "I confirm" are no reason to doubt it."""
    words = tokens(transcript)
    if set(words) & CHALLENGE_WORDS:
        return True
    return _all_allowed(words, _ALLOWED, spec)


def _all_allowed(words: list[str], allowed: frozenset[str], spec: AnswerSpec) -> bool:
    """Whether every word is in ``allowed`` or among the words of ``spec``'s question."""
    question = set(tokens(spec.question))
    return all(word in allowed or word in question for word in words)


_NO_WORDS = frozenset(word for phrase in NEGATIVE_PHRASES for word in phrase) | NEGATION_WORDS
_NO_COMPANIONS = frozenset(
    {"rather", "absolutely", "definitely", "certainly", "really", "now", "want", "sorry"}
)
"""Words that go with a no ("I'd rather not", "absolutely not", "not now", "sorry, no")."""

_ALLOWED_WITH_NO = _NO_WORDS | POLITE_WORDS | STOPWORDS | FILLERS | _NO_COMPANIONS


def plain_no(transcript: str, spec: AnswerSpec) -> bool:
    """Whether every word of ``transcript`` belongs with a no to ``spec``'s question: the
    negatives, politeness, filler, no companions, or the question's own words. A second
    reading that holds a "not" inside another sentence ("he's not going to rain") is no
    answer to a yes/no question."""
    return _all_allowed(tokens(transcript), _ALLOWED_WITH_NO, spec)
