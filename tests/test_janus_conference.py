"""Conference bots in a real Janus AudioBridge room (a throwaway Janus per test).

The participants are scripted plain-RTP clients (``janus_rig.ScriptedParticipant``) speaking
``audio_fixtures/demo`` recordings at real time; the bot is ``JanusConferenceBackend``.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from conference_rig import KEY, LOOKUP, conference_tools
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
    verify_receipt,
)
from conference.janus import JanusConferenceBackend
from providers.mock import MockRealtimeProvider
from voice_hitl import CONFIRM_ACTION, Heard, HumanInputToolHandler, VoiceKit
from voice_hitl._audio import read_wav_pcm16
from voice_hitl._demo_agent import ApprovalAgent
from voice_hitl.journal import Journal

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
async def meeting(server: JanusServer, *names: str) -> AsyncIterator[Meeting]:
    """The bot's room with the named plain-RTP participants in it (each in a seat)."""
    backend = JanusConferenceBackend(
        server.url, ROOM, secret=server.room_secret, seats=len(names), sample_rate=RATE
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


async def test_roster_attribution_bot_speech_and_leaving(janus: JanusServer) -> None:  # noqa: F811
    async with meeting(janus, "Alice", "Bob") as m:
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
        (i, f.speakers, int(np.abs(f.samples).max())) for i, f in enumerate(frames) if f in loud
    ]
    silent = [f for f in frames if np.abs(f.samples).max() < 100]
    assert len(silent) > 20
    assert sum(1 for f in silent if f.speakers) <= 6  # silence unattributed (but at the edges)
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


async def next_ended(queue: asyncio.Queue[ConferenceEvent]) -> ConferenceEnded:
    while not isinstance(event := await queue.get(), ConferenceEnded):
        pass
    return event


class ToneSynthesizer:
    """The bot's voice in these tests: a short tone per reply (no TTS model to load)."""

    name = "tone"

    async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
        t = np.arange(RATE // 5) / RATE
        return (np.sin(2 * np.pi * 440 * t) * 6000).astype(np.int16), RATE


async def speech_channel(
    backend: JanusConferenceBackend, recognizer: str
) -> tuple[VoiceKit, ConferenceChannel, Observed, ApprovalAgent]:
    local = await asyncio.to_thread(importlib.import_module, "providers.local")
    asr = await asyncio.to_thread(importlib.import_module, "voice_hitl.speech.asr")
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = local.LocalCascadeProvider(
        recognizer=await asr.load_recognizer(recognizer), synthesizer=ToneSynthesizer()
    )
    agent = ApprovalAgent(approvers=("Alice", "Bob"))
    human = HumanInputToolHandler(
        {"ConfirmAction"}, timeout=60.0, tool_definitions=[CONFIRM_ACTION]
    )
    config = ConferenceRealtimeConfig(
        provider, human_input_handler=human, reasoning_backend=agent, sample_rate=RATE
    )
    conf = ConferenceChannel("meeting", backend=backend, realtime=config)
    kit.register_channel(conf)
    conf.receipt_key = KEY
    await conf.plug_realtime()
    return kit, conf, observed, agent


async def test_spoken_quorum_approval_in_a_janus_room(janus: JanusServer) -> None:  # noqa: F811
    pytest.importorskip("faster_whisper", reason="hearing the meeting needs the 'speech' extra")
    async with meeting(janus, "Alice", "Bob", "Carol") as m:
        kit, conf, observed, agent = await speech_channel(m.backend, "whisper")
        heard: asyncio.Queue[Heard] = asyncio.Queue()
        conf.add_speech_listener(lambda h: heard.put_nowait(h) if h.kind == "speech" else None)
        opening, rate = fixture("meeting_opening.wav")
        await m.people["Alice"].say(opening, rate)
        asked = await asyncio.wait_for(observed.requests.get(), 30)
        pid = asked.pending_id
        addressed = conf.addressed_to(pid) or ()
        assert [p.display_name for p in addressed] == ["Alice", "Bob"]
        while (await heard.get()).speaker_id != m.pid("Alice"):
            pass  # the opening, credited to Alice
        # Carol says the very words Bob will say: she is not an approver, nothing counts.
        words, rate = fixture("say_confirm.wav")
        await m.people["Carol"].say(words, rate)
        carol = await asyncio.wait_for(heard.get(), 30)
        assert carol.speaker_id == m.pid("Carol") and carol.attribution == 1.0
        approval = conf.approval(pid)
        assert approval is not None and approval.approvals == ()
        await m.people["Alice"].say(words, rate)
        assert (await asyncio.wait_for(heard.get(), 30)).speaker_id == m.pid("Alice")
        approval = conf.approval(pid)
        assert approval is not None
        assert [a.participant.display_name for a in approval.approvals] == ["Alice"]
        await m.people["Bob"].say(words, rate)
        report = await asyncio.wait_for(observed.reports.get(), 30)
        assert report.outcome == "ok"
        result = conf.approval_result(pid)
        await conf.close()
        await kit.aclose()
    assert result is not None
    assert result.approvers == (m.pid("Alice"), m.pid("Bob"))
    assert all(verify_receipt(a.receipt, KEY) for a in result.approvals)
    assert [a.receipt.decision for a in result.approvals] == ["approve", "approve"]
    assert agent.transfers == [500.0]
