"""What a journal store raises when another writer moved the chain."""

from __future__ import annotations

__all__ = ["ChainMoved"]


class ChainMoved(Exception):
    """Another writer appended first; nothing was written.

    The journal re-links its batch to ``head`` (the newest entry's sequence number and digest,
    None for an empty journal) and appends again.
    """

    def __init__(self, head: tuple[int, str] | None) -> None:
        super().__init__(f"the journal's head moved to {head[0] if head else 0}")
        self.head = head
