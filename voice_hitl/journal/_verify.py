"""Verify a whole journal in one streaming pass: the chain, its anchor, and what may be missing.

:func:`verify_journal` reads entries one at a time (constant memory, whatever the size) and
returns a :class:`Verdict`:

- ``problems``: the journal was changed: an edited, replaced or deleted entry, entries cut from
  its end (the anchor's newest checkpoint is beyond it), a checkpoint not signed with the key,
  no anchor at all. A wrong key is said once (no entry verifies with it), not as one "edited?"
  line per entry.
- ``missing``: nothing was changed, but entries may be missing: a writer that did not close
  (crashed, or still running) and what it had not yet written at its last checkpoint, a writer
  that closed with entries it could not write, and every ``gap`` entry of entries dropped
  while the store was down (a ``gap`` entry a writer wrote on finding entries cut from the end
  is a problem).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ._anchor import Checkpoint, JournalAnchor, newest, read_checkpoint
from ._checkpoints import unclosed_note
from ._entry import EDITED, ChainCheck, ChainProblem, JournalEntry

__all__ = ["Verdict", "verify_journal"]

_LISTED = 1000  # problems (and notes) listed one by one; the rest are counted


@dataclass
class Verdict:
    """What :func:`verify_journal` found."""

    entries: int = 0
    problems: list[str] = field(default_factory=list)
    """How the journal was changed (empty: the chain and its anchor hold)."""
    missing: list[str] = field(default_factory=list)
    """Why entries may be missing although nothing was changed."""
    unlisted: int = 0
    """Problems beyond the first 1,000, counted but not listed."""
    wrong_key: bool = False
    """No entry (and no checkpoint) verifies with the key."""

    @property
    def intact(self) -> bool:
        """The chain and its anchor hold."""
        return not self.problems


def verify_journal(
    entries: Iterable[JournalEntry],
    key: bytes,
    *,
    anchor: JournalAnchor | None = None,
    head_problem: Callable[[tuple[int, str] | None], str | None] | None = None,
) -> Verdict:
    """Check a journal read in sequence order, one entry at a time.

    Args:
        entries: Every entry, in sequence order (an iterator: nothing is kept).
        key: The chain's key.
        anchor: The journal's anchor (None: no anchor is expected, e.g. a custom store).
        head_problem: The store's own check of its last entry (the Redis head key).

    Raises:
        ValueError: The anchor is not an anchor.
    """
    verdict = Verdict()
    points: list[Checkpoint] = []
    unsigned: list[str] = []
    if anchor is not None:
        for line, text in enumerate(anchor.load(), 1):
            try:
                point = read_checkpoint(text, key)
            except ValueError:
                unsigned.append(f"line {line} is not a checkpoint")
                continue
            if point is None:
                writer = json.loads(text).get("writer")
                unsigned.append(f"the checkpoint of writer {writer} is not signed with this key")
            else:
                points.append(point)
        points = list(newest(points).values())
    top = max(points, key=lambda p: p.seq, default=None)
    at_top: str | None = None
    check = ChainCheck(key)
    other: list[ChainProblem] = []  # sequence and link problems: real whatever the key
    edited: list[ChainProblem] = []
    counted = 0
    last: tuple[int, str] | None = None
    cut: list[str] = []  # gap entries a writer wrote on finding the end cut
    for entry in entries:
        for problem in check.feed(entry):
            counted += 1
            if counted <= _LISTED:
                (edited if problem.problem == EDITED else other).append(problem)
        if entry.kind == "gap" and len(verdict.missing) + len(cut) < _LISTED:
            (cut if "missing" in entry.data else verdict.missing).append(_gap_note(entry))
        if top is not None and entry.seq == top.seq:
            at_top = entry.digest
        last = (entry.seq, entry.digest)
    verdict.entries = check.count
    verdict.wrong_key = (check.count > 0 and check.verified == 0) or (
        check.count == 0 and bool(unsigned) and not points
    )
    if verdict.wrong_key:
        signed = " nor any checkpoint of its anchor" if unsigned else ""
        verdict.problems.append(
            f"the key does not match this journal: none of its {check.count} entries{signed} "
            "verifies with it (wrong key?)"
        )
        verdict.problems += [str(p) for p in other]
        verdict.unlisted = max(0, counted - _LISTED)
        return verdict
    merged = heapq.merge(other, edited, key=lambda p: p.seq)
    verdict.problems += [str(p) for p in merged] + cut
    verdict.unlisted = max(0, counted - _LISTED)
    if head_problem is not None:
        head = head_problem(last)
        if head is not None:
            verdict.problems.append(head)
    if anchor is not None:
        _check_anchor(verdict, anchor.where, points, unsigned, last, at_top)
    return verdict


def _check_anchor(
    verdict: Verdict,
    where: str,
    points: list[Checkpoint],
    unsigned: list[str],
    last: tuple[int, str] | None,
    at_top: str | None,
) -> None:
    for problem in unsigned:
        verdict.problems.append(f"anchor {where}: {problem} (forged?)")
    top = max(points, key=lambda p: p.seq, default=None)
    ends = 0 if last is None else last[0]
    if top is None:
        if ends:
            verdict.problems.append(
                f"no checkpoint in the anchor ({where}): entries deleted from the end cannot be "
                "ruled out (the anchor is missing or was emptied)"
            )
        return
    if ends < top.seq:
        missing = f"{ends + 1}" if ends + 1 == top.seq else f"{ends + 1}..{top.seq}"
        verdict.problems.append(
            f"entries {missing} are missing from the end (deleted?): the anchor ({where}) "
            f"says the journal reached entry {top.seq} at {top.at}"
        )
    elif top.seq and at_top != top.digest:
        verdict.problems.append(
            f"entry {top.seq}: not the entry the anchor ({where}) signed (replaced?)"
        )
    for point in points:
        if point.state == "open":
            verdict.missing.append(unclosed_note(point))
        elif point.unwritten:
            verdict.missing.append(
                f"writer {point.writer} closed at {point.at} with {point.unwritten} entries it "
                "could not write"
            )


def _gap_note(entry: JournalEntry) -> str:
    data = entry.data
    if "missing" in data:
        return (
            f"entry {entry.seq}: a writer found entries {data['missing']} cut from the end "
            "(deleted?) when it started"
        )
    return (
        f"entry {entry.seq}: a gap: {data.get('dropped')} entries dropped since "
        f"{data.get('since')} ({data.get('reason')})"
    )
