"""``LocalCascadeSession``: endpointing + a recogniser for the caller, a synthesiser for the
agent; the agent's turns come from the channel's reasoning backend."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from voice_hitl import ChannelClosedError
from voice_hitl.speech import AnswerSpec, Pause, SpeechStart, StreamingEndpointer, Utterance
from voice_hitl.speech.asr import Hypothesis, Recognizer
from voice_hitl.voice._audio import resample_pcm16
from voice_hitl.voice._provider import ProviderSession, SessionConfig
from voice_hitl.voice._provider_events import (
    PCM16,
    AudioOutEvent,
    ProviderEvent,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    TranscriptionEvent,
    transcription_of,
)
from voice_hitl.voice._transport import check_pcm16

from ._synth import Synthesizer

__all__ = ["LocalCascadeSession"]

logger = logging.getLogger("voice_hitl.local")

_CHUNK_S = 0.1


class _Closed:
    """Marks the end of the event stream."""


class LocalCascadeSession(ProviderSession):
    """One offline call: caller audio -> endpointing -> recognition -> user transcriptions;
    ``say`` -> synthesis -> agent audio and an assistant transcription."""

    def __init__(
        self, config: SessionConfig, recognizer: Recognizer, synthesizer: Synthesizer
    ) -> None:
        self.config = config
        self.recognizer = recognizer
        self.synthesizer = synthesizer
        self.in_rate = config.input_format.sample_rate
        self.out_rate = config.output_format.sample_rate
        self._endpointer = StreamingEndpointer(self.in_rate)
        self._events: asyncio.Queue[ProviderEvent | _Closed] = asyncio.Queue()
        # Utterances in order, each as the (usually already running) recognition of its audio.
        self._utterances: asyncio.Queue[asyncio.Task[list[Hypothesis]]] = asyncio.Queue()
        self._early: asyncio.Task[list[Hypothesis]] | None = None
        self._expected: AnswerSpec | None = None
        self._speaking: asyncio.Task[None] | None = None
        self._say_lock = asyncio.Lock()
        self._recognition: asyncio.Task[None] | None = None
        self._closed = False
        self.tool_results: list[tuple[str, str, bool]] = []
        self.context: list[str] = []

    def start(self) -> None:
        """Start the recognition worker (called by the provider's ``connect``)."""
        self._recognition = asyncio.create_task(self._recognize_utterances(), name="local-asr")

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise ChannelClosedError(f"local cascade session is closed ({what})")

    def _emit(self, event: ProviderEvent) -> None:
        if not self._closed:
            self._events.put_nowait(event)

    async def events(self) -> AsyncIterator[ProviderEvent]:
        while True:
            event = await self._events.get()
            if isinstance(event, _Closed):
                return
            yield event

    # -- the caller --------------------------------------------------------------------------

    async def send_audio(self, frame: PCM16) -> None:
        """Hear a frame of caller audio (mono PCM16 at the session's input rate).

        Raises:
            AudioFormatError: The frame is not mono int16 (float32 or int32 samples would be
                misheard as silence); the session is unchanged and keeps working.
            ChannelClosedError: The session is closed.

        Cancellation: safe; the frame is heard whole or not at all.
        """
        self._check_open("send_audio")
        check_pcm16(frame)
        for found in self._endpointer.feed(frame):
            if isinstance(found, SpeechStart):
                self._emit(SpeechStartedEvent())
            elif isinstance(found, Pause):
                # Recognise speculatively: if this pause turns out to end the utterance, the
                # answer is ready when the end is confirmed; if speech resumes, drop it.
                self._drop_early()
                self._early = self._start_recognition(found.audio)
            elif isinstance(found, Utterance):
                self._emit(SpeechStoppedEvent())
                early, self._early = self._early, None
                self._utterances.put_nowait(early or self._start_recognition(found.audio))

    def _start_recognition(self, audio: PCM16) -> asyncio.Task[list[Hypothesis]]:
        return asyncio.create_task(
            self.recognizer.recognize(audio, self.in_rate, self._expected), name="local-asr-utt"
        )

    def _drop_early(self) -> None:
        if self._early is not None:
            self._early.cancel()
            self._early = None

    def expect_answer(self, spec: Any | None) -> None:
        self._expected = spec

    async def _recognize_utterances(self) -> None:
        while True:
            recognition = await self._utterances.get()
            try:
                hypotheses = await recognition
            except Exception:
                logger.exception("recognition failed; the utterance is reported as unheard")
                hypotheses = []
            self._emit(transcription_of(hypotheses))

    # -- the agent ---------------------------------------------------------------------------

    async def say(self, text: str) -> None:
        """Synthesise and play ``text``; returns early (normally) if interrupted.

        Cancellation: safe; the speech stops.
        """
        self._check_open("say")
        async with self._say_lock:
            speaking = self._speaking = asyncio.create_task(self._speak(text), name="local-tts")
            try:
                await speaking
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    speaking.cancel()
                    await asyncio.gather(speaking, return_exceptions=True)
                    raise
                # interrupt() stopped the speech; the caller of say() goes on.
            finally:
                self._speaking = None

    async def _speak(self, text: str) -> None:
        audio, rate = await self.synthesizer.synthesize(text)
        audio = resample_pcm16(audio, rate, self.out_rate)
        step = max(1, int(self.out_rate * _CHUNK_S))
        for start in range(0, len(audio), step):
            self._emit(AudioOutEvent(audio[start : start + step]))
        self._emit(TranscriptionEvent("assistant", text, final=True))

    async def interrupt(self) -> None:
        self._check_open("interrupt")
        speaking = self._speaking
        if speaking is not None:
            speaking.cancel("interrupted")

    async def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> None:
        self._check_open("submit_tool_result")
        self.tool_results.append((call_id, output, is_error))

    async def inject_context(self, text: str) -> None:
        self._check_open("inject_context")
        self.context.append(text)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._events.put_nowait(_Closed())
        tasks = [t for t in (self._recognition, self._early) if t is not None]
        while not self._utterances.empty():
            tasks.append(self._utterances.get_nowait())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
