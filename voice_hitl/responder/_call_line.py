"""Call lines: how a spoken dialogue speaks to, and hears from, the people on a call.

A :class:`CallLine` speaks text, stops speaking (barge-in), and opens an :class:`Inbox` of what
the addressed people said or keyed. ``VoiceLine`` is the line of one voice session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..human._pending import PendingInputEvent
from ..speech import Answer, AnswerSpec, AudioQuality, SpeechStart, StreamingEndpointer, Utterance
from ..speech._near_miss import Competition
from ..speech.asr._protocol import Recognizer
from ..speech.dtmf import DtmfDetector
from ..voice._provider_events import (
    PCM16,
    KeypadEvent,
    ProviderEvent,
    SpeechStartedEvent,
    TranscriptionEvent,
    transcription_of,
)

__all__ = ["CallLine", "Heard", "Inbox", "RecognizingTap", "SpeechSynthesizer"]

logger = logging.getLogger("voice_hitl.responder")


@dataclass(frozen=True, slots=True)
class Heard:
    """Something an addressed person did: said a final utterance, keyed a tone, or started
    speaking (``speech_started``, the barge-in signal).

    Attributes:
        kind: which.
        text: what to understand (the words, an answer phrase they were read as, or keys).
        speaker_id: who, when the line can tell.
        transcript: the words as heard, when known verbatim (``None``: a grammar's phrase,
            which the person may not have said word for word).
        confidence: the recogniser's calibrated confidence in ``text``, when it has one.
        quality: the utterance's audio figures, when measured.
        attribution: how sure the line is that ``speaker_id`` alone said it (1.0 when the
            line has one speaker or an unmixed turn; lower for a mixed conference turn).
        competition: a challenge answer scored against its near-misses, when the
            recogniser could score them (`voice_hitl.speech._near_miss`).
    """

    kind: Literal["speech", "dtmf", "speech_started"]
    text: str = ""
    speaker_id: str | None = None
    transcript: str | None = None
    confidence: float | None = None
    quality: AudioQuality | None = None
    attribution: float = 1.0
    competition: Competition | None = None

    @classmethod
    def of(cls, event: TranscriptionEvent, speaker_id: str | None = None) -> Heard:
        """What a final user transcription says the person said."""
        return cls(
            "speech",
            event.interpretation if event.interpretation is not None else event.text,
            speaker_id if speaker_id is not None else event.speaker_id,
            transcript=event.text if event.verbatim else None,
            confidence=event.confidence,
            quality=event.quality,
            competition=event.competition,
        )


class Inbox:
    """What the addressed people said, in order. Close it to stop listening.

    Args:
        addressed: Speaker ids to hear; ``None`` hears the line's only caller.
    """

    def __init__(self, addressed: Collection[str] | None) -> None:
        self.addressed = None if addressed is None else frozenset(addressed)
        self._queue: asyncio.Queue[Heard] = asyncio.Queue()
        self._closers: list[Callable[[], None]] = []

    def offer(self, heard: Heard) -> None:
        """Queue ``heard`` if it comes from an addressed person; others are logged and dropped."""
        if (
            self.addressed is not None
            and heard.kind != "dtmf"
            and heard.speaker_id not in self.addressed
        ):
            if heard.kind == "speech":
                logger.info(
                    "ignored speech from %r (not addressed): %r", heard.speaker_id, heard.text
                )
            return
        self._queue.put_nowait(heard)

    def on_close(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when the inbox closes (to detach listeners)."""
        self._closers.append(closer)

    async def get(self) -> Heard:
        """The next thing heard.

        Cancellation: safe; nothing is lost.
        """
        return await self._queue.get()

    def close(self) -> None:
        """Stop listening; idempotent."""
        closers, self._closers = self._closers, []
        for closer in closers:
            closer()


class SpeechSynthesizer(Protocol):
    """Text in, mono PCM16 out (e.g. ``providers.local.PiperSynthesizer``)."""

    async def synthesize(self, text: str) -> tuple[PCM16, int]:
        """Speak ``text``; returns the samples and their rate.

        Cancellation: safe.
        """
        ...


class CallLine(Protocol):
    """The people on one call, as a spoken dialogue sees them."""

    @property
    def can_say(self) -> bool:
        """True when :meth:`say` can speak arbitrary text (the provider's capability)."""
        ...

    async def play_audio(self, pcm16: PCM16, sample_rate: int) -> None:
        """Play ready-made speech to the call (when the provider cannot say text itself).

        Cancellation: safe; the rest is not played.
        """

    async def say(self, text: str) -> None:
        """Speak ``text`` to the call.

        Cancellation: safe; speech may already have started.
        """

    async def stop_speaking(self) -> None:
        """Stop speech output now (barge-in).

        Cancellation: safe.
        """

    def deliver(
        self,
        event: PendingInputEvent,
        answer: Answer,
        actor_id: str | None,
        *,
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Settle (or, for a quorum, count toward settling) ``event`` with ``answer``;
        ``evidence`` says how it was established (kept with the answer and the journal)."""
        ...

    def listen(
        self,
        addressed: Collection[str] | None = None,
        expecting: AnswerSpec | None = None,
        recognizer: Recognizer | None = None,
    ) -> Inbox:
        """Open an inbox of what ``addressed`` people say or key (``None``: the caller).

        ``expecting`` tells a provider with its own recogniser what answer to listen for;
        ``recognizer`` also hears the caller's audio locally, where the line has it.
        """
        ...


def feed_provider_event(inbox: Inbox, event: ProviderEvent) -> None:
    """Offer the inbox what a provider event says about the people on the call."""
    if isinstance(event, TranscriptionEvent):
        if event.role == "user" and event.final:
            inbox.offer(Heard.of(event))
    elif isinstance(event, SpeechStartedEvent):
        inbox.offer(Heard("speech_started", "", None))
    elif isinstance(event, KeypadEvent):
        inbox.offer(Heard("dtmf", event.key, None))  # as the tone detector's keys


class RecognizingTap:
    """Hears caller audio with a local recogniser: endpointing finds each utterance, the
    recogniser (in its worker thread) transcribes it for ``spec``, and the inbox gets it.

    Recognition tasks belong to the tap; :meth:`close` cancels them (the inbox calls it).
    """

    def __init__(
        self, inbox: Inbox, recognizer: Recognizer, sample_rate: int, spec: AnswerSpec | None
    ) -> None:
        self._inbox = inbox
        self._recognizer = recognizer
        self._rate = sample_rate
        self._spec = spec
        self._endpointer = StreamingEndpointer(sample_rate)
        self._tasks: set[asyncio.Task[None]] = set()
        inbox.on_close(self.close)

    def __call__(self, frame: PCM16) -> None:
        for found in self._endpointer.feed(frame):
            if isinstance(found, SpeechStart):
                self._inbox.offer(Heard("speech_started"))
            elif isinstance(found, Utterance):
                task = asyncio.get_running_loop().create_task(self._recognize(found.audio))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _recognize(self, audio: PCM16) -> None:
        try:
            hypotheses = await self._recognizer.recognize(audio, self._rate, self._spec)
        except Exception:
            logger.exception("local recognition failed; the utterance counts as unheard")
            hypotheses = []
        self._inbox.offer(Heard.of(transcription_of(hypotheses)))

    def close(self) -> None:
        """Cancel recognitions still running."""
        for task in list(self._tasks):
            task.cancel()


class DtmfTap:
    """Feeds keypad tones found in caller audio to an inbox."""

    def __init__(self, inbox: Inbox, sample_rate: int) -> None:
        self._inbox = inbox
        self._detector = DtmfDetector(sample_rate)

    def __call__(self, frame: PCM16) -> None:
        for key in self._detector.feed(frame):
            self._inbox.offer(Heard("dtmf", key, None))
