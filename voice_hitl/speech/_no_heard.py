"""Is a no heard, or made up? `doubt_no`: why a no reading is asked again, not taken.

A recogniser that reads an utterance more than once (`WhisperRecognizer`: a pass prompted with
the question's answers, one unprompted) hands every reading here before a no is taken. A wrong
no refuses what the person wanted, so a no stands only when

* no reading holds a yes that is not itself negated ("yea, not right" for "yeah, that's
  right"; the unprompted pass reading "Yes, please do it." for a prompted "do not");
* it does not mix a yes word undone by a "not" with another negation ("not fine, do not"
  for "that's fine, do it"), unless it opens with "no", "nope" or "nah";
* and it is a plain refusal (`plain_refusal`: it opens with "no", "nope", "nah", "not", ...,
  or is a few refusal words only: "definitely not", "no thanks", "please don't"; one that
  opens with "not" or "now" holds at most one word a no does not go with), or every
  other reading that heard words reads as a no too (the readings agree on its polarity) and
  its words go with a no (`off_topic_words`, at most one stray word: "you don't talk into
  the car" for "I'm just parking the car" is a sentence about something else);
* and no other reading heard the same words with another word where its negation is
  (`negation_swapped`: "please, no" against "Please go." for "please do").

Otherwise the person is asked again. Issue 32: most no's not said were misheard speech that
one pass wrote with a negation ("last time, do not." against "Nice time, unit." for "that's
fine, do it"; "hopefully, it's not present" against "Hopefully, click on the person."), or a
no the unprompted pass wrote after the prompted one heard babble ("nah, nah, nah" against
"I'm not going to drink."). Asking again costs a turn; a wrong no refuses the request.
Measured in bench/results_risk.txt (2026-12-06, issue 32 item 6).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._answer import Answer
from ._spec import AnswerSpec
from ._text import FILLERS, find_phrase, tokens
from ._understand import affirms, understand
from ._vocab import (
    AFFIRMATIVE_PHRASES,
    CHALLENGE_WORDS,
    INTENSIFIERS,
    NEGATION_WORDS,
    NEGATIVE_PHRASES,
    POLITE_WORDS,
    STOPWORDS,
)

__all__ = [
    "NO_COMPANIONS",
    "REFUSAL_OPENERS",
    "doubt_no",
    "negation_swapped",
    "off_topic_words",
    "plain_refusal",
    "reads_as_no",
    "yes_counterpart",
    "yes_word_undone",
]

REFUSAL_OPENERS: frozenset[str] = frozenset({"no", "nope", "nah", "negative", "not", "now"})
"""Words a refusal opens with ("no, leave it", "nah, not today", "not now, thanks"; "now" is
how tiny.en spells a leading "no": "now please don't"). Not "nay": tiny.en writes it for
other sounds ("nay, my mind" for "never mind")."""

_LEADERS = frozenset({"please", "oh", "and", "but"})
"""Words a refusal may open behind ("oh, no", "please, not now")."""

_NO_WORDS = frozenset({"no", "nope", "nah", "negative"})
"""Openers that say no by themselves, whatever follows ("no, not correct")."""

_SHORT = 3
"""Most words, politeness aside, a refusal made of refusal words alone may have."""

_REFUSAL_WORDS = frozenset(
    {w for phrase in NEGATIVE_PHRASES for w in phrase} | INTENSIFIERS | {"do", "please"}
)
"""Words a refusal may be made of alone ("definitely not", "no thank you", "please don't")."""


def _said(transcript: str) -> list[str]:
    """The words of ``transcript`` without fillers and politeness (negations kept)."""
    toks = [t for t in tokens(transcript) if t not in FILLERS]
    return [t for t in toks if t not in POLITE_WORDS or t in NEGATION_WORDS]


def _opening(transcript: str) -> list[str]:
    """The words of ``transcript`` without fillers and leaders ("oh", "please": `_LEADERS`):
    its first is the word a refusal opens with."""
    return [t for t in tokens(transcript) if t not in FILLERS and t not in _LEADERS]


def plain_refusal(transcript: str) -> bool:
    """Whether ``transcript`` is a plain refusal: behind fillers, "please" or "oh" it opens
    with a refusal word (`REFUSAL_OPENERS`), or every word is a refusal or polite word and one of
    them a negation ("definitely not", "no thanks", "do not, please")."""
    said = _said(transcript)
    if not said:
        return False
    opening = _opening(transcript)
    if opening[:1] and opening[0] in REFUSAL_OPENERS:
        return True
    return (
        len(said) <= _SHORT
        and all(t in _REFUSAL_WORDS for t in said)
        and bool(set(said) & NEGATION_WORDS)
    )


def yes_word_undone(transcript: str) -> bool:
    """Whether ``transcript`` mixes a yes word undone by a "not" just before it ("not fine")
    with another negation ("not fine, do not"): how one pass wrote "that's fine, do it". An
    order not to act ("do not go ahead") and an intensifier ("definitely not") are no undone
    yes word, and one negation alone ("that's not right") is a plain no."""
    toks = [t for t in tokens(transcript) if t not in FILLERS]
    negations = sum(t in NEGATION_WORDS for t in toks)
    for phrase in AFFIRMATIVE_PHRASES:
        if set(phrase) <= INTENSIFIERS:
            continue
        i = find_phrase(toks, phrase)
        while i >= 0:
            undone = i >= 1 and toks[i - 1] == "not" and (i < 2 or toks[i - 2] != "do")
            if undone and negations >= 2:
                return True
            i = find_phrase(toks, phrase, i + 1)
    return False


_UNDONE = (
    (re.compile(r"\bcan't\b", re.IGNORECASE), "can"),
    (re.compile(r"\bwon't\b", re.IGNORECASE), "will"),
    (re.compile(r"\b(\w+)n't\b", re.IGNORECASE), r"\1"),
    (re.compile(r"\b(not|no|nope|nah|never)\b[,.]?\s*", re.IGNORECASE), ""),
)
"""Each negation of a reading and what is left of its words without it."""


def yes_counterpart(transcript: str) -> str:
    """``transcript`` with its negations taken out ("I don't think so" -> "I do think so",
    "can't go clean" -> "can go clean"): the reading the audio would hold had the person not
    said no. Scored against the no reading by the decoder (`WhisperRecognizer`'s
    ``no_margin``): a no whose negation the audio barely prefers is asked again."""
    text = transcript
    for pattern, kept in _UNDONE:
        text = pattern.sub(kept, text)
    return " ".join(text.split()).strip(" ,")


NO_COMPANIONS: frozenset[str] = frozenset(
    {"rather", "really", "now", "today", "yet", "moment", "time", "right", "sorry", "think",
     "so", "interested", "mind", "change", "changed", "leave", "hold", "off", "stop", "do",
     "does", "did", "have", "anything", "thing", "all", "at", "any", "more", "again", "way",
     "sure", "there", "here", "we", "they", "he", "she", "him", "her", "them", "for", "on",
     "in", "up", "go", "ahead", "send", "done", "ever", "want", "wanted"}
)  # fmt: skip
"""Words a refusal is made of beside the negatives ("I don't think so", "not at the moment",
"no, hold off", "I changed my mind", "I'd rather you didn't", "not interested")."""

_WITH_A_NO = (
    {w for phrase in NEGATIVE_PHRASES for w in phrase}
    | NEGATION_WORDS
    | INTENSIFIERS
    | POLITE_WORDS
    | STOPWORDS
    | FILLERS
    | CHALLENGE_WORDS  # "I won't confirm it"
    | NO_COMPANIONS
)


_OFF_TOPIC = 2
"""Words that do not go with a no from which a no is a sentence about something else: one is
tolerated ("I don't think so, mate", "you know, not yet"), two are not ("you don't talk into
the car", "I did not believe it, man")."""


def off_topic_words(transcript: str, spec: AnswerSpec) -> list[str]:
    """The words of ``transcript`` that do not go with a no to ``spec``'s question: not a
    negative, politeness, filler, a stopword, a challenge word, a refusal's companion
    (`NO_COMPANIONS`) or a word of the question itself ("car" in "you don't talk into the
    car")."""
    question = set(tokens(spec.question))
    return [t for t in tokens(transcript) if t not in _WITH_A_NO and t not in question]


def negation_swapped(said: str, other: str) -> bool:
    """Whether ``other`` is ``said`` with each of its negation words heard as another word
    and every other word the same ("please, no" and "Please go."): one pass wrote a no where
    the other heard the same sentence without any. Both must share a word besides ("nope,
    nope" against "I know." shares none), ``other`` holds no negation at all, and the word in
    the negation's place is no hesitation ("no, I go" against "So, I go")."""
    mine, theirs = tokens(said), tokens(other)
    if not mine or len(mine) != len(theirs) or set(theirs) & (NEGATION_WORDS | REFUSAL_OPENERS):
        return False
    differ = [(a, b) for a, b in zip(mine, theirs, strict=True) if a != b]
    return 0 < len(differ) < len(mine) and all(
        a in NEGATION_WORDS and b not in FILLERS for a, b in differ
    )  # a hesitation ("So, I go ...") in the no's place is no other word heard


def reads_as_no(transcript: str, spec: AnswerSpec) -> bool:
    """Whether `understand` reads ``transcript`` as a no to ``spec``."""
    result = understand(transcript, spec)
    return isinstance(result, Answer) and result.value is False


def doubt_no(
    said: str, readings: Sequence[str], spec: AnswerSpec, *, agree: bool = True
) -> str | None:
    """Why the no read from ``said`` should be asked again, or ``None`` when it stands (see
    the module docstring).

    Args:
        said: the reading the no was taken from.
        readings: every reading of the utterance (``said`` among them; empty ones are
            readings that heard nothing and count for neither side).
        spec: the yes/no question.
        agree: also ask again when the readings disagree on the no (off: only a yes in a
            reading counts against it).
    """
    heard = [r for r in readings if r.strip()]
    if any(affirms(r) for r in [said, *heard]):
        return "a yes in a reading of the no"
    if not agree:
        return None
    says_no = bool(set(_opening(said)[:1]) & _NO_WORDS)
    if yes_word_undone(said) and not says_no:
        return "a yes word undone by a not"
    others = [r for r in heard if r.strip() != said.strip()]
    if any(negation_swapped(said, r) for r in others):
        return "another reading heard another word for the no"
    extra = off_topic_words(said, spec)
    if plain_refusal(said) and (says_no or len(extra) < _OFF_TOPIC):
        # an opening "not" is a refusal only with words that go with one ("not today,
        # I'm busy"); "but not ones to go out" is a sentence the other readings must agree on
        return None
    if not all(reads_as_no(r, spec) for r in others):
        return "the readings disagree on the no"
    if len(extra) >= _OFF_TOPIC:
        return f"words a no does not go with ({', '.join(dict.fromkeys(extra))})"
    return None
