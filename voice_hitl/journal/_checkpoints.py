"""A writer's checkpoints: what a :class:`~voice_hitl.journal.Journal` signs into its anchor.

The writer thread calls :meth:`Checkpoints.opening` once (before its first write),
:meth:`Checkpoints.stored` after each batch it stored and :meth:`Checkpoints.closing` when it
stops. Saving a checkpoint never fails the journal: an error is counted in
``stats.anchor_failures``, logged, and the next checkpoint tries again.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from datetime import UTC, datetime

from ._anchor import Checkpoint, JournalAnchor, kept, newest, read_checkpoint
from ._record import Record
from ._store import JournalStats, JournalStore

__all__ = ["Checkpoints", "unclosed_note"]

logger = logging.getLogger("voice_hitl.journal")


def unclosed_note(point: Checkpoint) -> str:
    """How ``verify`` and the stats name a writer that did not close cleanly."""
    held = (
        f"{point.unwritten} entries it had accepted were not yet written then"
        if point.unwritten
        else "nothing it had accepted was unwritten then"
    )
    return (
        f"writer {point.writer} did not close (still running, or stopped without closing): "
        f"at its last checkpoint ({point.at}, entry {point.seq}) {held}; those and any it "
        "accepted later may be missing"
    )


class Checkpoints:
    """Signs one writer's checkpoints into an anchor."""

    def __init__(self, anchor: JournalAnchor, key: bytes, stats: JournalStats) -> None:
        self.anchor = anchor
        self.writer = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._key = key
        self._stats = stats
        self._opened = False
        self._head = (0, "")  # the newest entry this writer knows of (opening, or stored)

    def opening(self, store: JournalStore) -> Record | None:
        """Read the anchor before the first write: note writers that never closed, and check
        that the store still reaches the newest checkpoint.

        Returns:
            A ``gap`` record to write first when the store ends before that checkpoint
            (entries were deleted from its end while no writer ran), else None.
        """
        self._opened = True
        try:
            texts = self.anchor.load()
            head = store.last() or (0, "")
        except Exception as exc:
            self._failed(exc)
            return None
        signed = [p for p in map(self._read, texts) if p is not None]
        points = list(newest(signed).values())
        self._stats.unclosed = [unclosed_note(p) for p in points if p.state == "open"]
        for note in self._stats.unclosed:
            logger.warning("journal: %s", note)
        top = max(points, key=lambda p: p.seq, default=None)
        self._head = head
        self._save(head[0], head[1], "open", 0)
        if top is None or head[0] >= top.seq:
            return None
        reason = (
            f"the anchor ({self.anchor.where}) says the journal reached entry {top.seq} "
            f"({top.at}), but it ends at {head[0]}: entries deleted from its end"
        )
        logger.error("journal: %s", reason)
        at = datetime.now(UTC).isoformat()
        data = {"missing": f"{head[0] + 1}..{top.seq}", "anchored": top.seq, "reason": reason}
        return ("", at, "gap", data)

    @property
    def opened(self) -> bool:
        """Whether :meth:`opening` ran."""
        return self._opened

    def stored(self, seq: int, digest: str, unwritten: int) -> None:
        """The writer stored entries up to ``seq``; ``unwritten`` are still queued."""
        self._head = (seq, digest)
        self._save(seq, digest, "open", unwritten)
        if self.anchor.crowded():
            self._compact()

    def closing(self, head: tuple[int, str] | None, unwritten: int) -> None:
        """The writer stopped; ``unwritten`` entries could not be stored (``head``: the newest
        entry it stored, None when it stored none: the one it found when it started)."""
        seq, digest = head or self._head
        self._save(seq, digest, "closed", unwritten)
        self._compact()

    def _compact(self) -> None:
        """Keep the newest checkpoint and each open writer's (unsigned lines are kept too:
        they are not this writer's to drop, and ``verify`` names them)."""
        try:
            texts = self.anchor.load()
            points = {text: self._read(text) for text in texts}
            keep = {id(p) for p in kept([p for p in points.values() if p is not None])}
            chosen = [t for t, p in points.items() if p is None or id(p) in keep]
            self.anchor.rewrite(chosen)
        except Exception as exc:
            self._failed(exc)

    def _read(self, text: str) -> Checkpoint | None:
        try:
            return read_checkpoint(text, self._key)
        except ValueError:
            return None

    def _save(self, seq: int, digest: str, state: str, unwritten: int) -> None:
        at = datetime.now(UTC).isoformat()
        point = Checkpoint(self.writer, seq, digest, state, unwritten, at)  # type: ignore[arg-type]
        try:
            self.anchor.save(self.writer, point.signed(self._key))
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        with self._stats._lock:
            self._stats.anchor_failures += 1
            self._stats.last_error = f"anchor: {type(exc).__name__}: {exc}"
        if self._stats.anchor_failures == 1 or self._stats.anchor_failures % 100 == 0:
            logger.error("journal anchor %s not saved: %s", self.anchor.where, exc)
