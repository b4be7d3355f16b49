"""What a journal writes to (:class:`JournalStore`) and what its writer reports
(:class:`JournalStats`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ._entry import JournalEntry

__all__ = ["JournalStats", "JournalStore"]


class JournalStore(Protocol):
    """Where entries are kept (blocking calls, made from the journal's writer thread)."""

    def last(self) -> tuple[int, str] | None:
        """The newest entry's sequence number and digest."""

    def append(self, entries: Sequence[JournalEntry]) -> None:
        """Write entries atomically, in order, if the newest stored entry is the one the first
        links to; else raise :class:`ChainMoved` (another writer appended first)."""

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        """Entries in sequence order (all, or one request's)."""

    def contains(self, entry: JournalEntry) -> bool:
        """Whether this very entry (its sequence number and digest) is stored."""

    def close(self) -> None:
        """Release the store."""


@dataclass
class JournalStats:
    """What the writer did: entries written, failed writes, entries dropped, gaps recorded,
    batches re-linked because another writer appended first, failed writes found stored."""

    written: int = 0
    failures: int = 0
    dropped: int = 0
    gaps: int = 0
    relinked: int = 0
    unsure: int = 0
    """Failed writes that had in fact reached the store (the reply was lost)."""
    late: int = 0
    """``sync`` journal: settled outcomes not stored within ``sync_timeout`` (their calls
    failed with :class:`JournalUnavailableError`; the entries stay queued)."""
    anchor_failures: int = 0
    """Checkpoints that could not be saved to the anchor (see ``last_error``)."""
    unclosed: list[str] = field(default_factory=list)
    """Other writers this journal found, when it started, that had not closed cleanly: each
    is still running elsewhere or stopped without closing, and entries it had accepted may be
    missing (what ``voice-hitl journal verify`` also reports)."""
    last_error: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
