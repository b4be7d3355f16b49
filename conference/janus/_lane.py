"""The lanes of a :class:`~conference.janus.JanusConferenceBackend`: ``JanusAudioLane`` (the
room's mix in, the bot's speech out) and ``JanusSpeakerLane`` (each seat's own audio, and
the mix cut for participants without a seat, in)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from providers.base import PCM16
from voice_hitl.voice._transport import check_pcm16

from .._backend import MixedFrame, SpeakerFrame
from .._sample_fifo import SampleFifo
from ._resample import StreamResampler
from ._rtp import FRAME_SAMPLES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

__all__ = ["JanusAudioLane", "JanusSpeakerLane", "OutboundAudio"]


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


class JanusSpeakerLane:
    """Each seated participant's own audio, and each unseated one's cut of the room mix
    (``MixCut``), resampled to the lane's rate (see ``SpeakerAudio``). A seat is a plain-RTP
    (or SIP gateway) leg in G.711, which carries keypad tones in band.

    Args:
        sample_rate: The rate of the frames handed out.
        seated: Whether a participant id is a seat's (their line carries keypad tones).
    """

    def __init__(self, sample_rate: int, seated: Callable[[str], bool]) -> None:
        self.sample_rate = sample_rate
        self._seated = seated
        self._queue: asyncio.Queue[SpeakerFrame | None] = asyncio.Queue()
        self._resamplers: dict[str, StreamResampler] = {}
        self.closed = False

    def feed(
        self,
        participant_id: str,
        samples: PCM16,
        at: float,
        *,
        rate: int = 8_000,
        attribution: float = 1.0,
    ) -> None:
        """One packet of a participant's audio at ``rate`` (their own, or cut from the mix
        with ``attribution`` under 1.0), heard at ``at``."""
        if self.closed:
            return
        resampler = self._resamplers.get(participant_id)
        if resampler is None:
            resampler = StreamResampler(rate, self.sample_rate)
            self._resamplers[participant_id] = resampler
        frame = SpeakerFrame(participant_id, resampler.frame(samples), at, attribution)
        self._queue.put_nowait(frame)

    def keypad(self, participant_id: str) -> bool:
        """True for a seat's line (G.711 carries keypad tones in band)."""
        return self._seated(participant_id)

    def end(self) -> None:
        """The call ended: :meth:`frames` ends after the frames already fed."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def frames(self) -> AsyncIterator[SpeakerFrame]:
        """Every participant's frames as they arrive."""
        while True:
            item = await self._queue.get()
            if item is None:
                return
            yield item

    async def aclose(self) -> None:
        """Close the lane; :meth:`frames` ends. Idempotent.

        Cancellation: safe.
        """
        self.end()
