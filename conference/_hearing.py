"""Per-speaker hearing: detection and recognition on each participant's own stream.

:class:`PerSpeakerHearing` is what a :class:`~conference.ConferenceChannel` is given to hear
every participant apart; :class:`SpeakerEars` runs it. Each participant's frames go through an
endpointer (and, on a line that carries them, a keypad-tone detector) of their own, so one
person's speech never ends, starts or merges with another's, and noise on one line is that
line's alone. An utterance is recognised off the event loop (the recogniser's worker thread),
at most ``concurrency`` at a time across the whole call, from its first pause on as if it
ended there (so the answer is ready when the end of speech is confirmed), and reported with its
speaker (the stream it came on) and the time span of its speech, each speaker's utterances in
the order they were said. An utterance whose frames the backend was less than sure of (a stream
cut from the room mix, ``SpeakerFrame.attribution``) carries the lowest of their attributions
in ``Heard.attribution``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from providers.base import PCM16
from voice_hitl.responder._call_line import Heard
from voice_hitl.speech import AnswerSpec
from voice_hitl.speech._streaming import Pause, SpeechStart, StreamingEndpointer, Utterance
from voice_hitl.speech.asr import Hypothesis, Recognizer
from voice_hitl.speech.dtmf import DtmfDetector
from voice_hitl.voice._provider_events import transcription_of

from ._backend import SpeakerFrame

__all__ = ["HeardSpan", "PerSpeakerHearing", "SpeakerEars"]

logger = logging.getLogger("conference.hearing")


@dataclass(frozen=True, eq=False)
class PerSpeakerHearing:
    """How a conference hears each participant on their own stream.

    Args:
        recognizer: Reads each utterance (its work runs off the event loop).
        concurrency: Utterances recognised at once across the whole call (2: the cores of a
            small bot host; more only queues CPU).
        sample_rate: The rate the per-speaker lane delivers (16 kHz suits the recognisers).
        threshold_dbfs: The level a 10 ms block must reach to count as speech on a line:
            -40 dBFS, so a line's steady -45 dBov hiss is not speech.
        start_ms: Speech needed before an utterance starts.
        end_silence_ms: Quiet that ends an utterance.
        min_voiced_ms: An utterance with less speech than this (a door click) is not
            recognised.
        keypad: Read in-band keypad tones on lines that carry them (an in-band "1" is a key,
            not an empty utterance).

    Raises:
        ValueError: A number is out of range.
    """

    recognizer: Recognizer
    concurrency: int = 2
    sample_rate: int = 16_000
    threshold_dbfs: float = -40.0
    start_ms: int = 60
    end_silence_ms: int = 500
    min_voiced_ms: int = 250
    keypad: bool = True

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if not 8_000 <= self.sample_rate <= 48_000:
            raise ValueError(f"sample_rate must be in 8000..48000, got {self.sample_rate}")
        if not -90.0 < self.threshold_dbfs < 0.0:
            raise ValueError(f"threshold_dbfs must be in (-90, 0), got {self.threshold_dbfs}")
        for name in ("start_ms", "end_silence_ms", "min_voiced_ms"):
            if getattr(self, name) < 10:
                raise ValueError(f"{name} must be at least 10, got {getattr(self, name)}")


@dataclass(frozen=True, slots=True)
class HeardSpan:
    """Something one participant did on their own stream, and when.

    Attributes:
        heard: The utterance (``speech``), key (``dtmf``) or start of speech.
        start: When their speech (or the key) began, on the backend's media clock.
        end: When it ended (the start for ``speech_started``).
    """

    heard: Heard
    start: float
    end: float


_DOUBT_KEEP_S = 60.0


def _attribution(line: _Line, start: float, end: float) -> float:
    """The lowest attribution of the frames of ``line`` heard between ``start`` and ``end``."""
    return min((a for s, e, a in line.doubts if e > start and s < end), default=1.0)


@dataclass(eq=False)
class _Line:
    endpointer: StreamingEndpointer
    keys: DtmfDetector | None
    keyed: bool = False
    started: float = 0.0
    last: asyncio.Task[None] | None = None
    early: asyncio.Task[list[Hypothesis]] | None = None
    """The recognition started at the last pause, of the utterance as if it ended there."""
    doubts: deque[tuple[float, float, float]] = field(default_factory=deque)
    """(start, end, attribution) of recent frames attributed under 1.0."""


class SpeakerEars:
    """Runs :class:`PerSpeakerHearing` over a per-speaker lane's frames.

    Args:
        hearing: What to run.
        on_heard: Called (on the loop) with each utterance, key and start of speech.
        keypad: Whether a participant's line carries keypad tones.
    """

    def __init__(
        self,
        hearing: PerSpeakerHearing,
        on_heard: Callable[[HeardSpan], None],
        keypad: Callable[[str], bool] = lambda participant_id: False,
    ) -> None:
        self.hearing = hearing
        self._on_heard = on_heard
        self._keypad = keypad
        self._slots = asyncio.Semaphore(hearing.concurrency)
        self._lines: dict[str, _Line] = {}
        self._expected: AnswerSpec | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._early: set[asyncio.Task[list[Hypothesis]]] = set()
        self.recognised = 0
        """Utterances recognised so far."""
        self.skipped = 0
        """Utterances not recognised: too little speech (a click) or keyed tones."""

    def expect(self, spec: AnswerSpec | None) -> None:
        """The answer the next utterances are expected to give (None: open dictation)."""
        self._expected = spec

    def _line(self, participant_id: str) -> _Line:
        line = self._lines.get(participant_id)
        if line is None:
            h = self.hearing
            keys = (
                DtmfDetector(h.sample_rate) if h.keypad and self._keypad(participant_id) else None
            )
            line = _Line(
                StreamingEndpointer(
                    h.sample_rate,
                    threshold_dbfs=h.threshold_dbfs,
                    start_ms=h.start_ms,
                    end_silence_ms=h.end_silence_ms,
                ),
                keys,
            )
            self._lines[participant_id] = line
        return line

    def feed(self, frame: SpeakerFrame) -> None:
        """Hear one frame of one participant's own audio."""
        rate = self.hearing.sample_rate
        line = self._line(frame.participant_id)
        end_at = frame.at + len(frame.samples) / rate
        if frame.attribution < 1.0:
            line.doubts.append((frame.at, end_at, frame.attribution))
        while line.doubts and line.doubts[0][1] < end_at - _DOUBT_KEEP_S:
            line.doubts.popleft()
        if line.keys is not None:
            for key in line.keys.feed(frame.samples):
                line.keyed = True
                self._emit(HeardSpan(Heard("dtmf", key, frame.participant_id), end_at, end_at))
        for found in line.endpointer.feed(frame.samples):
            if isinstance(found, SpeechStart):
                line.started = end_at - self.hearing.start_ms / 1000
                if not line.keyed:
                    started = Heard("speech_started", speaker_id=frame.participant_id)
                    self._emit(HeardSpan(started, line.started, line.started))
            elif isinstance(found, Pause):
                self._speculate(line, found.audio)
            elif isinstance(found, Utterance):
                end = end_at - self.hearing.end_silence_ms / 1000
                sure = _attribution(line, end_at - len(found.audio) / rate, end_at)
                self._utterance(frame.participant_id, line, found.audio, end, sure)

    def _speculate(self, line: _Line, audio: PCM16) -> None:
        """Start recognising the utterance as it would be if it ended at this pause. An
        earlier pause's reading, superseded, runs out in its slot (a worker thread cannot be
        stopped: cancelling it would free the slot while the thread still holds a core)."""
        line.early = None
        if line.keyed or self._loud(audio) < self.hearing.min_voiced_ms:
            return
        early = asyncio.create_task(self._recognize(audio), name="hear-early")
        line.early = early
        self._early.add(early)
        early.add_done_callback(self._early.discard)

    async def _recognize(self, audio: PCM16) -> list[Hypothesis]:
        async with self._slots:
            return await self.hearing.recognizer.recognize(
                audio, self.hearing.sample_rate, self._expected
            )

    def _loud(self, samples: PCM16) -> float:
        """Milliseconds of ``samples`` above the speech threshold (10 ms blocks)."""
        block = self.hearing.sample_rate // 100
        n = len(samples) // block
        if n == 0:
            return 0.0
        x = samples[: n * block].astype("float64").reshape(n, block) / 32768.0
        power = (x**2).mean(axis=1)
        threshold = 10 ** (self.hearing.threshold_dbfs / 10)
        return float((power > threshold).sum()) * 10.0

    def _utterance(
        self, participant_id: str, line: _Line, audio: PCM16, end: float, sure: float
    ) -> None:
        keyed, line.keyed = line.keyed, False
        early, line.early = line.early, None
        voiced = self._loud(audio)
        if keyed or voiced < self.hearing.min_voiced_ms:
            self.skipped += 1
            logger.debug(
                "%r: utterance of %.0f ms speech not recognised (%s)",
                participant_id,
                voiced,
                "keypad tones" if keyed else "too little speech",
            )
            return
        previous = line.last
        task = asyncio.create_task(
            self._read(participant_id, audio, line.started, end, sure, previous, early),
            name=f"hear-{participant_id}",
        )
        line.last = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read(
        self,
        participant_id: str,
        audio: PCM16,
        start: float,
        end: float,
        sure: float,
        previous: asyncio.Task[None] | None,
        early: asyncio.Task[list[Hypothesis]] | None,
    ) -> None:
        hypotheses: list[Hypothesis] = []
        try:
            hypotheses = await (early if early is not None else self._recognize(audio))
        except Exception:
            logger.exception("%r: recognition failed; the utterance is unheard", participant_id)
        if previous is not None:  # this speaker's earlier utterance is reported first
            await asyncio.wait([previous])
        self.recognised += 1
        event = transcription_of(hypotheses)
        if not event.text.strip():
            logger.info("%r: an utterance (%.2f-%.2f s) had no words", participant_id, start, end)
            return
        heard = replace(Heard.of(event, participant_id), attribution=sure)
        self._emit(HeardSpan(heard, start, end))

    def _emit(self, span: HeardSpan) -> None:
        try:
            self._on_heard(span)
        except Exception:
            logger.exception("hearing listener failed on %s", span.heard.kind)

    def forget(self, participant_id: str) -> None:
        """A participant left: their line's state goes (recognitions under way finish)."""
        self._lines.pop(participant_id, None)

    @property
    def busy(self) -> int:
        """Utterances being recognised or waiting for a slot."""
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait until every utterance heard so far is reported.

        Cancellation: safe; the recognitions go on.
        """
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def aclose(self) -> None:
        """Stop: recognitions under way are cancelled. Idempotent.

        Cancellation: safe.
        """
        tasks: list[asyncio.Task[None] | asyncio.Task[list[Hypothesis]]] = [
            *self._tasks,
            *self._early,
        ]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._lines.clear()
