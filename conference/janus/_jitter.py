"""A fixed-delay jitter buffer for one RTP stream (sans I/O).

Packets are pushed as they arrive, in any order; the playout side pops one packet's worth every
20 ms. Playout starts once ``depth`` packets are buffered (``depth`` x 20 ms of delay absorbs
that much jitter), then follows the sequence numbers: a missing packet is a gap (``None``,
counted as lost), a packet older than the playout point is dropped (counted as late), and a
buffer that runs dry re-primes (waits for ``depth`` packets again) so a paused stream resumes
cleanly. Sequence numbers wrap at 2**16.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["JitterBuffer", "JitterStats"]

T = TypeVar("T")


def _ahead(a: int, b: int) -> int:
    """How far sequence ``a`` is ahead of ``b`` (negative: behind), modulo 2**16."""
    return ((a - b + 0x8000) & 0xFFFF) - 0x8000


@dataclass(slots=True)
class JitterStats:
    """What the buffer did: packets played, lost (gaps), late (dropped) and duplicated."""

    played: int = 0
    lost: int = 0
    late: int = 0
    duplicate: int = 0
    underruns: int = 0
    overflow: int = 0
    """Packets dropped unplayed because the buffer was full (the player fell behind)."""


class JitterBuffer(Generic[T]):
    """Reorders one stream's packets and plays them out at a fixed delay.

    Args:
        depth: Packets buffered before playout starts (the delay, in packet times).
        capacity: Packets kept at most; beyond it the packets still missing before the
            oldest are given up (counted lost), or when none are, the oldest is dropped
            (counted in ``overflow``), so a player that falls behind (a starved event loop)
            stays at most ``capacity`` packets behind instead of drifting.

    Raises:
        ValueError: ``depth`` < 1 or ``capacity`` < ``depth``.
    """

    def __init__(self, depth: int = 3, capacity: int = 50) -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, got {depth}")
        if capacity < depth:
            raise ValueError(f"capacity ({capacity}) must be at least depth ({depth})")
        self.depth = depth
        self.capacity = capacity
        self.stats = JitterStats()
        self._packets: dict[int, T] = {}
        self._next: int | None = None  # the sequence number to play next; None: priming

    def __len__(self) -> int:
        return len(self._packets)

    def push(self, sequence: int, item: T) -> None:
        """Buffer the packet with ``sequence`` (0..65535)."""
        sequence &= 0xFFFF
        if self._next is not None and _ahead(sequence, self._next) < 0:
            self.stats.late += 1
            return
        if sequence in self._packets:
            self.stats.duplicate += 1
            return
        self._packets[sequence] = item
        if len(self._packets) > self.capacity and self._next is not None:
            self._skip_to_oldest()

    def _oldest(self) -> int:
        anchor = next(iter(self._packets))
        return min(self._packets, key=lambda s: _ahead(s, anchor))

    def _skip_to_oldest(self) -> None:
        assert self._next is not None
        oldest = self._oldest()
        skipped = _ahead(oldest, self._next)
        if skipped > 0:
            self.stats.lost += skipped
            self._next = oldest
        else:
            del self._packets[oldest]
            self.stats.overflow += 1
            self._next = (oldest + 1) & 0xFFFF

    def pop(self) -> tuple[bool, T | None]:
        """The next packet time: ``(False, None)`` while priming or after running dry,
        ``(True, None)`` for a lost packet, ``(True, item)`` for one played."""
        if self._next is None:
            if len(self._packets) < self.depth:
                return False, None
            self._next = self._oldest()
        if not self._packets:
            self._next = None
            self.stats.underruns += 1
            return False, None
        sequence = self._next
        self._next = (sequence + 1) & 0xFFFF
        item = self._packets.pop(sequence, None)
        if item is None:
            self.stats.lost += 1
            return True, None
        self.stats.played += 1
        return True, item
