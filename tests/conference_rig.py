"""Test rig for conference channels: a mock provider that reports audio it was sent, a
three-person in-memory call, and the conference's human-input tools."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np
from doors import Host, ModelRead, Observed

from conference import ConferenceChannel, ConferenceRealtimeConfig, InMemoryConferenceBackend
from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    AITool,
    HumanInputToolHandler,
    ToolHandler,
    VoiceKit,
)
from voice_hitl.responder._risk import EvidencePolicy
from voice_hitl.speech.asr import AudioQuality, Hypothesis

ASK = ASK_USER_QUESTION
CONFIRM = CONFIRM_ACTION
LOOKUP = AITool(
    name="lookup",
    description="A host tool.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)
KEY = b"application-receipt-key"


def conference_tools(timeout: float = 300.0) -> HumanInputToolHandler:
    return HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction"}, timeout=timeout, tool_definitions=[ASK, CONFIRM]
    )


@dataclass
class Rig:
    kit: VoiceKit
    conf: ConferenceChannel
    backend: InMemoryConferenceBackend
    provider: MockRealtimeProvider
    observed: Observed
    human: HumanInputToolHandler
    config: ConferenceRealtimeConfig

    def call(self, name: str, arguments: dict[str, Any] | str) -> asyncio.Task[ModelRead]:
        """The model calls a tool on the conference door; the task ends with what it reads."""
        call_id = self.provider.simulate_tool_call(self.conf, name, arguments)
        return asyncio.create_task(self._result(call_id))

    async def _result(self, call_id: str) -> ModelRead:
        record = await self.provider.wait_for_tool_result(call_id)
        return ModelRead(record.output, record.is_error)


async def make_rig(
    *,
    timeout: float = 300.0,
    host: ToolHandler | None = None,
    people: tuple[tuple[str, str], ...] = (("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")),
    plug: bool = True,
    human: HumanInputToolHandler | None = None,
    evidence: EvidencePolicy | None = None,
) -> Rig:
    kit = VoiceKit()
    observed = Observed.on(kit)
    backend = InMemoryConferenceBackend(frame_samples=160)
    for participant_id, name in people:
        backend.join(participant_id, name)
    provider = MockRealtimeProvider()
    human = human if human is not None else conference_tools(timeout)
    config = ConferenceRealtimeConfig(
        provider,
        tools=[LOOKUP],
        tool_handler=host or Host(),
        human_input_handler=human,
        instructions="You are the meeting bot.",
    )
    conf = ConferenceChannel("conf", backend=backend, realtime=config, evidence=evidence)
    kit.register_channel(conf)
    conf.receipt_key = KEY
    if plug:
        await conf.plug_realtime()
    return Rig(kit, conf, backend, provider, observed, human, config)


# -- per-speaker hearing in tone words ------------------------------------------------------

TONE_WORDS = {600.0: "confirm", 900.0: "no", 1200.0: "hello there"}
"""The tone that stands for each word in :class:`ToneWords`."""


def tone_word(word: str, seconds: float = 0.6, rate: int = 16_000, level: int = 3000) -> np.ndarray:
    """``word`` said in tone words: its tone for ``seconds`` at about -20 dBFS."""
    (freq,) = [f for f, w in TONE_WORDS.items() if w == word]
    t = np.arange(round(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * level).astype(np.int16)


class ToneWords:
    """A recogniser of tone words: each utterance is read as the word of its dominant tone,
    with the share of the loud audio's power at that tone as its confidence and the audio's
    figures measured from the samples (speech: the loud 10 ms blocks; noise: the rest). It
    reads the whole utterance it is given, so two people merged into one stream would read
    as neither word (their tones split the power). Work runs in a thread, as a real
    recogniser's does; ``calls`` counts the utterances it was given."""

    name = "tone-words"

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def recognize(
        self, pcm16: np.ndarray, sample_rate: int, spec: object | None
    ) -> list[Hypothesis]:
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await asyncio.to_thread(self._read, pcm16, sample_rate)
        finally:
            self.in_flight -= 1

    @staticmethod
    def _read(pcm16: np.ndarray, rate: int) -> list[Hypothesis]:
        block = rate // 100
        n = len(pcm16) // block
        if n == 0:
            return []
        x = pcm16[: n * block].astype(np.float64).reshape(n, block) / 32768.0
        power = (x**2).mean(axis=1)
        loud = power > 1e-4
        if not loud.any():
            return []
        speech = x[loud].ravel()
        spectrum = np.abs(np.fft.rfft(speech)) ** 2
        freqs = np.fft.rfftfreq(len(speech), 1 / rate)
        total = float(spectrum.sum()) or 1.0
        shares = {
            word: float(spectrum[np.abs(freqs - f) < 25].sum()) / total
            for f, word in TONE_WORDS.items()
        }
        word, share = max(shares.items(), key=lambda kv: kv[1])
        noise = float(power[~loud].mean()) if (~loud).any() else 1e-9
        snr = min(60.0, 10 * np.log10(float(power[loud].mean()) / max(noise, 1e-9)))
        quality = AudioQuality(
            speech_ms=float(loud.sum()) * 10,
            speech_probability=share,
            snr_db=snr,
            clipped=float(np.mean(np.abs(pcm16) >= 32000)),
        )
        if share < 0.5:
            return [Hypothesis("", 0.0, transcript="", confidence=share, quality=quality)]
        return [Hypothesis(word, share, transcript=word, confidence=share, quality=quality)]
