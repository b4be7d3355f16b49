"""Near-misses of the challenge words: what a recogniser may hear as "confirm" but is not.

Whisper tiny.en hears "conform", "comfort" and "can firm" word for word as "confirm"; no text
rule can tell them apart, only the audio. So a reading that answers the challenge is scored
against the same reading with the challenge word swapped for each of its acoustic
near-neighbours (`competitors`), and the answer is taken only when the word asked for scores
clearly above the best of them (`Competition`, `voice_hitl.responder._risk.weigh_yes`).

The neighbours (`NEAR_MISSES`) are English words or word splits a phone or a few away from
each challenge word (a vowel changed, a nasal or a final consonant swapped, a syllable split
into two words); they are kept few: each one scored costs a decoder pass, and each one can
only make a true answer harder to take. The splits "can firm", "come firm" and "a prove" sound
like the word itself when its first syllable is reduced ([k@n], [k@m], [@]): they cost the
most true answers, and they are kept because a spoken "can firm" is otherwise taken
(``bench/results_risk.txt``, 2026-12-06).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import partial

__all__ = ["NEAR_MISSES", "Competition", "competitors"]

NEAR_MISSES: dict[str, tuple[str, ...]] = {
    "confirm": ("conform", "comfort", "confer", "can firm", "come firm", "confront"),
    "confirmed": ("conformed", "comforted", "conferred", "can firmed", "confronted"),
    "approve": ("approach", "a proof", "improve", "reprove", "a prove"),
    "approved": ("approached", "improved", "reproved", "a proved"),
}
"""Per challenge word (`CHALLENGE_WORDS`), its acoustic near-neighbours (lower case)."""

_WORD = re.compile(r"[A-Za-z']+")


@dataclass(frozen=True, slots=True)
class Competition:
    """How a reading that answers the challenge scored against its near-misses.

    Attributes:
        heard: the reading scored (the words as heard).
        competitor: the best-scoring near-miss reading.
        gap: nats by which ``heard`` scored above ``competitor`` (negative: below).
    """

    heard: str
    competitor: str
    gap: float

    def as_json(self) -> dict[str, object]:
        """For the answer's evidence and the journal."""
        gap = round(self.gap, 2) if math.isfinite(self.gap) else None
        return {"heard": self.heard, "competitor": self.competitor, "gap": gap}


def competitors(reading: str) -> list[str]:
    """``reading`` with a challenge word swapped for each of its near-misses wherever it
    stands, case kept ("Confirm." -> "Conform.", "Comfort.", ...; "confirm, confirm" ->
    "conform, conform", ...); ``[]`` when it holds no challenge word."""
    out: list[str] = []
    said = dict.fromkeys(m.group().lower() for m in _WORD.finditer(reading))
    for word in said:
        for near in NEAR_MISSES.get(word, ()):
            text = _WORD.sub(partial(_swap, word=word, near=near), reading)
            if text not in out:
                out.append(text)
    return out


def _swap(match: re.Match[str], *, word: str, near: str) -> str:
    """``near`` for a match of ``word`` (capitalised as it was), any other word as it is."""
    if match.group().lower() != word:
        return match.group()
    return near[0].upper() + near[1:] if match.group()[0].isupper() else near
