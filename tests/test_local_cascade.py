"""The embedded default's parts: streaming endpointing (with early pauses), the cascade
session (speculative recognition, interruptible speech, clean close), the scripted caller."""

from __future__ import annotations

import asyncio

import numpy as np

from providers.base import (
    AudioFormat,
    AudioOutEvent,
    ProviderEvent,
    SessionConfig,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    TranscriptionEvent,
)
from providers.local import (
    LocalCascadeProvider,
    Pause,
    SpeechStart,
    StreamingEndpointer,
    Utterance,
)
from voice_hitl import CallerTurn, ScriptedCallerTransport
from voice_hitl.speech.asr import Hypothesis

RATE = 16_000


def tone(seconds: float, level: int = 8000) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (level * np.sin(2 * np.pi * 220 * t)).astype(np.int16)


def quiet(seconds: float) -> np.ndarray:
    return np.random.default_rng(0).normal(0, 30, int(seconds * RATE)).astype(np.int16)


def test_endpointer_finds_start_pause_and_end() -> None:
    endpointer = StreamingEndpointer(RATE, end_silence_ms=500, pause_ms=150)
    events = endpointer.feed(np.concatenate([quiet(0.5), tone(1.0), quiet(0.8)]))
    kinds = [type(e) for e in events]
    assert kinds == [SpeechStart, Pause, Utterance]
    pause, end = events[1], events[2]
    assert isinstance(pause, Pause) and isinstance(end, Utterance)
    # The pause's audio is the utterance as if it ended there: same length as the end's.
    assert len(pause.audio) == len(end.audio)
    assert 1.0 < len(end.audio) / RATE < 2.0


def test_endpointer_ignores_clicks_and_resumed_speech_is_one_utterance() -> None:
    endpointer = StreamingEndpointer(RATE)
    click = np.concatenate([quiet(0.3), tone(0.02), quiet(0.3)])
    assert endpointer.feed(click) == []
    events = endpointer.feed(np.concatenate([tone(0.5), quiet(0.3), tone(0.5), quiet(0.8)]))
    assert [type(e) for e in events] == [SpeechStart, Pause, Pause, Utterance]


class CountingRecognizer:
    name = "counting"

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def recognize(
        self, pcm16: np.ndarray, sample_rate: int, spec: object
    ) -> list[Hypothesis]:
        self.calls.append(len(pcm16) / sample_rate)
        await asyncio.sleep(0)
        return [Hypothesis(f"heard {len(self.calls)}", 1.0)]


class ToneSynthesizer:
    name = "tone"

    async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
        return tone(0.5), RATE


async def collect_until(session: object, count: int) -> list[ProviderEvent]:
    events: list[ProviderEvent] = []
    async for event in session.events():  # type: ignore[attr-defined]
        events.append(event)
        if len(events) >= count:
            break
    return events


async def test_cascade_recognises_speculatively_and_speaks() -> None:
    recognizer = CountingRecognizer()
    provider = LocalCascadeProvider(recognizer=recognizer, synthesizer=ToneSynthesizer())
    fmt = AudioFormat(RATE)
    session = await provider.connect(SessionConfig(input_format=fmt, output_format=fmt))
    await session.send_audio(np.concatenate([quiet(0.3), tone(0.8), quiet(0.8)]))
    started, stopped, heard = await collect_until(session, 3)
    assert isinstance(started, SpeechStartedEvent) and isinstance(stopped, SpeechStoppedEvent)
    assert isinstance(heard, TranscriptionEvent) and heard.role == "user"
    assert heard.text == "heard 1"
    assert len(recognizer.calls) == 1  # the pause's recognition was used at the end
    await session.say("hello")
    events = await collect_until(session, 6)
    assert all(isinstance(e, AudioOutEvent) for e in events[:5])
    assert isinstance(events[5], TranscriptionEvent) and events[5].text == "hello"
    await session.aclose()
    await session.aclose()


async def test_cascade_interrupt_stops_only_speech() -> None:
    class SlowSynthesizer(ToneSynthesizer):
        started = asyncio.Event()

        async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
            self.started.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    synthesizer = SlowSynthesizer()
    provider = LocalCascadeProvider(recognizer=CountingRecognizer(), synthesizer=synthesizer)
    session = await provider.connect(SessionConfig())
    saying = asyncio.create_task(session.say("a long question"))
    await synthesizer.started.wait()
    await session.interrupt()
    await saying  # returns normally: the speech was cut, the caller of say() goes on
    await session.aclose()


async def test_scripted_caller_answers_after_the_agent() -> None:
    turns = [
        CallerTurn(tone(0.2), "hello", after="now"),
        CallerTurn(tone(0.2), "answer"),
    ]
    caller = ScriptedCallerTransport(turns, speed=0, trailing_silence_ms=100)
    frames: asyncio.Queue[np.ndarray | None] = asyncio.Queue()

    async def listen() -> None:
        async for frame in caller.caller_audio("s"):
            frames.put_nowait(frame)
        frames.put_nowait(None)

    async def take(seconds: float) -> None:
        got = 0
        while got < seconds * RATE:
            frame = await frames.get()
            assert frame is not None
            got += len(frame)

    listening = asyncio.create_task(listen())
    await take(0.3)  # "hello" and its trailing quiet; then the caller waits for the agent
    assert frames.empty()
    await caller.play("s", tone(0.3))
    caller.observe(TranscriptionEvent("assistant", "question?"))
    await take(0.3)  # the answer, once the agent's audio has played
    caller.observe(TranscriptionEvent("assistant", "bye"))
    assert await frames.get() is None
    await listening
    assert caller.finished.is_set()
    assert [label for _, label in caller.turns_played] == ["hello", "answer"]
    caller_track, agent_track = caller.recording()
    assert len(caller_track) == len(agent_track)
    # On the call's clock the answer starts when the agent's 0.3 s of audio has ended.
    assert caller.turns_played[1][0] == 0.6
