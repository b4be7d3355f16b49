"""``SampleFifo``: PCM16 samples buffered in chunks of any size, taken a frame at a time."""

from __future__ import annotations

from collections import deque

import numpy as np

from providers.base import PCM16

__all__ = ["SampleFifo"]


class SampleFifo:
    """Buffered samples, pushed in chunks of any size and taken ``n`` at a time."""

    __slots__ = ("_chunks", "available")

    def __init__(self) -> None:
        self._chunks: deque[PCM16] = deque()
        self.available = 0
        """How many samples are buffered."""

    def push(self, samples: PCM16) -> None:
        """Buffer ``samples`` (an empty array is ignored)."""
        if len(samples):
            self._chunks.append(samples)
            self.available += len(samples)

    def clear(self) -> None:
        """Drop everything buffered."""
        self._chunks.clear()
        self.available = 0

    def take(self, n: int) -> PCM16:
        """Up to ``n`` samples, zero-padded to ``n``."""
        out = np.zeros(n, dtype=np.int16)
        filled = 0
        while filled < n and self._chunks:
            chunk = self._chunks[0]
            used = min(n - filled, len(chunk))
            out[filled : filled + used] = chunk[:used]
            filled += used
            if used == len(chunk):
                self._chunks.popleft()
            else:
                self._chunks[0] = chunk[used:]
        self.available -= filled
        return out
