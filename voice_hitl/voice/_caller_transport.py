"""``ScriptedCallerTransport``: a recorded caller who answers the agent, turn by turn.

Each :class:`CallerTurn` is a recording of the caller (speech or keypad tones). The first turn
may open the call; each later turn is played once the agent has finished its next turn (or,
for a barge-in turn, shortly after the agent starts speaking). The transport keeps one clock
for both sides, in samples, so the call can be written out as it would have sounded: the
caller, the agent (cut off where the caller barged in) and the two mixed.

``speed`` paces the caller: 1.0 is real time, 2.0 twice as fast, 0 as fast as possible.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from .._checks import non_negative_seconds
from .._exceptions import ChannelClosedError
from ._audio import read_wav_pcm16, resample_pcm16, write_wav_pcm16
from ._provider_events import PCM16, ProviderEvent, TranscriptionEvent
from ._transport import check_pcm16

__all__ = ["CallerTurn", "ScriptedCallerTransport"]


@dataclass(frozen=True)
class CallerTurn:
    """One thing the caller says (or keys).

    Attributes:
        audio: The recording, mono PCM16 at the transport's rate.
        label: What it is, for timelines ("five hundred dollars").
        barge_in: Start ``barge_in_delay`` seconds after the agent starts its next turn,
            instead of waiting for the agent to finish.
        after: When to speak: ``"agent"`` once the agent's next turn ends; ``"heard"`` once
            the previous caller turn has been transcribed (a second person answering right
            after the first); ``"now"`` at once (the call's opening line).
        speaker: Who speaks it, where several people share the line (a conference).
    """

    audio: PCM16 = field(repr=False)
    label: str = ""
    barge_in: bool = False
    after: Literal["agent", "heard", "now"] = "agent"
    speaker: str | None = None


class ScriptedCallerTransport:
    """A transport whose caller is a list of recorded turns; serves one session.

    Feed it the session's provider events (``session.add_listener(transport.observe)``) so it
    knows when the agent finishes a turn.

    Args:
        turns: What the caller says, in order.
        sample_rate: The rate of the turns and of the call.
        speed: Pace of the caller's audio (0: as fast as possible).
        frame_ms: Size of the frames handed to the session.
        trailing_silence_ms: Quiet after each turn (so end-of-speech is detected).
        barge_in_delay: Seconds into the agent's turn at which a barge-in turn starts.
        noise_floor_dbfs: Level of the faint noise standing in for silence.

    Raises:
        ValueError: A turn is not mono PCM16; ``speed`` or ``barge_in_delay`` is negative or
            not finite; a size or rate is out of range.
    """

    def __init__(
        self,
        turns: Sequence[CallerTurn],
        *,
        sample_rate: int = 16_000,
        speed: float = 1.0,
        frame_ms: int = 20,
        trailing_silence_ms: int = 900,
        barge_in_delay: float = 0.4,
        noise_floor_dbfs: float = -60.0,
    ) -> None:
        speed = non_negative_seconds("speed", speed)
        barge_in_delay = non_negative_seconds("barge_in_delay", barge_in_delay)
        if sample_rate <= 0 or frame_ms <= 0 or trailing_silence_ms < 0:
            raise ValueError(
                "sample_rate and frame_ms must be above zero and trailing_silence_ms zero or "
                f"more, got {sample_rate}, {frame_ms}, {trailing_silence_ms}"
            )
        if not math.isfinite(noise_floor_dbfs):
            raise ValueError(f"noise_floor_dbfs must be finite, got {noise_floor_dbfs!r}")
        for index, turn in enumerate(turns):
            try:
                check_pcm16(turn.audio)
            except ValueError as exc:
                raise ValueError(f"caller turn {index} ({turn.label!r}): {exc}") from None
        self.turns = tuple(turns)
        self.sample_rate = sample_rate
        self.speed = speed
        self._frame = max(1, sample_rate * frame_ms // 1000)
        self._trailing = sample_rate * trailing_silence_ms // 1000
        self._barge_in_delay = round(barge_in_delay * sample_rate)
        self._noise_rms = 32768.0 * 10 ** (noise_floor_dbfs / 20)
        self._rng = np.random.default_rng(0)
        self._session_id: str | None = None
        self.clock = 0  # samples of call time
        self._caller: list[tuple[int, PCM16]] = []
        self._agent: list[tuple[int, PCM16]] = []
        self._agent_cursor = 0
        self._agent_turns_done = 0
        self._caller_heard = 0
        self._agent_turns_started = 0
        self._agent_speaking = False
        self._turn_start = 0
        self._changed = asyncio.Event()
        self.finished = asyncio.Event()
        self.turns_played: list[tuple[float, str]] = []
        self.speaker: str | None = None  # who is speaking now (the current turn's speaker)
        self._closed = False
        self._clock_listeners: list[Callable[[], None]] = []
        self.on_idle: Callable[[], Awaitable[None]] | None = None
        """At speed 0: awaited while the caller waits for the agent, beside the event it waits
        for; it may move the clock (:meth:`advance`) when nothing else can happen (a virtual
        clock's next deadline). None: the clock stands still while the caller waits."""

    @classmethod
    async def from_wav_files(
        cls, paths: Sequence[str | Path], *, sample_rate: int = 16_000, speed: float = 1.0
    ) -> ScriptedCallerTransport:
        """Build a caller from WAV recordings (loaded and resampled in a worker thread).

        A file name containing ``barge_in`` marks a barge-in turn; the first turn opens the
        call (it does not wait for the agent).

        Cancellation: safe.
        """

        def load() -> list[CallerTurn]:
            turns = []
            for index, path in enumerate(paths):
                audio, rate = read_wav_pcm16(path)
                turns.append(
                    CallerTurn(
                        resample_pcm16(audio, rate, sample_rate),
                        Path(path).stem,
                        barge_in="barge_in" in Path(path).stem,
                        after="agent" if index else "now",
                    )
                )
            return turns

        return cls(await asyncio.to_thread(load), sample_rate=sample_rate, speed=speed)

    # -- what the agent does -------------------------------------------------------------

    def observe(self, event: ProviderEvent) -> None:
        """Session listener: an assistant's final transcription ends the agent's turn; a
        user's final transcription means the caller's last turn was heard."""
        if isinstance(event, TranscriptionEvent) and event.role == "user" and event.final:
            self._caller_heard += 1
            self._notify()
        if isinstance(event, TranscriptionEvent) and event.role == "assistant" and event.final:
            self._agent_turns_done += 1
            if not self._agent_speaking:  # a turn with no audio (text-only provider)
                self._agent_turns_started += 1
            self._agent_speaking = False
            self._notify()

    def _notify(self) -> None:
        self._changed.set()

    def add_clock_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` each time the call's clock moves; returns a remover."""
        self._clock_listeners.append(listener)
        return lambda: (
            self._clock_listeners.remove(listener) if listener in self._clock_listeners else None
        )

    def advance(self, target: int) -> None:
        """Move the call's clock to ``target`` samples (never back) without sending audio."""
        if target > self.clock:
            self.clock = target
            self._ticked()

    def _ticked(self) -> None:
        for listener in list(self._clock_listeners):
            listener()

    async def _idle_while(self, waiting: Callable[[], bool]) -> AsyncIterator[PCM16]:
        """Keep the line open while ``waiting()``: faint noise in paced mode, nothing at 0."""
        while waiting() and not self._closed:
            if self.speed > 0:
                yield await self._send(self._silence(self._frame))
                continue
            self._changed.clear()
            if waiting() and not self._closed:
                await self._wait_for_change()

    async def _wait_for_change(self) -> None:
        """Speed 0: wait for an event, while :attr:`on_idle` (if any) may move the clock."""
        if self.on_idle is None:
            await self._changed.wait()
            return
        changed = asyncio.ensure_future(self._changed.wait())
        idle = asyncio.ensure_future(self.on_idle())
        try:
            await asyncio.wait((changed, idle), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (changed, idle):
                waiter.cancel()
            await asyncio.gather(changed, idle, return_exceptions=True)
        failure = None if idle.cancelled() else idle.exception()
        if failure is not None:
            raise failure

    async def play(self, session_id: str, frame: PCM16) -> None:
        if session_id == self._session_id:
            self.hear_agent(frame)

    def hear_agent(self, frame: PCM16) -> None:
        """The caller hears agent audio (for lines whose audio does not go through
        :meth:`play`, e.g. a conference's bot track)."""
        if self._closed:
            return
        frame = check_pcm16(frame)
        start = max(self.clock, self._agent_cursor)
        self._agent.append((start, frame))
        self._agent_cursor = start + len(frame)
        if not self._agent_speaking:
            self._agent_speaking = True
            self._turn_start = start
            self._agent_turns_started += 1
        self._notify()

    async def stop_playback(self, session_id: str) -> None:
        """Barge-in: the agent's audio after the current moment is never heard."""
        cut = self.clock
        kept: list[tuple[int, PCM16]] = []
        for start, frame in self._agent:
            if start >= cut:
                continue
            kept.append((start, frame[: cut - start] if start + len(frame) > cut else frame))
        self._agent = kept
        self._agent_cursor = min(self._agent_cursor, cut)

    async def close_session(self, session_id: str) -> None:
        self._closed = True
        self.finished.set()
        self._notify()

    # -- what the caller does --------------------------------------------------------------

    def _silence(self, n: int) -> PCM16:
        noise = self._rng.normal(0.0, self._noise_rms, n)
        return np.clip(np.round(noise), -32768, 32767).astype(np.int16)

    async def caller_audio(self, session_id: str) -> AsyncIterator[PCM16]:
        if self._session_id is not None and self._session_id != session_id:
            raise ChannelClosedError("a scripted caller serves one session")
        self._session_id = session_id
        done_before = 0
        heard_before = 0
        for turn in self.turns:
            if turn.barge_in:
                async for frame in self._idle_until_agent("started", self._agent_turns_started):
                    yield frame
                async for frame in self._idle_until(self._turn_start + self._barge_in_delay):
                    yield frame
            elif turn.after == "heard":
                async for frame in self._idle_until_agent("heard", heard_before):
                    yield frame
            elif turn.after == "agent":
                async for frame in self._idle_until_agent("done", done_before):
                    yield frame
                # Let the agent's audio finish playing before the caller answers.
                async for frame in self._idle_until(self._agent_cursor):
                    yield frame
            if self._closed:
                break
            self.turns_played.append((self.clock / self.sample_rate, turn.label))
            self.speaker = turn.speaker
            done_before = self._agent_turns_done
            heard_before = self._caller_heard
            audio = np.concatenate([turn.audio, self._silence(self._trailing)])
            for start in range(0, len(audio), self._frame):
                if self._closed:
                    break
                yield await self._send(audio[start : start + self._frame])
        # The caller hangs up once the agent has answered the last turn and its audio has
        # played out (so the recording ends with the call, not mid-goodbye).
        async for frame in self._idle_until_agent("done", done_before):
            yield frame
        async for frame in self._idle_until(self._agent_cursor):
            yield frame
        self.finished.set()

    def _count(self, which: Literal["started", "done", "heard"]) -> int:
        if which == "heard":
            return self._caller_heard
        return self._agent_turns_started if which == "started" else self._agent_turns_done

    async def _idle_until_agent(
        self, which: Literal["started", "done", "heard"], seen: int
    ) -> AsyncIterator[PCM16]:
        """Keep the line open until more than ``seen`` agent turns have ``started``/``done``
        (or caller turns were ``heard``)."""
        async for frame in self._idle_while(lambda: self._count(which) <= seen):
            yield frame

    async def _idle_until(self, target: int) -> AsyncIterator[PCM16]:
        """Move the call's clock to ``target``: paced noise, or a jump at speed 0."""
        if self.speed == 0:
            self.advance(target)
            return
        async for frame in self._idle_while(lambda: self.clock < target):
            yield frame

    async def _send(self, frame: PCM16) -> PCM16:
        if self.speed > 0:
            await asyncio.sleep(len(frame) / self.sample_rate / self.speed)
        else:
            await asyncio.sleep(0)
        if len(frame):
            self._caller.append((self.clock, frame))
            self.clock += len(frame)
            self._ticked()
        return frame

    # -- the recording -------------------------------------------------------------------

    def recording(self) -> tuple[PCM16, PCM16]:
        """The caller's and the agent's tracks on the call's clock (equal lengths)."""
        end = max(
            [self.clock]
            + [s + len(f) for s, f in self._caller]
            + [s + len(f) for s, f in self._agent]
        )
        tracks = []
        for segments in (self._caller, self._agent):
            track = np.zeros(end, dtype=np.int16)
            for start, frame in segments:
                track[start : start + len(frame)] = frame
            tracks.append(track)
        return tracks[0], tracks[1]

    async def write_recordings(self, folder: str | Path) -> list[Path]:
        """Write ``caller.wav``, ``agent.wav`` and ``call.wav`` (both mixed) to ``folder``.

        Cancellation: safe; files already written stay.
        """
        caller, agent = self.recording()
        mixed = np.clip(caller.astype(np.int32) + agent.astype(np.int32), -32768, 32767)
        out = Path(folder)
        paths = [out / "caller.wav", out / "agent.wav", out / "call.wav"]

        def write() -> None:
            out.mkdir(parents=True, exist_ok=True)
            for path, track in zip(paths, (caller, agent, mixed.astype(np.int16)), strict=True):
                write_wav_pcm16(path, track, self.sample_rate)

        await asyncio.to_thread(write)
        return paths
