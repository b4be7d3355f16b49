"""Yes/no understanding with a conservative safety rule.

Safety rule: a transcript is read as *yes* only if it contains an affirmative phrase and no
word of `NEGATION_WORDS`, no hesitation ("wait", "hold on"), no hedge ("maybe") and no
deferral ("let me think about it", "let me confirm": the person has not answered yet). A
transcript that mixes yes and no words is *no* only when every affirmative is itself negated
("absolutely not", "don't go ahead") or the caller corrected themselves to a no ("yes, I mean
no"); otherwise it is a `NoMatch` (contradictory). Getting a "no" wrong costs a re-ask;
getting a "yes" wrong can move money.

The challenge words ("confirm", "approve") say yes only when said alone (`challenge_extras`):
in a larger sentence ("why do I have to confirm this", "check with my wife, then confirm")
they are a verb about something else, and the reading is asked again, at every tier, even
beside another yes word ("yes, you confirm this" heard for "who asked you to confirm this").

A yes that asks a question back ("why do I need to confirm?") or waits on something ("yes,
after I talk to my wife", "confirm it tomorrow") is asked again at every tier (`_not_yet`).

A no built from one short word repeated ("nah, nah, nah", "please, no, no, no") is asked again
rather than taken: a recogniser writes babble that way, and a wrong no refuses what the person
wanted. So is a yes built only from short units each said twice or more ("it's fine, fine";
"alright, alright, fine, fine, fine"), at every tier: the same habit invents yeses (`_repeat`;
one word said over, "yes, yes, yes", and a challenge word said twice are still a yes).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._answer import Answer, NoMatch, NoMatchReason, Via
from ._challenge import challenge_extras
from ._not_yet import asks_back, defers
from ._repeat import repeated_no, repeated_yes
from ._text import CORRECTION_MARKERS, find_phrase, split_corrections, tokens
from ._vocab import (
    AFFIRMATIVE_PHRASES,
    AMBIGUOUS_IDIOMS,
    CHALLENGE_WORDS,
    DEFERRALS,
    HESITATIONS,
    INTENSIFIERS,
    NEGATION_WORDS,
    NEGATIVE_PHRASES,
    POLITE_WORDS,
    UNCERTAIN_PHRASES,
)

__all__ = ["CONFIRM_MARKERS", "holds_yes", "understand_confirm"]

CONFIRM_MARKERS = tuple(m for m in CORRECTION_MARKERS if m not in (("no",), ("no", "wait")))
"""Correction markers for yes/no questions (a bare "no" is an answer there, not a marker)."""


def _spans(toks: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for phrase in phrases:
        i = find_phrase(toks, phrase)
        while i >= 0:
            spans.append((i, i + len(phrase)))
            i = find_phrase(toks, phrase, i + 1)
    return spans


def _has_any(toks: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> bool:
    return any(find_phrase(toks, p) >= 0 for p in phrases)


def _negated(toks: Sequence[str], span: tuple[int, int]) -> bool:
    """Whether the affirmative at ``span`` is negated ("not okay", "absolutely not")."""
    start, end = span
    if any(t in ("not", "never") for t in toks[max(0, start - 2) : start]):
        return True
    # "absolutely not", "please do not": the affirmative is undone by the "not" after it
    return end < len(toks) and toks[end] == "not" and (
        toks[end - 1] in INTENSIFIERS or toks[end - 1] == "do"
    )


def holds_yes(toks: Sequence[str]) -> bool:
    """Whether ``toks`` hold an affirmative that is not itself negated: "yeah, not right"
    does (whatever else it says), "absolutely not" does not."""
    return any(not _negated(toks, s) for s in _spans(toks, AFFIRMATIVE_PHRASES))


def _polarity(toks: Sequence[str]) -> str:
    """``"yes"``, ``"no"``, ``"mixed"`` or ``"none"`` for one stretch of tokens."""
    has_neg = any(t in NEGATION_WORDS for t in toks)
    aff = _spans(toks, AFFIRMATIVE_PHRASES)
    if not has_neg:
        return "yes" if aff else "none"
    if all(_negated(toks, s) for s in aff):
        return "no"
    return "mixed"


def _clean(toks: Sequence[str], spans: list[tuple[int, int]]) -> bool:
    covered = {i for s, e in spans for i in range(s, e)}
    return all(i in covered or t in POLITE_WORDS for i, t in enumerate(toks))


_YES_ADVERBS = frozenset({"then", "now", "too", "also", "really", "totally", "definitely"})
"""Words that go with a yes word beside a challenge word ("alright then, I confirm")."""


def _challenge_in_a_sentence(toks: Sequence[str]) -> bool:
    """Whether a challenge word is used inside a larger sentence ("why do I have to confirm
    this", "I'd rather confirm it tomorrow"), beside another yes word or not ("yes, you
    confirm this" for "who asked you to confirm this"): `challenge_extras` finds words that do
    not go with it (a plain agreement beside it does: "yes, confirm"; beside one, an adverb
    of agreement too: "alright then, I confirm"). Such a reading is no yes at any tier."""
    if not set(toks) & CHALLENGE_WORDS:
        return False
    extras = challenge_extras(toks)
    spans = _spans(toks, AFFIRMATIVE_PHRASES)
    if any(not set(toks[start:end]) <= CHALLENGE_WORDS for start, end in spans):
        extras = [t for t in extras if t not in _YES_ADVERBS]  # another yes word is said
    return bool(extras)


def understand_confirm(toks: list[str], transcript: str, via: Via) -> Answer | NoMatch:
    """Read a yes/no answer from filler-free tokens (see the module docstring)."""
    if _has_any(toks, AMBIGUOUS_IDIOMS):
        return NoMatch(NoMatchReason.UNCERTAIN, transcript, "an idiom that may mean yes or no")
    if _has_any(toks, UNCERTAIN_PHRASES):
        return NoMatch(NoMatchReason.UNCERTAIN, transcript, "the caller hedged")
    polarity = _polarity(toks)
    if polarity == "yes":
        if _challenge_in_a_sentence(toks):
            return NoMatch(
                NoMatchReason.UNCERTAIN, transcript, "the challenge word inside a sentence"
            )
        if _has_any(toks, HESITATIONS):
            return NoMatch(NoMatchReason.CONTRADICTORY, transcript, "yes with a hesitation")
        if asks_back(transcript):
            return NoMatch(NoMatchReason.UNCERTAIN, transcript, "a question back")
        if defers(toks):
            return NoMatch(NoMatchReason.UNCERTAIN, transcript, "a yes that waits on something")
        if _has_any(tokens(transcript), DEFERRALS):
            return NoMatch(NoMatchReason.UNCERTAIN, transcript, "the caller has not answered yet")
        if repeated_yes(toks):
            return NoMatch(NoMatchReason.UNCERTAIN, transcript, "a short yes repeated")
        spans = _spans(toks, AFFIRMATIVE_PHRASES)
        confidence = 0.95 if _clean(toks, spans) else 0.8
        return Answer(True, "yes", confidence, transcript, via)
    if polarity == "no":
        if repeated_no(toks):
            return NoMatch(NoMatchReason.UNCERTAIN, transcript, "one short word repeated")
        spans = _spans(toks, NEGATIVE_PHRASES)
        aff = _spans(toks, AFFIRMATIVE_PHRASES)
        confidence = 0.95 if not aff and _clean(toks, spans) else 0.85
        return Answer(False, "no", confidence, transcript, via)
    if polarity == "mixed":
        segments = split_corrections(toks, CONFIRM_MARKERS)
        if len(segments) > 1 and _polarity(segments[-1]) == "no":
            return Answer(False, "no", 0.7, transcript, via)
        return NoMatch(NoMatchReason.CONTRADICTORY, transcript, "both yes and no were heard")
    return NoMatch(NoMatchReason.NOT_UNDERSTOOD, transcript, "no yes or no word was heard")
