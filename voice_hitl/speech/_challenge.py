"""Is a reading the challenge word said alone?

A high-risk confirmation asks the person to say the challenge word ("confirm", "approve").
Taking that word wherever it stands let sentences that *use* it approve: "I'd like to confirm
it tomorrow", "check with my wife first, then confirm", "why do I need to confirm", "who
approved this", and noise heard as "and confirm the ... ok" or a number as "approve, and 5".
So a challenge answer is the challenge word said alone, with only what goes with it:

* fillers and hesitation sounds ("uh, confirm", "well, confirm");
* politeness ("confirm, please", "confirm, thank you");
* a plain agreement beside it ("yes, confirm", "okay, approve", "go ahead, I confirm"):
  these say the same thing;
* "I" (or "I will", "I do") right before the word ("I confirm", "I'll confirm") and "it",
  "that" or "always" right after it ("confirm it"; "confirm always", which approval-gated tools
  offer).

"confirm the transfer" is not taken either: the words after it may name another thing
("confirm the amount first"), and telling them apart needs the action's own words. The
re-prompt then asks for the word on its own.

Any other word (a time, a person, a number, a question word, a conjunction, a second verb)
means the person said something else that contains the word: never an approval. The dialogue
asks again, then offers the keypad. Every reading the line has (the text understood and the
words as heard, which may come from different recogniser passes) is held to the rule.

One more shape is never an answer, whatever the words: a reading that ends with a question
mark is a question back ("I approve, right?").

The word said twice in one reading ("confirm, confirm") is still an answer: Whisper writes a
single "confirm" that way on muffled or noisy lines, and a rule against it (tried in issue 32)
sent those confirmations to the keypad while stopping no near-miss that the free reading's
check (`_yes_heard.doubt_yes`: "Trim, trim.") did not already stop (``bench/results_risk.txt``).

A code challenge (`voice_hitl.speech._code`, ``EvidencePolicy(challenge="code")``) holds the
answer to the same companions and the same question rule.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from ._text import tokens
from ._vocab import CHALLENGE_WORDS

__all__ = [
    "CHALLENGE_COMPANIONS",
    "QUESTION_BACK",
    "challenge_extras",
    "companion",
    "in_phrase",
    "said_alone",
]

QUESTION_BACK = "a question back, not an answer"

CHALLENGE_COMPANIONS: frozenset[str] = frozenset(
    {"um", "umm", "uh", "uhh", "er", "erm", "hmm", "hm", "ah", "eh", "oh", "mm", "well",
     "please", "thanks", "yes", "yeah", "yep", "yup", "ok", "okay", "alright", "sure", "right"}
)  # fmt: skip
"""Words that may stand anywhere beside the challenge word."""

_PHRASES = (("thank", "you"), ("go", "ahead"))
"""Phrases that may stand anywhere beside the challenge word."""

_BEFORE = (("i",), ("i", "will"), ("i", "do"))
"""Phrases allowed only right before a challenge word ("I confirm", "I'll confirm")."""

_AFTER = frozenset({"it", "that", "always"})
"""Words allowed only right after a challenge word ("confirm it"; "confirm always", which an
approval-gated tool offers to approve the tool for the rest of the call: still a yes to this
action, and taken as "always" only where the request offers it)."""


def in_phrase(
    toks: Sequence[str], i: int, phrase: tuple[str, ...], *, before: int | None = None
) -> bool:
    """Whether ``toks[i]`` is part of an occurrence of ``phrase`` (one that ends at or before
    index ``before``, when given)."""
    n = len(phrase)
    limit = len(toks) if before is None else before
    return any(
        tuple(toks[start : start + n]) == phrase and start + n <= limit
        for start in range(max(0, i - n + 1), i + 1)
    )


def _before(
    toks: Sequence[str], i: int, phrase: tuple[str, ...], words: Collection[str]
) -> bool:
    """Whether ``toks[i]`` is part of ``phrase`` standing right before a challenge word."""
    n = len(phrase)
    for start in range(max(0, i - n + 1), i + 1):
        end = start + n
        if tuple(toks[start:end]) == phrase and end < len(toks) and toks[end] in words:
            return True
    return False


def companion(toks: Sequence[str], i: int) -> bool:
    """Whether ``toks[i]`` may stand anywhere beside a challenge answer (the word or a code):
    a filler, politeness or a plain yes (`CHALLENGE_COMPANIONS`), or part of "thank you" or
    "go ahead"."""
    return toks[i] in CHALLENGE_COMPANIONS or any(
        in_phrase(toks, i, phrase) for phrase in _PHRASES
    )


def challenge_extras(
    toks: Sequence[str], words: Collection[str] = CHALLENGE_WORDS
) -> list[str]:
    """The tokens of ``toks`` that do not go with a challenge word (see the module docstring);
    ``[]`` when the reading is the challenge word said alone (or holds no word at all)."""
    extras: list[str] = []
    for i, tok in enumerate(toks):
        if tok in words or companion(toks, i):
            continue
        if any(_before(toks, i, phrase, words) for phrase in _BEFORE):
            continue
        if tok in _AFTER and i > 0 and toks[i - 1] in words:
            continue
        extras.append(tok)
    return extras


def said_alone(
    readings: Iterable[str], words: Collection[str] = CHALLENGE_WORDS
) -> tuple[bool, str]:
    """Whether ``readings`` (one utterance's readings) answer the challenge: some reading
    holds a challenge word, no reading holds a word that does not go with it or ends with a
    question mark.

    Returns:
        ``(answered, why not)``; the reason is "" when answered.
    """
    readings = list(readings)
    if any(reading.rstrip().endswith("?") for reading in readings):
        return False, QUESTION_BACK
    said = [tokens(reading) for reading in readings]
    extras = [tok for toks in said for tok in challenge_extras(toks, words)]
    if extras:
        shown = ", ".join(dict.fromkeys(extras))
        return False, f"the challenge word was not said alone (also heard: {shown})"
    if not any(tok in words for toks in said for tok in toks):
        return False, "the challenge word was not said"
    return True, ""
