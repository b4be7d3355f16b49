"""Choice understanding: labels said loosely, synonyms, ordinals and positions.

Within one stretch of speech (after self-corrections are cut off) a choice is *mentioned* by
its label or a synonym (all content words, in order; plural/singular and small misspellings
tolerated), by position ("the second one", "number three", "option 2", "the last one",
"the middle one") or, failing those, by a word only its label contains. A mention preceded by
a negation ("not the red one") is dropped. Exactly one mentioned choice is an answer; two or
more is `NoMatch(AMBIGUOUS)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from ._answer import Answer, NoMatch, NoMatchReason, Via
from ._numbers import parse_numbers
from ._spec import Choice
from ._text import find_phrase, split_corrections, tokens
from ._vocab import NEGATION_WORDS, NONE_PHRASES, ORDINALS, POSITION_PREFIXES, STOPWORDS

__all__ = ["choice_phrases", "label_spans", "understand_choices"]


def choice_phrases(choice: Choice) -> list[tuple[str, ...]]:
    """Token phrases for a choice's label and synonyms, stopwords dropped where possible."""
    out: list[tuple[str, ...]] = []
    for text in (choice.label, *choice.synonyms):
        toks = tokens(text)
        content = tuple(t for t in toks if t not in STOPWORDS) or tuple(toks)
        if content and content not in out:
            out.append(content)
    return out


def _same(a: str, b: str) -> bool:
    if a == b:
        return True
    if a.rstrip("s") == b.rstrip("s") and min(len(a), len(b)) >= 3:
        return True
    if min(len(a), len(b)) >= 5:
        return SequenceMatcher(None, a, b).ratio() >= 0.8
    return False


def _find(toks: Sequence[str], phrase: Sequence[str]) -> list[tuple[int, int]]:
    """Spans where ``phrase`` occurs, stopwords in between allowed."""
    spans: list[tuple[int, int]] = []
    for start in range(len(toks)):
        if not _same(toks[start], phrase[0]):
            continue
        i, j = start + 1, 1
        while j < len(phrase) and i < len(toks):
            if _same(toks[i], phrase[j]):
                j += 1
            elif toks[i] not in STOPWORDS:
                break
            i += 1
        if j == len(phrase):
            spans.append((start, i))
    return spans


@dataclass(frozen=True, slots=True)
class _Mention:
    index: int
    start: int
    end: int
    strength: float


def label_spans(toks: Sequence[str], choices: Sequence[Choice]) -> list[tuple[int, int, int]]:
    """``(choice_index, start, end)`` for every label or synonym mention in ``toks``."""
    found: list[tuple[int, int, int]] = []
    for idx, choice in enumerate(choices):
        for phrase in choice_phrases(choice):
            found.extend((idx, s, e) for s, e in _find(toks, phrase))
    return found


def _negated(toks: Sequence[str], start: int) -> bool:
    """Whether a negation comes right before ``start`` (stopwords between allowed)."""
    i = start - 1
    while i >= 0 and toks[i] in STOPWORDS:
        i -= 1
    return i >= 0 and (toks[i] in NEGATION_WORDS or toks[i] in ("except", "but"))


def _positions(toks: Sequence[str], count: int, taken: set[int]) -> list[_Mention | int]:
    """Position mentions; an ``int`` in the list is an out-of-range position."""
    out: list[_Mention | int] = []
    for i, t in enumerate(toks):
        if i in taken:
            continue
        pos: int | None = None
        end = i + 1
        if t == "last":
            pos = count
            if i >= 1 and toks[i - 1] in ("second", "2nd"):
                continue
        elif t == "penultimate" or (
            t in ("second", "2nd") and i + 1 < len(toks) and toks[i + 1] == "last"
        ):
            pos, end = count - 1, i + 2
        elif t in ("second", "2nd") and toks[i + 1 : i + 3] == ["to", "last"]:
            pos, end = count - 1, i + 3
        elif t == "middle" and count % 2 == 1:
            pos = count // 2 + 1
        elif t in ORDINALS:
            pos = ORDINALS[t]
        elif t in POSITION_PREFIXES and i + 1 < len(toks):
            nums = parse_numbers(toks[i + 1 : i + 3])
            if nums and isinstance(nums[0], int):
                pos, end = nums[0], i + 2
        if pos is None:
            continue
        if not 1 <= pos <= count:
            out.append(pos)
        elif not _negated(toks, i):
            out.append(_Mention(pos - 1, i, end, 0.9))
    return out


def _bare_number(toks: Sequence[str], choices: Sequence[Choice]) -> int | None:
    """A lone number ("two", "the two") as a position, unless labels contain numbers.

    "one" after a word that is neither filler nor a number is the pronoun ("the orange one",
    "that other one"), not a position.
    """
    content = [
        t
        for i, t in enumerate(toks)
        if t not in STOPWORDS
        or (t == "one" and (i == 0 or toks[i - 1] in STOPWORDS or parse_numbers(toks[i - 1 : i])))
    ]
    if not content or any(parse_numbers(tokens(c.label)) for c in choices):
        return None
    nums = parse_numbers(content)
    if len(nums) == 1 and len(content) <= 2 and isinstance(nums[0], int):
        return nums[0]
    return None


def _distinctive(toks: Sequence[str], choices: Sequence[Choice]) -> list[_Mention]:
    owners: dict[str, set[int]] = {}
    for idx, choice in enumerate(choices):
        for phrase in choice_phrases(choice):
            for word in phrase:
                owners.setdefault(word, set()).add(idx)
    out: list[_Mention] = []
    for i, t in enumerate(toks):
        for word, idxs in owners.items():
            unique = len(idxs) == 1 and word not in STOPWORDS
            if unique and _same(t, word) and not _negated(toks, i):
                out.append(_Mention(next(iter(idxs)), i, i + 1, 0.7))
    return out


def _segment(
    toks: list[str], choices: Sequence[Choice], transcript: str, via: Via
) -> Answer | NoMatch | None:
    mentions: list[_Mention] = []
    for idx, s, e in label_spans(toks, choices):
        if not _negated(toks, s):
            mentions.append(_Mention(idx, s, e, 0.95))
    # A mention inside a longer one ("blue" inside "dark blue") is not a mention.
    mentions = [
        m
        for m in mentions
        if not any(
            o.index != m.index
            and o.start <= m.start
            and m.end <= o.end
            and o.end - o.start > m.end - m.start
            for o in mentions
        )
    ]
    taken = {i for m in mentions for i in range(m.start, m.end)}
    for p in _positions(toks, len(choices), taken):
        if isinstance(p, int):
            return NoMatch(NoMatchReason.NOT_UNDERSTOOD, transcript, f"there is no choice {p}")
        mentions.append(p)
    if not mentions:
        bare = _bare_number(toks, choices)
        if bare is not None:
            if not 1 <= bare <= len(choices):
                return NoMatch(NoMatchReason.NOT_UNDERSTOOD, transcript, f"no choice {bare}")
            mentions.append(_Mention(bare - 1, 0, len(toks), 0.8))
    if not mentions:
        mentions = _distinctive(toks, choices)
    chosen = {m.index for m in mentions}
    if len(chosen) == 1:
        idx = chosen.pop()
        confidence = max(m.strength for m in mentions)
        choice = choices[idx]
        return Answer(choice.label, choice.id, confidence, transcript, via)
    if len(chosen) > 1:
        names = ", ".join(sorted(choices[i].label for i in chosen))
        return NoMatch(NoMatchReason.AMBIGUOUS, transcript, f"several choices heard: {names}")
    if any(find_phrase(toks, p) >= 0 for p in NONE_PHRASES):
        return NoMatch(NoMatchReason.NONE_OF_THEM, transcript, "the caller rejected every choice")
    return None


def understand_choices(
    toks: list[str], choices: Sequence[Choice], transcript: str, via: Via
) -> Answer | NoMatch:
    """Read a choice from filler-free tokens; the last self-correction wins."""
    for segment in reversed(split_corrections(toks)):
        result = _segment(segment, choices, transcript, via)
        if result is not None:
            return result
    return NoMatch(NoMatchReason.NOT_UNDERSTOOD, transcript, "no choice was heard")
