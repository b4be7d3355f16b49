"""Word lists for answer understanding (all lower case, contractions expanded).

Kept in one place so the recogniser grammars and the tests draw on the same vocabulary as
`understand`.
"""

from __future__ import annotations

from ._answer import MetaIntent

__all__ = [
    "AFFIRMATIVE_PHRASES",
    "AMBIGUOUS_IDIOMS",
    "CHALLENGE_WORDS",
    "DEFERRALS",
    "HESITATIONS",
    "INTENSIFIERS",
    "META_PHRASES",
    "NEGATION_WORDS",
    "NEGATIVE_PHRASES",
    "NONE_PHRASES",
    "ORDINALS",
    "POLITE_WORDS",
    "POSITION_PREFIXES",
    "STOPWORDS",
    "UNCERTAIN_PHRASES",
]


def _phrases(*items: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(item.split()) for item in items)


AFFIRMATIVE_PHRASES = _phrases(
    "yes", "yeah", "yep", "yup", "ya", "yah", "yea", "yes please", "sure", "ok", "okay",
    "alright", "all right", "affirmative", "absolutely", "definitely", "certainly", "correct",
    "right", "go ahead", "proceed", "do it", "confirm", "confirmed", "agree", "agreed", "fine",
    "of course", "sounds good", "good", "uhhuh", "mmhmm", "approve", "approved", "indeed",
    "exactly", "please do", "go for it", "that is right", "granted",
)  # fmt: skip
"""Phrases that say yes (``uhhuh``/``mmhmm`` are produced from "uh huh"/"mm hmm")."""

CHALLENGE_WORDS: frozenset[str] = frozenset({"confirm", "confirmed", "approve", "approved"})
"""Words that answer a high-risk confirmation's challenge (recognisers rarely invent them)."""

NEGATION_WORDS: frozenset[str] = frozenset(
    {"no", "not", "never", "nope", "nah", "negative", "nay", "none", "nothing", "neither",
     "nor", "without", "decline", "refuse", "incorrect", "wrong", "deny", "denied",
     "reject", "rejected", "veto", "disapprove", "object"}
)  # fmt: skip
"""Any of these anywhere in a transcript rules out reading it as yes."""

NEGATIVE_PHRASES = _phrases(
    "no", "nope", "nah", "negative", "nay", "never", "no way", "not", "do not",
    "decline", "refuse", "incorrect", "wrong", "no thanks", "no thank you",
    "deny", "denied", "reject", "rejected", "veto", "disapprove", "i object",
)  # fmt: skip
"""Phrases that say no."""

INTENSIFIERS: frozenset[str] = frozenset(
    {"absolutely", "definitely", "certainly", "course", "sure", "surely"}
)
"""Affirmative words that turn negative when followed by "not" ("absolutely not")."""

HESITATIONS = _phrases("wait", "hold on", "hang on", "stop", "hold off")
"""Phrases that forbid reading a transcript as yes."""

DEFERRALS = _phrases(
    "let me think", "let me see", "let me check", "let me confirm", "let me ask", "let me look",
    "let me get back", "think about it", "need to think", "give me a minute",
    "give me a second", "give me a moment", "one moment", "one second", "just a moment",
    "just a second", "not yet",
)  # fmt: skip
"""Phrases of a person who has not answered yet ("right, let me think about it"): never a
yes, even around an affirmative word. Matched before fillers are dropped, since "let me
think" is a filler elsewhere."""

UNCERTAIN_PHRASES = _phrases(
    "maybe", "perhaps", "not sure", "unsure", "do not know", "dunno", "no idea", "probably",
    "possibly", "might", "not certain", "i suppose", "kind of", "sort of",
)  # fmt: skip
"""Hedges: the caller has not decided."""

AMBIGUOUS_IDIOMS = _phrases(
    "no problem",
    "no worries",
    "not a problem",
    "why not",
    "not bad",
    "yeah no",
    "yes and no",
    "i am good",
    "i am fine",
    "i am okay",
    "i am ok",
    "i am alright",
    "we are good",
    "we are fine",
    "we are okay",
)
"""Idioms that mix yes and no words, or whose yes word may decline ("I'm good", "we're fine":
no, thanks); understanding asks again instead of guessing."""

META_PHRASES: dict[MetaIntent, tuple[tuple[str, ...], ...]] = {
    MetaIntent.CANCEL: _phrases(
        "cancel", "cancel that", "never mind", "nevermind", "forget it", "forget about it",
        "abort", "quit", "cancels", "cancelled", "canceled", "cancelling", "canceling",
    ),
    MetaIntent.REPEAT: _phrases(
        "repeat", "repeat that", "repeat the question", "say that again", "say it again",
        "come again", "pardon", "what was that", "what did you say", "one more time",
        "again", "did not catch that", "did not hear", "what was the question",
        "the question again",
    ),
    MetaIntent.OPERATOR: _phrases(
        "operator", "agent", "representative", "human", "a person", "real person", "person",
        "someone", "somebody", "customer service", "receptionist",
    ),
}  # fmt: skip
"""Phrases for the meta-intents every question understands."""

NONE_PHRASES = _phrases("none", "neither", "none of them", "neither of them", "nothing")
"""The caller refuses every choice."""

ORDINALS: dict[str, int] = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
    "ninth": 9, "9th": 9, "tenth": 10, "10th": 10,
}  # fmt: skip
"""Ordinal words and their 1-based position (negative positions are handled separately)."""

POSITION_PREFIXES: frozenset[str] = frozenset({"number", "option", "choice", "item"})
"""Words that make a following number a position ("number three")."""

POLITE_WORDS: frozenset[str] = frozenset(
    {"please", "thanks", "thank", "you", "sir", "madam", "maam", "that", "is", "it", "would",
     "be", "great", "i", "will", "take", "want", "the", "one", "a", "an", "go", "with", "let",
     "us", "me", "pick", "choose", "like", "prefer", "say", "for", "oh", "just"}
)  # fmt: skip
"""Words that add nothing to an answer; used to judge how clean an answer was."""

STOPWORDS: frozenset[str] = frozenset(
    {"the", "a", "an", "one", "ones", "of", "to", "and", "my", "is", "it", "that", "this",
     "i", "want", "would", "like", "can", "could", "you", "me", "let", "please", "talk",
     "speak", "with", "get", "put", "through", "need", "am", "are", "will", "just"}
)  # fmt: skip
"""Words ignored when matching labels and judging free-text meta requests."""
