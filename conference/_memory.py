"""``InMemoryConferenceBackend``: a real in-process conference for tests and local runs.

Participants push PCM16 frames of any size; each :meth:`InMemoryConferenceBackend.tick` takes
one frame's worth of samples from every participant (silence where one has nothing buffered),
mixes them with :func:`~conference.mix_pcm16` and hands the mix to every open audio lane, and
each participant's own frame to every open per-speaker lane (``open_speakers``). The
bot's audio is played to every participant in the call when it is played. Who spoke in a frame
is decided by level: a participant whose samples peak at ``speech_threshold`` or more.

A participant who joins with ``seated=False`` has no stream of their own, as a WebRTC client
of a Janus AudioBridge has none: the backend reports when they talk (as AudioBridge's talking
events do: from their first loud frame to ``TALK_HANGOVER`` seconds of quiet), and the
per-speaker lanes hear them through the same cut of the mix the Janus backend uses
(:class:`~conference.MixCut`). With ``levels=False`` their line reports no levels at all, as a
plain-RTP joiner's does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from types import MappingProxyType

import numpy as np

from providers.base import PCM16
from voice_hitl.voice._audio import resample_pcm16
from voice_hitl.voice._transport import check_pcm16

from ._backend import (
    ConferenceEvent,
    ConferenceListener,
    MixedFrame,
    Participant,
    ParticipantJoined,
    ParticipantLeft,
    SpeakerFrame,
    SpeakerTranscription,
)
from ._mix_cut import MixCut
from ._mixer import mix_pcm16
from ._sample_fifo import SampleFifo
from ._speaker_clock import SpeakerClock

__all__ = ["TALK_HANGOVER", "InMemoryAudioLane", "InMemoryConferenceBackend", "InMemorySpeakerLane"]

TALK_HANGOVER = 0.2
"""Seconds of quiet after which an unseated participant's talking stops (AudioBridge decides
on 10-packet windows, 0.2 s)."""

logger = logging.getLogger("conference.memory")


class InMemoryAudioLane:
    """An audio lane of :class:`InMemoryConferenceBackend` (see ``ConferenceAudio``)."""

    def __init__(self, backend: InMemoryConferenceBackend) -> None:
        self._backend = backend
        self._queue: asyncio.Queue[MixedFrame | None] = asyncio.Queue()
        self.closed = False
        self.barge_ins = 0

    def _feed(self, frame: MixedFrame) -> None:
        if not self.closed:
            self._queue.put_nowait(frame)

    async def mixed(self) -> AsyncIterator[MixedFrame]:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            yield item

    async def play(self, frame: PCM16) -> None:
        if self.closed:
            return
        self._backend._play(check_pcm16(frame))

    async def stop_playback(self) -> None:
        self.barge_ins += 1

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._queue.put_nowait(None)
        self._backend._lanes.discard(self)


class InMemorySpeakerLane:
    """A per-speaker lane of :class:`InMemoryConferenceBackend` (see ``SpeakerAudio``)."""

    def __init__(self, backend: InMemoryConferenceBackend, sample_rate: int) -> None:
        self._backend = backend
        self.sample_rate = sample_rate
        self._queue: asyncio.Queue[SpeakerFrame | None] = asyncio.Queue()
        self.closed = False

    def _feed(self, frame: SpeakerFrame) -> None:
        if self.closed:
            return
        if self.sample_rate != self._backend.sample_rate:
            samples = resample_pcm16(frame.samples, self._backend.sample_rate, self.sample_rate)
            frame = SpeakerFrame(frame.participant_id, samples, frame.at, frame.attribution)
        self._queue.put_nowait(frame)

    async def frames(self) -> AsyncIterator[SpeakerFrame]:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            yield item

    def keypad(self, participant_id: str) -> bool:
        return participant_id in self._backend._keypads

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._queue.put_nowait(None)
        self._backend._speaker_lanes.discard(self)


class InMemoryConferenceBackend:
    """An in-process conference: a roster, per-participant audio in, one bot track out.

    Args:
        frame_samples: Samples per mixed frame (480 is 20 ms at 24 kHz).
        speech_threshold: The peak level at which a participant counts as speaking in a frame.
        sample_rate: The rate of the audio participants push (the per-speaker lanes resample
            it to their own rate; the mix is handed over as pushed).

    Raises:
        ValueError: ``frame_samples`` or ``speech_threshold`` is not positive, or
            ``sample_rate`` is below 8000.
    """

    def __init__(
        self, *, frame_samples: int = 480, speech_threshold: int = 500, sample_rate: int = 24_000
    ) -> None:
        if frame_samples <= 0:
            raise ValueError(f"frame_samples must be positive, got {frame_samples}")
        if not 0 < speech_threshold <= 32767:
            raise ValueError(f"speech_threshold must be in 1..32767, got {speech_threshold}")
        if sample_rate < 8_000:
            raise ValueError(f"sample_rate must be at least 8000, got {sample_rate}")
        self.frame_samples = frame_samples
        self.speech_threshold = speech_threshold
        self.sample_rate = sample_rate
        self.clock = 0.0
        """Seconds of audio mixed so far (the per-speaker frames' media clock)."""
        self.speaker_clock = SpeakerClock(window=frame_samples / sample_rate, talk_lag=0.0)
        """Who spoke when: seated participants' levels, unseated ones' talking spans."""
        self.mix_cut = MixCut(
            self.speaker_clock,
            sample_rate,
            seated=lambda pid: pid not in self._unseated,
            lead=0.3,  # spans start exactly here; Janus's back-dated ones run 0.3-0.37 s ahead
        )
        """The cut of the mix that unseated participants are heard through."""
        self._unseated: set[str] = set()
        self._levels: set[str] = set()
        self._talking: dict[str, float] = {}  # unseated participant talking -> last loud end
        self._keypads: set[str] = set()
        self._speaker_lanes: set[InMemorySpeakerLane] = set()
        self._participants: dict[str, Participant] = {}
        self._inbound: dict[str, SampleFifo] = {}
        self._heard: dict[str, list[PCM16]] = {}
        self._listeners: list[ConferenceListener] = []
        self._lanes: set[InMemoryAudioLane] = set()

    # -- roster ------------------------------------------------------------------------------

    @property
    def participants(self) -> Mapping[str, Participant]:
        """The participants in the call now, by id (a read-only view)."""
        return MappingProxyType(self._participants)

    def join(
        self,
        participant_id: str,
        display_name: str | None = None,
        *,
        keypad: bool = False,
        seated: bool = True,
        levels: bool = True,
    ) -> Participant:
        """Add a participant; its audio is mixed from the next tick on.

        Args:
            participant_id: Its id.
            display_name: Its name (the id by default).
            keypad: Its line carries keypad tones in band (a phone leg; seated only).
            seated: The per-speaker lanes hear its own stream; ``False``: only the mix, cut
                by when it talks (a WebRTC client of a Janus AudioBridge).
            levels: An unseated participant's line reports when it talks; ``False``: never
                (a plain-RTP joiner without the audio-level extension).

        Raises:
            ValueError: The id is empty or already in the call, or ``keypad`` for an
                unseated participant.
        """
        if participant_id in self._participants:
            raise ValueError(f"participant {participant_id!r} is already in the conference")
        if keypad and not seated:
            raise ValueError(
                f"participant {participant_id!r}: an unseated line's keys would be heard only "
                "in the mix; keypad=True needs seated=True"
            )
        participant = Participant(participant_id, display_name or participant_id)
        if keypad:
            self._keypads.add(participant_id)
        if not seated:
            self._unseated.add(participant_id)
            if levels:
                self._levels.add(participant_id)
        self._participants[participant_id] = participant
        self._inbound[participant_id] = SampleFifo()
        self._heard[participant_id] = []
        self._emit(ParticipantJoined(participant))
        return participant

    def leave(self, participant_id: str, reason: str = "left the conference") -> Participant:
        """Remove a participant; audio it pushed but that was not mixed yet is dropped.

        Raises:
            ValueError: No such participant is in the call.
        """
        participant = self._participants.pop(participant_id, None)
        if participant is None:
            raise ValueError(f"participant {participant_id!r} is not in the conference")
        del self._inbound[participant_id]
        self._keypads.discard(participant_id)
        self._unseated.discard(participant_id)
        self._levels.discard(participant_id)
        self._talking.pop(participant_id, None)
        self.mix_cut.forget(participant_id)
        self._emit(ParticipantLeft(participant, reason))
        return participant

    # -- audio -------------------------------------------------------------------------------

    def push_audio(self, participant_id: str, frame: PCM16) -> None:
        """Buffer a participant's audio for the next ticks.

        Raises:
            ValueError: The participant is not in the call, or the frame is not mono PCM16.
        """
        fifo = self._inbound.get(participant_id)
        if fifo is None:
            raise ValueError(f"participant {participant_id!r} is not in the conference")
        fifo.push(check_pcm16(frame))

    def buffered(self, participant_id: str) -> int:
        """Samples of a participant's audio still waiting to be mixed."""
        fifo = self._inbound.get(participant_id)
        return 0 if fifo is None else fifo.available

    def tick(self) -> MixedFrame:
        """Mix one frame from every participant and hand it to each open lane.

        Returns:
            The mixed frame (also produced when no lane is open: the call goes on).
        """
        n = self.frame_samples
        chunks: list[PCM16] = []
        speakers: set[str] = set()
        at = self.clock
        for participant_id, fifo in self._inbound.items():
            chunk = fifo.take(n)
            chunks.append(chunk)
            loud = bool(len(chunk)) and (
                int(np.abs(chunk.astype(np.int32)).max()) >= self.speech_threshold
            )
            if participant_id in self._unseated:
                if participant_id in self._levels:
                    self._talk(participant_id, loud, at, n / self.sample_rate)
                    if loud:
                        speakers.add(participant_id)
                continue
            if loud:
                speakers.add(participant_id)
            self.speaker_clock.level(participant_id, at, loud)
            self._to_speaker_lanes([SpeakerFrame(participant_id, chunk, at)])
        self.clock += n / self.sample_rate
        frame = MixedFrame(mix_pcm16(chunks, n), frozenset(speakers))
        if self._speaker_lanes:  # the cut (and its warning) only where someone hears it
            self._to_speaker_lanes(self.mix_cut.push(frame.samples, at))
        for lane in list(self._lanes):
            lane._feed(frame)
        return frame

    def _talk(self, participant_id: str, loud: bool, at: float, seconds: float) -> None:
        """An unseated participant's talking events, as AudioBridge would report them."""
        if loud:
            if participant_id not in self._talking:
                self.speaker_clock.talking(participant_id, True, at)
            self._talking[participant_id] = at + seconds
            return
        last = self._talking.get(participant_id)
        if last is not None and at + seconds - last >= TALK_HANGOVER:
            del self._talking[participant_id]
            self.speaker_clock.talking(participant_id, False, last)

    def _to_speaker_lanes(self, frames: list[SpeakerFrame]) -> None:
        for speaker_lane in list(self._speaker_lanes):
            for speaker_frame in frames:
                speaker_lane._feed(speaker_frame)

    def heard(self, participant_id: str) -> list[PCM16]:
        """The bot audio played to a participant so far (kept after it leaves).

        Raises:
            ValueError: The participant never joined.
        """
        heard = self._heard.get(participant_id)
        if heard is None:
            raise ValueError(f"participant {participant_id!r} never joined the conference")
        return list(heard)

    def _play(self, frame: PCM16) -> None:
        for participant_id in self._participants:
            self._heard[participant_id].append(frame)

    def open_audio(self) -> InMemoryAudioLane:
        """Open a lane that receives every mixed frame from the next tick on."""
        lane = InMemoryAudioLane(self)
        self._lanes.add(lane)
        return lane

    def open_speakers(self, sample_rate: int) -> InMemorySpeakerLane:
        """Open a lane that receives every seated participant's own frame, and every
        unseated one's cut of the mix (:attr:`mix_cut`), from the next tick on (resampled to
        ``sample_rate``).

        Raises:
            ValueError: ``sample_rate`` is below 8000.
        """
        if sample_rate < 8_000:
            raise ValueError(f"sample_rate must be at least 8000, got {sample_rate}")
        lane = InMemorySpeakerLane(self, sample_rate)
        self._speaker_lanes.add(lane)
        return lane

    @property
    def open_lanes(self) -> int:
        """How many audio lanes (mixed and per-speaker) are open."""
        return len(self._lanes) + len(self._speaker_lanes)

    # -- transcription and events ------------------------------------------------------------

    def transcribe(self, participant_id: str, text: str, *, final: bool = True) -> None:
        """Report what a participant said (the backend's own speaker attribution).

        Raises:
            ValueError: The participant is not in the call.
        """
        if participant_id not in self._participants:
            raise ValueError(f"participant {participant_id!r} is not in the conference")
        self._emit(SpeakerTranscription(participant_id, text, final))

    def add_listener(self, listener: ConferenceListener) -> Callable[[], None]:
        """Receive roster changes and transcriptions; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: ConferenceEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("conference listener failed on %s", event.type)
