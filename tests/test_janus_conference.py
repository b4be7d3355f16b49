"""Conference bots in a real Janus AudioBridge room (a throwaway Janus per test).

The participants are scripted plain-RTP clients (``janus_rig.ScriptedParticipant``) speaking
``audio_fixtures/demo`` recordings at real time; the bot is ``JanusConferenceBackend``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from conference_rig import ASK, CONFIRM, KEY, LOOKUP, conference_tools
from doors import Host, Observed
from janus_rig import JanusServer, ScriptedParticipant, janus  # noqa: F401

from conference import (
    ConferenceChannel,
    ConferenceEnded,
    ConferenceEvent,
    ConferenceRealtimeConfig,
    MixedFrame,
    ParticipantJoined,
    ParticipantLeft,
    PerSpeakerHearing,
    verify_receipt,
)
from conference.janus import JanusConferenceBackend
from conference.janus._codec import CodecName
from providers.mock import MockRealtimeProvider
from voice_hitl import (
    Heard,
    HumanInputToolHandler,
    ReasoningBackend,
    ReasoningReply,
    ReasoningTurn,
    RequestSettled,
    ToolCaller,
    ToolCallReport,
    ToolResult,
    VoiceKit,
)
from voice_hitl.demo._demo_agent import ApprovalAgent
from voice_hitl.journal import Journal
from voice_hitl.voice._audio import read_wav_pcm16

pytest.importorskip("httpx", reason="the Janus backend needs the 'janus' extra (httpx)")

FIXTURES = Path(__file__).resolve().parent.parent / "audio_fixtures" / "demo"
ROOM = 4321
RATE = 16_000


def fixture(name: str) -> tuple[np.ndarray, int]:
    return read_wav_pcm16(FIXTURES / name)


@dataclass
class Meeting:
    server: JanusServer
    backend: JanusConferenceBackend
    people: dict[str, ScriptedParticipant]
    events: asyncio.Queue[ConferenceEvent] = field(default_factory=asyncio.Queue)

    def pid(self, name: str) -> str:
        participant_id = self.people[name].participant_id
        assert participant_id is not None
        return participant_id


@asynccontextmanager
async def meeting(
    server: JanusServer, *names: str, keepalive: float = 15.0, codec: CodecName = "pcmu"
) -> AsyncIterator[Meeting]:
    """The bot's room with the named plain-RTP participants in it (each in a seat)."""
    backend = JanusConferenceBackend(
        server.url,
        ROOM,
        secret=server.room_secret,
        seats=len(names),
        sample_rate=RATE,
        keepalive=keepalive,
        request_timeout=min(10.0, keepalive * 4),
        codec=codec,
    )
    events: asyncio.Queue[ConferenceEvent] = asyncio.Queue()
    backend.add_listener(events.put_nowait)
    await backend.start()
    people: dict[str, ScriptedParticipant] = {}
    try:
        for name in names:
            person = ScriptedParticipant(server.url, ROOM, name, backend.reserve_seat(name))
            people[name] = await person.join()
            joined = await asyncio.wait_for(events.get(), 10)
            assert isinstance(joined, ParticipantJoined)
            assert joined.participant.display_name == name
        yield Meeting(server, backend, people, events)
    finally:
        for person in people.values():
            await person.leave()
        await backend.aclose()


@pytest.mark.parametrize("codec", ["pcmu", "opus"])
async def test_roster_attribution_bot_speech_and_leaving(
    janus: JanusServer,  # noqa: F811
    codec: CodecName,
) -> None:
    if codec == "opus":
        pytest.importorskip("av", reason="Opus on the bot leg needs PyAV")
    async with meeting(janus, "Alice", "Bob", codec=codec) as m:
        assert {p.display_name for p in m.backend.participants.values()} == {"Alice", "Bob"}
        lane = m.backend.open_audio()
        frames: list[MixedFrame] = []

        async def read() -> None:
            async for frame in lane.mixed():
                frames.append(frame)

        reader = asyncio.create_task(read())
        speech, rate = fixture("alice_approve.wav")
        await m.people["Alice"].say(speech, rate)
        # The bot speaks: one second of a tone reaches Bob through the room's mix.
        heard_before = len(m.people["Bob"].heard)
        tone = (np.sin(np.arange(RATE) * 2 * np.pi * 440 / RATE) * 8000).astype(np.int16)
        await lane.play(tone)
        await asyncio.wait_for(m.people["Bob"].hears_loud(heard_before, 25), 10)
        await m.people["Bob"].leave()
        left = await asyncio.wait_for(m.events.get(), 10)
        assert isinstance(left, ParticipantLeft) and left.participant.display_name == "Bob"
        assert left.reason == "left the conference"
        await m.backend.kick(m.pid("Alice"))
        kicked = await asyncio.wait_for(m.events.get(), 10)
        assert isinstance(kicked, ParticipantLeft) and kicked.participant.display_name == "Alice"
        assert kicked.reason == "was kicked from the conference"
        await m.backend.destroy_room()
        ended = await asyncio.wait_for(m.events.get(), 10)
        assert isinstance(ended, ConferenceEnded) and "destroyed" in ended.reason
        await asyncio.wait_for(reader, 10)  # the lane ends with the room

    alice = m.pid("Alice")
    loud = [f for f in frames if np.abs(f.samples).max() > 1500]
    assert len(loud) > 20, "Alice's speech did not reach the bot"
    assert all(f.speakers == {alice} for f in loud), [
        (i, sorted(f.speakers), int(np.abs(f.samples).max()))
        for i, f in enumerate(frames)
        if np.abs(f.samples).max() > 1500 and f.speakers != {alice}
    ]
    silent = [f for f in frames if np.abs(f.samples).max() < 100]
    assert len(silent) > 20
    # Silence is unattributed, but at the edges of speech: a seat counts +-45 ms around a loud
    # frame, and Opus delays the mix a frame against the µ-law seat levels.
    assert sum(1 for f in silent if f.speakers) <= len(silent) // 5
    assert all(f.speakers <= {alice} for f in frames)
    assert all(len(f.samples) == RATE // 50 for f in frames)
    assert m.backend.media.jitter.stats.lost == 0


def mock_channel(backend: JanusConferenceBackend, human: HumanInputToolHandler) -> tuple[
    VoiceKit, ConferenceChannel, MockRealtimeProvider, Observed
]:
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    config = ConferenceRealtimeConfig(
        provider,
        tools=[LOOKUP],
        tool_handler=Host(),
        human_input_handler=human,
        instructions="You are the meeting bot.",
        sample_rate=RATE,
    )
    conf = ConferenceChannel("conf", backend=backend, realtime=config)
    kit.register_channel(conf)
    conf.receipt_key = KEY
    return kit, conf, provider, observed


async def test_janus_killed_mid_question_settles_with_the_reason(
    janus: JanusServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    async with meeting(janus, "Alice", "Bob") as m:
        human = conference_tools()
        journal = await asyncio.to_thread(Journal.open, tmp_path / "journal.sqlite3", KEY)
        journal.attach(human.handler)
        kit, conf, provider, observed = mock_channel(m.backend, human)
        await conf.plug_realtime()
        provider.simulate_tool_call(
            conf, "ConfirmAction", {"action": "deploy", "approvers": ["Alice", "Bob"], "quorum": 2}
        )
        asked = await asyncio.wait_for(observed.requests.get(), 10)
        addressed = conf.addressed_to(asked.pending_id) or ()
        assert [p.display_name for p in addressed] == ["Alice", "Bob"]
        janus.kill()
        ended = await asyncio.wait_for(next_ended(m.events), 10)
        assert "Janus session lost" in ended.reason
        report = await asyncio.wait_for(observed.reports.get(), 10)
        assert report.outcome == "cancelled"
        assert report.error_detail is not None and "Janus session lost" in report.error_detail
        await asyncio.wait_for(conf.close(), 10)
        assert not conf.plugged
        await kit.aclose()
        await asyncio.to_thread(journal.flush)
        entries = await asyncio.to_thread(journal.store.read, asked.pending_id)
        await asyncio.to_thread(journal.close)
    (settled,) = [e for e in entries if e.kind == "settled"]
    assert settled.data["outcome"] == "withdrawn"
    assert "Janus session lost" in settled.data["detail"]


async def test_a_frozen_janus_misses_keepalives_and_ends_the_conference(
    janus: JanusServer,  # noqa: F811
) -> None:
    async with meeting(janus, "Alice", keepalive=0.3) as m:
        kit, conf, provider, observed = mock_channel(m.backend, conference_tools())
        await conf.plug_realtime()
        provider.simulate_tool_call(conf, "AskUserQuestion", {"question": "Ship?", "ask": "Alice"})
        await asyncio.wait_for(observed.requests.get(), 10)
        janus.freeze()  # alive but silent: the long poll just waits; a keepalive times out
        try:
            ended = await asyncio.wait_for(next_ended(m.events), 10)
            report = await asyncio.wait_for(observed.reports.get(), 10)
        finally:
            janus.freeze(False)
        assert ended.reason.startswith("Janus session lost: keepalive failed")
        assert report.outcome == "cancelled" and report.error_detail == ended.reason
        await conf.close()
        await kit.aclose()


async def next_ended(queue: asyncio.Queue[ConferenceEvent]) -> ConferenceEnded:
    while not isinstance(event := await queue.get(), ConferenceEnded):
        pass
    return event


class TurnWords:
    """The provider's recogniser in the spoken meeting: every utterance of the mix is a turn
    ("go on"); the votes are heard per speaker, by Whisper."""

    name = "turn-words"

    async def recognize(self, pcm16: np.ndarray, sample_rate: int, spec: object) -> list[object]:
        hypothesis = importlib.import_module("voice_hitl.speech.asr").Hypothesis
        return [hypothesis("go on", 1.0, transcript="go on")]


class ToneSynthesizer:
    """The bot's voice in these tests: a short tone per reply (no TTS model to load)."""

    name = "tone"

    async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
        t = np.arange(RATE // 5) / RATE
        return (np.sin(2 * np.pi * 440 * t) * 6000).astype(np.int16), RATE


async def speech_channel(
    backend: JanusConferenceBackend, recognizer: str, agent: ReasoningBackend | None = None
) -> tuple[VoiceKit, ConferenceChannel, Observed, ReasoningBackend]:
    local = await asyncio.to_thread(importlib.import_module, "providers.local")
    asr = await asyncio.to_thread(importlib.import_module, "voice_hitl.speech.asr")
    kit = VoiceKit()
    observed = Observed.on(kit)
    hears = await asr.load_recognizer(recognizer)
    # The provider's turns only wake the agent (it reads no words): a recogniser of no cost
    # there, so the CPU goes to hearing each speaker.
    provider = local.LocalCascadeProvider(recognizer=TurnWords(), synthesizer=ToneSynthesizer())
    agent = agent or ApprovalAgent(approvers=("Alice", "Bob"))  # the demo's bot
    human = HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction"}, timeout=60.0, tool_definitions=[ASK, CONFIRM]
    )
    config = ConferenceRealtimeConfig(
        provider, human_input_handler=human, reasoning_backend=agent, sample_rate=RATE
    )
    # The provider hears the mix for the bot's turns; votes are heard on each seat's own
    # stream (per-speaker hearing), with the same recogniser.
    conf = ConferenceChannel(
        "meeting",
        backend=backend,
        realtime=config,
        hearing=PerSpeakerHearing(hears),
    )
    kit.register_channel(conf)
    conf.receipt_key = KEY
    await conf.plug_realtime()
    return kit, conf, observed, agent


async def test_approver_leaving_and_provider_unplugged_as_the_contract_says(
    janus: JanusServer,  # noqa: F811
) -> None:
    # The in-memory contract (test_conference_approvals, test_conference_channel) on Janus.
    async with meeting(janus, "Alice", "Bob") as m:
        kit, conf, provider, observed = mock_channel(m.backend, conference_tools())
        await conf.plug_realtime()
        call = provider.simulate_tool_call(
            conf, "ConfirmAction", {"action": "refund", "approvers": ["Bob"]}
        )
        await asyncio.wait_for(observed.requests.get(), 10)
        await m.people["Bob"].leave()
        record = await asyncio.wait_for(provider.wait_for_tool_result(call), 10)
        bob = m.pid("Bob")
        assert record.is_error and (
            f"Bob ({bob}) left the conference before answering; "
            "the quorum of 1 for 'refund' can no longer be reached"
        ) in record.output
        # Unplugged mid-question: withdrawn with the reason, the call goes on, plug again.
        provider.simulate_tool_call(conf, "AskUserQuestion", {"question": "Still there?"})
        await asyncio.wait_for(observed.requests.get(), 10)
        sent_before = len(provider.tool_results)
        await conf.unplug_realtime()
        report = await asyncio.wait_for(_report(observed, "cancelled"), 10)
        assert report.error_detail == "realtime provider unplugged"
        assert len(provider.tool_results) == sent_before  # the provider was sent nothing
        assert m.backend.open_lanes == 0 and m.backend.ended is None
        await conf.plug_realtime()
        assert m.backend.open_lanes == 1
        await conf.close()
        await kit.aclose()


async def _report(observed: Observed, outcome: str) -> ToolCallReport:
    while (report := await observed.reports.get()).outcome != outcome:
        pass
    return report


class MeetingAgent:
    """The bot of the spoken meeting: on its first turn it asks Bob whether to deploy, then
    needs Alice and Bob to confirm the transfer (a quorum of two)."""

    def __init__(self) -> None:
        self.results: list[ToolResult] = []

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        if self.results:
            return None
        question = {"question": "Bob, shall I deploy?", "ask": "Bob"}
        self.results.append(await call_tool("AskUserQuestion", question))
        approval = {"action": "move 500 dollars", "approvers": ["Alice", "Bob"], "quorum": 2}
        self.results.append(await call_tool("ConfirmAction", approval))
        return ReasoningReply("Done.")


async def test_addressed_question_and_spoken_quorum_in_a_janus_room(
    janus: JanusServer,  # noqa: F811
) -> None:
    pytest.importorskip("faster_whisper", reason="hearing the meeting needs the 'speech' extra")
    agent = MeetingAgent()
    async with meeting(janus, "Alice", "Bob", "Carol") as m:
        kit, conf, observed, _ = await speech_channel(m.backend, "whisper", agent)
        settled: list[RequestSettled] = []
        human = conf.human_input_handler
        assert human is not None
        human.handler.add_observer(
            lambda e: settled.append(e) if isinstance(e, RequestSettled) else None
        )
        heard: asyncio.Queue[Heard] = asyncio.Queue()
        conf.add_speech_listener(lambda h: heard.put_nowait(h) if h.kind == "speech" else None)

        async def says(name: str, recording: str) -> Heard:
            """``name`` says ``recording``; returns the bot's attributed hearing of it."""
            audio, rate = await asyncio.to_thread(fixture, recording)  # the loop paces RTP
            await m.people[name].say(audio, rate)
            return await asyncio.wait_for(heard.get(), 30)

        assert (await says("Alice", "carol_chatter.wav")).speaker_id == m.pid("Alice")
        asked = await asyncio.wait_for(observed.requests.get(), 30)
        assert [p.display_name for p in conf.addressed_to(asked.pending_id) or ()] == ["Bob"]
        # The addressed question: Alice's "confirm" is not taken, Bob's is.
        alice_said = await says("Alice", "say_confirm.wav")
        assert alice_said.speaker_id == m.pid("Alice") and "confirm" in alice_said.text.lower()
        assert not agent.results and asked.pending_id in conf.open_requests
        assert (await says("Bob", "say_confirm.wav")).speaker_id == m.pid("Bob")
        approval_asked = await asyncio.wait_for(observed.requests.get(), 30)
        assert agent.results[0].outcome == "ok" and agent.results[0].text == "yes"
        assert (settled[0].outcome, settled[0].by, settled[0].via) == (
            "answered",
            m.pid("Bob"),
            "speech",
        )
        # The quorum: Carol (not an approver) saying the same words is not counted.
        pid = approval_asked.pending_id
        assert (await says("Carol", "say_confirm.wav")).speaker_id == m.pid("Carol")
        approval = conf.approval(pid)
        assert approval is not None and approval.approvals == ()
        assert (await says("Alice", "say_confirm.wav")).speaker_id == m.pid("Alice")
        assert [a.participant.display_name for a in approval.approvals] == ["Alice"]
        await says("Bob", "say_confirm.wav")
        report = await asyncio.wait_for(_report(observed, "ok"), 30)
        assert report.tool_name == "AskUserQuestion"
        report = await asyncio.wait_for(_report(observed, "ok"), 30)
        assert report.tool_name == "ConfirmAction"
        result = conf.approval_result(pid)
        await conf.close()
        await kit.aclose()
    assert result is not None
    assert result.approvers == (m.pid("Alice"), m.pid("Bob"))
    assert all(verify_receipt(a.receipt, KEY) for a in result.approvals)
    assert [a.receipt.decision for a in result.approvals] == ["approve", "approve"]
    assert json.loads(agent.results[1].text)["approved"] is True
