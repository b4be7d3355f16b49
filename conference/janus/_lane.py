"""``JanusAudioLane``: one audio lane of a :class:`~conference.janus.JanusConferenceBackend`."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from providers.base import PCM16
from voice_hitl.voice._transport import check_pcm16

from .._backend import MixedFrame
from .._sample_fifo import SampleFifo
from ._resample import StreamResampler
from ._rtp import FRAME_SAMPLES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["JanusAudioLane", "OutboundAudio"]


class OutboundAudio:
    """The bot's speech waiting to go out at the codec's rate, taken one packet at a time.

    Args:
        rate: The codec's rate.
        frame: Samples per packet.
    """

    def __init__(self, rate: int = 8_000, frame: int = FRAME_SAMPLES) -> None:
        self.rate = rate
        self.frame = frame
        self._fifo = SampleFifo()

    @property
    def queued(self) -> int:
        """Samples waiting to go out."""
        return self._fifo.available

    def push(self, samples: PCM16) -> None:
        self._fifo.push(samples)

    def clear(self) -> None:
        self._fifo.clear()

    def take(self) -> PCM16 | None:
        """One packet's samples (zero-padded at the end of speech), or None when idle."""
        return self._fifo.take(self.frame) if self._fifo.available else None


class JanusAudioLane:
    """Mixed audio from the AudioBridge in, the bot's speech out (see ``ConferenceAudio``).

    Args:
        sample_rate: The rate the lane speaks (the plugged provider's rate).
        outbound: Where played audio goes (shared by the backend's lanes).
    """

    def __init__(self, sample_rate: int, outbound: OutboundAudio) -> None:
        self.sample_rate = sample_rate
        self._outbound = outbound
        self._downsample = StreamResampler(sample_rate, outbound.rate, quality="MQ")
        self._queue: asyncio.Queue[MixedFrame | None] = asyncio.Queue()
        self.closed = False
        self.barge_ins = 0

    def feed(self, frame: MixedFrame) -> None:
        """Hand a mixed frame (already at :attr:`sample_rate`) to the reader."""
        if not self.closed:
            self._queue.put_nowait(frame)

    def end(self) -> None:
        """The call ended: :meth:`mixed` ends after the frames already fed."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def mixed(self) -> AsyncIterator[MixedFrame]:
        """The participants' mixed audio; ends when the lane closes or the call ends."""
        while True:
            item = await self._queue.get()
            if item is None:
                return
            yield item

    async def play(self, frame: PCM16) -> None:
        """Queue bot audio for the call (sent as RTP at real time).

        Cancellation: safe; the frame is queued whole or not at all.
        """
        if self.closed:
            return
        samples = self._downsample.convert(check_pcm16(frame))
        self._outbound.push(samples)

    async def stop_playback(self) -> None:
        """Drop bot audio not yet sent.

        Cancellation: safe.
        """
        self.barge_ins += 1
        self._outbound.clear()

    async def aclose(self) -> None:
        """Close the lane; :meth:`mixed` ends. Idempotent.

        Cancellation: safe.
        """
        self.end()
