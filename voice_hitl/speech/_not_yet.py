"""Is a yes really an answer yet? Questions back and yeses that defer or set a condition.

A yes/no question is answered by a yes or a no. Two shapes hold a yes word and are not one:

* **A question back** ("why do I need to confirm?", "who approved this?", "is that right?",
  "okay, but what is it for?"). The person asks before answering. It shows as the
  recogniser's question mark, or as a clause that opens with a question word ("who", "why",
  "what", ...) or with an auxiliary before its subject ("do I", "is that", "can you",
  "should we"). "Do it" and "do that" are orders, not questions.
* **A yes that defers or sets a condition** ("yes, I'd like to wait until tomorrow",
  "confirm it with my wife first", "okay, but check the amount", "sure, after I talk to my
  manager", "yes if it is under 100", "confirm my address, then we'll see"). The person
  agrees to something other than doing it now: it depends on a condition ("if", "unless",
  "but", "depending"), a time ("until", "after", "tomorrow", "later", "first", "soon"), or
  someone or something they still want to check or wait for ("ask", "check", "talk",
  "think", "wait", "see").

Both are asked again, at every tier: a re-ask costs a turn, a wrong yes can move money.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._text import FILLERS, tokens
from ._vocab import AFFIRMATIVE_PHRASES

__all__ = ["asks_back", "defers"]

_QUESTION_WORDS = frozenset(
    {"who", "whom", "whose", "why", "what", "when", "where", "which", "how"}
)
"""Words that open a question ("who approved this")."""

_AUXILIARIES = frozenset(
    {"is", "are", "was", "were", "am", "does", "did", "can", "could", "would", "will",
     "should", "shall", "may", "might", "must", "have", "has", "had"}
)  # fmt: skip
"""Auxiliaries that open a question when the subject follows ("is that", "can I")."""

_SUBJECTS = frozenset(
    {"i", "you", "we", "they", "he", "she", "it", "that", "this", "there", "someone",
     "somebody", "anyone", "anybody", "my", "your", "the"}
)  # fmt: skip
"""Subjects after an auxiliary that make the clause a question."""

_DO_SUBJECTS = frozenset({"i", "you", "we", "they", "he", "she", "someone", "anyone"})
"""Subjects after "do": "do I" asks, "do it" orders."""

_LEADERS = frozenset(
    {phrase[0] for phrase in AFFIRMATIVE_PHRASES if len(phrase) == 1}
    | FILLERS
    | {"and", "but", "so", "then", "oh", "please", "sorry", "wait", "hey"}
)
"""Words a question may start behind ("okay, but why ...", "yes, and who ...")."""

_CONDITIONS = frozenset(
    {"but", "if", "unless", "until", "till", "after", "before", "once", "first", "later",
     "tomorrow", "tonight", "yet", "whenever", "except", "depends", "depending", "provided",
     "providing", "assuming", "pending", "soon", "eventually", "afterwards", "afterward",
     "meantime", "meanwhile"}
)  # fmt: skip
"""Words that make a yes depend on something: a condition or a later time."""

_TIMES = frozenset(
    {"morning", "afternoon", "evening", "week", "weekend", "month", "hour", "hours",
     "minute", "minutes", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
     "sunday", "next"}
)  # fmt: skip
"""Times a yes may be put off to ("next week", "in an hour")."""

_CHECKS = frozenset(
    {"wait", "check", "ask", "talk", "speak", "discuss", "consult", "think", "review",
     "verify", "decide", "consider", "call", "sleep", "hold", "see"}
)  # fmt: skip
"""Verbs of someone who still has something to do, or to wait for, before answering
("we'll see": wait and see)."""

_CLAUSE = re.compile(r"[.?!,;:]+")
_QUESTION = re.compile(r"([^.?!,;:]*)([.?!,;:]+|$)")
"""A clause and the punctuation that ends it."""


def asks_back(transcript: str) -> bool:
    """Whether ``transcript`` asks a question back (see the module docstring): a question
    mark, or a clause that opens, behind any yes words or fillers, with a question word or
    with an auxiliary and its subject. A tag after an answer ("I approve, right?") is no
    question back: the answer was said."""
    said_before = False
    for clause, mark in _QUESTION.findall(transcript):
        toks = tokens(clause)
        if "?" in mark and not (said_before and all(t in _LEADERS for t in toks)):
            return True
        said_before = said_before or bool(toks)
    return any(_opens_a_question(tokens(clause)) for clause in _CLAUSE.split(transcript))


def _opens_a_question(toks: Sequence[str]) -> bool:
    i = 0
    while i < len(toks) and toks[i] in _LEADERS and toks[i] not in _QUESTION_WORDS:
        i += 1
    if i >= len(toks):
        return False
    first = toks[i]
    following = toks[i + 1] if i + 1 < len(toks) else ""
    if first in _QUESTION_WORDS:
        return True
    if first == "do":
        return following in _DO_SUBJECTS
    return first in _AUXILIARIES and following in _SUBJECTS


def defers(toks: Sequence[str]) -> bool:
    """Whether filler-free ``toks`` put a condition, a later time or a check on the yes
    (see the module docstring)."""
    return any(t in _CONDITIONS or t in _TIMES or t in _CHECKS for t in toks)
