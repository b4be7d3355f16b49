"""What the journal raises: another writer moved the chain; not a journal; not stored in time."""

from __future__ import annotations

from .._exceptions import ToolFailedError, VoiceHitlError

__all__ = ["ChainMoved", "JournalUnavailableError", "NotAJournalError"]


class ChainMoved(Exception):
    """Another writer appended first; nothing was written.

    The journal re-links its batch to ``head`` (the newest entry's sequence number and digest,
    None for an empty journal) and appends again.
    """

    def __init__(self, head: tuple[int, str] | None) -> None:
        super().__init__(f"the journal's head moved to {head[0] if head else 0}")
        self.head = head


class NotAJournalError(VoiceHitlError, ValueError):
    """What a journal command was pointed at is not a journal (the message says what it is)."""


class JournalUnavailableError(ToolFailedError):
    """A ``sync`` journal could not store a settled outcome in time, so it is not delivered.

    The request stays settled and its entries stay queued: they are written when the store is
    back. The tool call fails with this message (what the model reads) instead of acting on an
    unrecorded decision; the store's error is in the journal's log and ``stats.last_error``.
    """
