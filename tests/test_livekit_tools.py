"""human_input_tools: a real LiveKit AgentSession (no room, no server) with a fake model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("livekit.agents")

from doors import Observed, human_tools
from livekit.agents import Agent, AgentSession
from livekit_fakes import FakeRealtimeModel, FakeRealtimeSession

import providers.livekit as lk
from voice_hitl import (
    ChannelType,
    HumanInputHandler,
    HumanInputToolHandler,
    PendingInputStatus,
    VoiceKit,
)
from voice_hitl.testing import RequestQueue

ACLOSE_BOUND = 0.1
"""Seconds of the loop's virtual time (looptime): the issue's bound for AgentSession.aclose(),
which only a sleep or a timeout inside it can exceed, however loaded the machine is."""


@dataclass
class Rig:
    session: AgentSession[Any]
    fake: FakeRealtimeSession
    human: HumanInputToolHandler
    observed: Observed
    kit: VoiceKit

    @property
    def handler(self) -> HumanInputHandler:
        return self.human.handler


@pytest.fixture
async def make_rig() -> AsyncIterator[Any]:
    rigs: list[Rig] = []

    async def make(*, timeout: float = 300.0, **kw: Any) -> Rig:
        kit = VoiceKit()
        observed = Observed.on(kit)
        human = human_tools(timeout)
        model = FakeRealtimeModel()
        session: AgentSession[Any] = AgentSession(
            llm=model,
            vad=None,
            turn_handling={"turn_detection": "realtime_llm"},
            user_away_timeout=None,
        )
        tools = lk.human_input_tools(human, kit=kit, channel_id="lk", **kw)
        await session.start(Agent(instructions="test agent", tools=tools))
        rig = Rig(session, model.sessions[-1], human, observed, kit)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        await rig.session.aclose()
        await rig.kit.aclose()


async def test_round_trip_answer_and_reply(make_rig: Any) -> None:
    rig = await make_rig()
    assert rig.fake.tool_names == ["AskUserQuestion", "ConfirmAction"]
    rig.fake.call_tool("AskUserQuestion", {"question": "May I refund?"}, "call_1")
    event = await rig.observed.requests.get()
    assert event.channel_type is ChannelType.REALTIME_VOICE
    assert (event.channel_id, event.tool_call_id, event.room_id) == ("lk", "call_1", "")
    assert event.actor_id is None  # no room: no linked participant
    assert event.arguments == {"question": "May I refund?"}
    assert rig.handler.resolve(event.pending_id, "Yes, approved.")
    output = await rig.fake.wait_for_output("call_1")
    assert (output.output, output.is_error) == ("Yes, approved.", False)
    await rig.fake.wait_until(lambda: rig.fake.count("generate_reply") == 1)
    report = await rig.observed.reports.get()
    assert (report.outcome, report.door.value) == ("ok", "provider")


async def test_timeout_refusal_and_bad_arguments_read_like_the_core(make_rig: Any) -> None:
    rig = await make_rig(room_id="room-9")
    rig.fake.call_tool("ConfirmAction", {"action": "transfer"}, "call_r")
    event = await rig.observed.requests.get()
    assert event.room_id == "room-9"
    rig.handler.reject(event.pending_id, "not today")
    output = await rig.fake.wait_for_output("call_r")
    assert output.is_error
    assert json.loads(output.output) == {"error": "Human input rejected: not today"}
    rig.fake.call_tool("AskUserQuestion", {"question": 5}, "call_bad")
    output = await rig.fake.wait_for_output("call_bad")
    assert output.is_error and "field 'question'" in json.loads(output.output)["error"]


async def test_timeout_text(make_rig: Any) -> None:
    rig = await make_rig(timeout=0.05)
    rig.fake.call_tool("AskUserQuestion", {"question": "Anyone?"}, "call_t")
    output = await rig.fake.wait_for_output("call_t")
    assert output.is_error
    assert json.loads(output.output) == {
        "error": "Human input timed out after 0.05s for tool 'AskUserQuestion'"
    }


@pytest.mark.looptime
async def test_aclose_returns_fast_and_withdraws(make_rig: Any) -> None:
    rig = await make_rig()
    rig.fake.call_tool("AskUserQuestion", {"question": "Still there?"}, "call_c")
    event = await rig.observed.requests.get()
    start = asyncio.get_running_loop().time()
    await rig.session.aclose()
    elapsed = asyncio.get_running_loop().time() - start
    assert elapsed < ACLOSE_BOUND, f"aclose took {elapsed:.3f}s"
    assert rig.handler.resolve(event.pending_id, "too late") is False
    assert rig.handler.pending == {}
    report = await rig.observed.reports.get()
    assert (report.outcome, report.error_detail) == ("cancelled", lk.SESSION_CLOSED)
    output = await rig.fake.wait_for_output("call_c")
    assert output.is_error and json.loads(output.output) == {"error": lk.SESSION_CLOSED}


@pytest.mark.looptime
async def test_interrupt_withdraws_by_default(make_rig: Any) -> None:
    rig = await make_rig()
    rig.fake.call_tool("AskUserQuestion", {"question": "?"}, "call_i")
    event = await rig.observed.requests.get()
    start = asyncio.get_running_loop().time()
    await rig.session.interrupt()
    assert asyncio.get_running_loop().time() - start < ACLOSE_BOUND
    report = await rig.observed.reports.get()
    assert (report.outcome, report.error_detail) == ("cancelled", lk.SPEECH_INTERRUPTED)
    assert rig.handler.resolve(event.pending_id, "late") is False


@pytest.mark.looptime
async def test_no_settle_on_interrupt_keeps_the_request_until_close(make_rig: Any) -> None:
    rig = await make_rig(settle_on_interrupt=False)
    rig.fake.call_tool("AskUserQuestion", {"question": "?"}, "call_k")
    event = await rig.observed.requests.get()
    rig.fake.caller_says("hello? are you there?")
    with pytest.raises(RuntimeError, match="does not allow interruptions"):
        await rig.session.interrupt()  # not forced: LiveKit refuses, the turn is protected
    assert rig.handler.get(event.pending_id) is not None
    assert rig.handler.get(event.pending_id).status is PendingInputStatus.PENDING
    start = asyncio.get_running_loop().time()
    await rig.session.aclose()
    assert asyncio.get_running_loop().time() - start < ACLOSE_BOUND
    assert rig.handler.resolve(event.pending_id, "late") is False


async def test_answer_after_caller_speech_when_protected(make_rig: Any) -> None:
    rig = await make_rig(settle_on_interrupt=False)
    rig.fake.call_tool("AskUserQuestion", {"question": "?"}, "call_s")
    event = await rig.observed.requests.get()
    rig.fake.caller_says("hold on")
    assert rig.handler.resolve(event.pending_id, "answered anyway")
    output = await rig.fake.wait_for_output("call_s")
    assert (output.output, output.is_error) == ("answered anyway", False)


async def test_without_a_kit_the_handlers_notifier_is_told() -> None:
    human = human_tools()
    requests = RequestQueue(human.handler, "lk-plain")
    model = FakeRealtimeModel()
    session: AgentSession[Any] = AgentSession(
        llm=model, vad=None, turn_handling={"turn_detection": "realtime_llm"}
    )
    tools = lk.human_input_tools(human, channel_id="lk-plain")
    await session.start(Agent(instructions="t", tools=tools))
    model.sessions[-1].call_tool("AskUserQuestion", {"question": "?"}, "call_q")
    event = await requests.next()
    assert (event.channel_id, event.channel_type) == ("lk-plain", ChannelType.REALTIME_VOICE)
    human.handler.resolve(event.pending_id, "ok")
    output = await model.sessions[-1].wait_for_output("call_q")
    assert output.output == "ok"
    await session.aclose()


def test_tools_carry_the_raw_schemas_and_need_definitions() -> None:
    human = human_tools()
    tools = lk.human_input_tools(human)
    schemas = [t.info.raw_schema for t in tools]
    assert [s["name"] for s in schemas] == ["AskUserQuestion", "ConfirmAction"]
    assert schemas[0]["parameters"]["required"] == ["question"]
    with pytest.raises(ValueError, match="no tool_definitions"):
        lk.human_input_tools(HumanInputToolHandler({"AskUserQuestion"}))


class _Participant:
    identity = "caller-42"


class _RoomIO:
    def __init__(self, participant: _Participant | None) -> None:
        self.linked_participant = participant
        self.room = type("Room", (), {"name": "room-x"})()


class _Session:
    def __init__(self, room_io: _RoomIO | None) -> None:
        self._room_io = room_io

    @property
    def room_io(self) -> _RoomIO:
        if self._room_io is None:
            raise RuntimeError("Cannot access room_io: not started with a room.")
        return self._room_io


def test_linked_identity_and_room_name() -> None:
    assert lk.linked_identity(_Session(_RoomIO(_Participant()))) == "caller-42"  # type: ignore[arg-type]
    assert lk.linked_identity(_Session(_RoomIO(None))) is None  # type: ignore[arg-type]
    assert lk.linked_identity(_Session(None)) is None  # type: ignore[arg-type]
    assert lk.room_name(_Session(_RoomIO(None))) == "room-x"  # type: ignore[arg-type]
    assert lk.room_name(_Session(None)) == ""  # type: ignore[arg-type]
