"""RealtimeVoiceChannel: the same scenarios through every door (provider, recovered,
reasoning), plus settling, warnings, collisions and malformed input.

The door scenarios that involve the model's wire (answer, refusal, the handler's own timeout,
settling on end/close, barge-in) run for every provider: the mock, and the OpenAI Realtime and
Gemini Live providers against their loopback test servers (``provider_sides``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from doors import (
    ASK,
    CONFIRM,
    DOORS,
    LOOKUP,
    DoorDriver,
    Host,
    Observed,
    QueueBackend,
    human_tools,
)
from provider_sides import PROVIDERS, MockSide, ModelSide, open_side

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    AITool,
    ChannelClosedError,
    ChannelType,
    Door,
    HookContext,
    HookResult,
    HookTrigger,
    HumanInputToolHandler,
    LocalTransport,
    RealtimeVoiceChannel,
    ToolUseEvent,
    VoiceKit,
)


def build(
    door: str,
    *,
    timeout: float = 300.0,
    host: Host | None = None,
    side: ModelSide | None = None,
    **kw: Any,
) -> tuple[VoiceKit, RealtimeVoiceChannel, Any, DoorDriver, Observed]:
    """A kit and channel on ``side``'s provider (the mock by default)."""
    kit = VoiceKit()
    observed = Observed.on(kit)
    side = side or MockSide()
    provider = side.provider
    backend = QueueBackend() if door == "reasoning" else None
    voice = RealtimeVoiceChannel(
        "voice",
        provider=provider,
        tools=[LOOKUP],
        tool_handler=host or Host(),
        human_input_handler=human_tools(timeout),
        reasoning_backend=backend,
        **kw,
    )
    kit.register_channel(voice)
    return kit, voice, provider, DoorDriver(door, side, backend), observed


@pytest.fixture(params=DOORS)
def door(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=PROVIDERS)
async def side(request: pytest.FixtureRequest) -> AsyncIterator[ModelSide]:
    async with open_side(str(request.param)) as model_side:
        yield model_side


async def test_answer_becomes_the_result(door: str, side: ModelSide) -> None:
    kit, voice, provider, driver, observed = build(door, side=side)
    session = await voice.start_session("room-1", participant_id="caller-7")
    reading = driver.call(session, "AskUserQuestion", {"question": "Which account?"})
    event = await observed.requests.get()
    assert event.channel_type is ChannelType.REALTIME_VOICE
    assert event.actor_id == "caller-7"
    assert event.room_id == "room-1"
    assert event.arguments == {"question": "Which account?"}
    assert voice.human_input_handler is not None
    assert voice.human_input_handler.handler.resolve(event.pending_id, '{"answer": "savings"}')
    read = await reading
    assert not read.is_error
    assert read.json() == {"answer": "savings"}
    if door == "recovered":
        assert read.label == "[Tool AskUserQuestion completed]"
        assert session.transcript[-1].text == "Let me check with you."
    report = await observed.reports.get()
    assert report.outcome == "ok" and report.door.value == door
    assert report.actor_id == "caller-7"
    await kit.aclose()


async def test_hook_block_is_a_refusal_the_model_reads(door: str, side: ModelSide) -> None:
    kit, voice, provider, driver, observed = build(door, side=side)

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def no_confirms(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        if event.tool_name == "ConfirmAction":
            return HookResult.block("confirmations are disabled")
        return None

    session = await voice.start_session("room-1")
    read = await driver.call(session, "ConfirmAction", {"action": "transfer"})
    assert read.is_error
    assert read.json() == {"error": "confirmations are disabled"}
    if door == "recovered":
        assert read.label == "[Tool ConfirmAction denied]"
    assert observed.requests.empty()
    await kit.aclose()


@pytest.mark.looptime
async def test_handler_timeout_beats_the_channel_bound(door: str, side: ModelSide) -> None:
    kit, voice, provider, driver, observed = build(door, timeout=30.0, side=side)
    assert voice.gate.tool_timeout_seconds == 10.0
    loop = asyncio.get_running_loop()
    session = await voice.start_session("room-1")
    start = loop.time()
    reading = driver.call(session, "AskUserQuestion", {"question": "Slow?"})
    event = await observed.requests.get()
    await asyncio.sleep(12)  # the person takes 12 s of virtual time: past the 10 s bound
    assert voice.human_input_handler is not None
    assert voice.human_input_handler.handler.resolve(event.pending_id, "finally")
    read = await reading
    assert (read.text, read.is_error) == ("finally", False)
    assert loop.time() - start == pytest.approx(12.0, abs=0.05)
    await kit.aclose()


@pytest.mark.looptime
async def test_host_tool_still_bounded_at_10s(door: str) -> None:
    kit, voice, provider, driver, observed = build(door, host=Host(delay=12))
    session = await voice.start_session("room-1")
    read = await driver.call(session, "lookup", {"key": "k"})
    assert read.is_error
    assert read.json() == {"error": "Tool 'lookup' timed out after 10s"}
    await kit.aclose()


@pytest.mark.looptime
async def test_timeout_text(door: str) -> None:
    kit, voice, provider, driver, observed = build(door, timeout=30.0)
    session = await voice.start_session("room-1")
    read = await driver.call(session, "AskUserQuestion", {"question": "Anyone?"})
    assert read.is_error
    assert read.json() == {"error": "Human input timed out after 30s for tool 'AskUserQuestion'"}
    if door == "recovered":
        assert read.label == "[Tool AskUserQuestion failed]"
    await kit.aclose()


async def test_end_session_settles_and_next_session_asks_again(door: str, side: ModelSide) -> None:
    kit, voice, provider, driver, observed = build(door, side=side)
    session = await voice.start_session("room-1", participant_id="c1")
    reading = driver.call(session, "AskUserQuestion", {"question": "Still there?"})
    event = await observed.requests.get()
    sent_before = side.delivered(session)
    await voice.end_session(session)
    assert voice.human_input_handler is not None
    handler = voice.human_input_handler.handler
    assert handler.resolve(event.pending_id, "too late") is False
    assert side.delivered(session) == sent_before
    report = await observed.reports.get()
    assert report.outcome == "cancelled"
    assert "session ended" in report.error_detail
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    # The channel asks again in its next session.
    again = await voice.start_session("room-1", participant_id="c2")
    second = driver.call(again, "AskUserQuestion", {"question": "Hello again?"})
    event2 = await observed.requests.get()
    assert event2.actor_id == "c2"
    handler.resolve(event2.pending_id, "yes")
    assert (await second).text == "yes"
    await kit.aclose()


async def test_close_settles_and_refuses_later_creates(door: str, side: ModelSide) -> None:
    kit, voice, provider, driver, observed = build(door, side=side)
    session = await voice.start_session("room-1")
    reading = driver.call(session, "AskUserQuestion", {"question": "?"})
    event = await observed.requests.get()
    await voice.close()
    assert voice.human_input_handler is not None
    handler = voice.human_input_handler.handler
    assert handler.resolve(event.pending_id, "late") is False
    assert (await observed.reports.get()).outcome == "cancelled"
    with pytest.raises(RuntimeError, match="closed for channel 'voice'"):
        await handler.create("AskUserQuestion", {}, channel_id="voice")
    with pytest.raises(ChannelClosedError):
        await voice.start_session("room-2")
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    await voice.close()  # idempotent
    await kit.aclose()


async def test_calls_in_one_session_run_concurrently(door: str) -> None:
    kit, voice, provider, driver, observed = build(door)
    session = await voice.start_session("room-1")
    asking = driver.call(session, "AskUserQuestion", {"question": "?"})
    await observed.requests.get()
    if door == "reasoning":
        # A reasoning backend takes one turn at a time: the host call comes from the
        # provider door while the backend's question is pending.
        other = DoorDriver("provider", provider, None).call(session, "lookup", {"key": "x"})
    else:
        other = driver.call(session, "lookup", {"key": "x"})
    assert (await other).text == "host:lookup"
    assert not asking.done()
    await voice.end_session(session)
    asking.cancel()
    await asyncio.gather(asking, return_exceptions=True)
    await kit.aclose()


async def test_replacing_tool_handler_keeps_human_input_served(door: str) -> None:
    kit, voice, provider, driver, observed = build(door)
    replacement = Host()
    voice.tool_handler = replacement
    session = await voice.start_session("room-1")
    reading = driver.call(session, "AskUserQuestion", {"question": "?"})
    event = await observed.requests.get()
    assert voice.human_input_handler is not None
    voice.human_input_handler.handler.resolve(event.pending_id, "served")
    assert (await reading).text == "served"
    assert replacement.calls == []
    await kit.aclose()


async def test_host_closing_handler_gives_generic_failure(door: str) -> None:
    kit, voice, provider, driver, observed = build(door)
    session = await voice.start_session("room-1")
    reading = driver.call(session, "AskUserQuestion", {"question": "?"})
    await observed.requests.get()
    assert voice.human_input_handler is not None
    await voice.human_input_handler.handler.close()
    read = await reading
    assert read.json() == {"error": "Tool 'AskUserQuestion' failed (RuntimeError)"}
    await kit.aclose()


async def test_barge_in_cancel_withdraws_the_request(side: ModelSide) -> None:
    kit, voice, provider, driver, observed = build("provider", side=side)
    session = await voice.start_session("room-1")
    call_id = await side.tool_call(
        session, "AskUserQuestion", {"question": "?"}, interruptible=True
    )
    event = await observed.requests.get()
    await side.cancel(session, call_id)
    report = await observed.reports.get()
    assert report.outcome == "cancelled" and side.cancel_reason in report.error_detail
    assert voice.human_input_handler is not None
    assert voice.human_input_handler.handler.resolve(event.pending_id, "late") is False
    assert side.delivered(session) == 0
    await kit.aclose()


@pytest.mark.looptime
async def test_close_with_100_pending_is_prompt() -> None:
    """Closing settles the 100 requests without waiting on any timer: measured in the loop's
    virtual time (looptime), which only a sleep or a timeout moves, never the machine's load
    (the CPU cost of closing is in bench/bench_close_stall.py)."""
    kit, voice, provider, driver, observed = build("provider")
    session = await voice.start_session("room-1")
    for i in range(100):
        provider.simulate_tool_call(session, "AskUserQuestion", {"question": f"q{i}"})
    for _ in range(100):
        await observed.requests.get()
    assert voice.human_input_handler is not None
    assert len(voice.human_input_handler.handler.pending) == 100
    loop = asyncio.get_running_loop()
    start = loop.time()
    await voice.close()
    assert loop.time() - start == pytest.approx(0.0, abs=0.01)
    assert voice.human_input_handler.handler.pending == {}
    cancelled = [await observed.reports.get() for _ in range(100)]
    assert {r.outcome for r in cancelled} == {"cancelled"}
    await kit.aclose()


async def test_malformed_arguments_are_reported_to_the_model() -> None:
    kit, voice, provider, driver, observed = build("provider")
    session = await voice.start_session("room-1")
    call_id = provider.simulate_tool_call(session, "AskUserQuestion", '{"question": ')
    record = await provider.wait_for_tool_result(call_id)
    assert record.is_error and "not valid JSON" in json.loads(record.output)["error"]
    call_id = provider.simulate_tool_call(session, "AskUserQuestion", {"question": 5})
    record = await provider.wait_for_tool_result(call_id)
    assert "field 'question'" in json.loads(record.output)["error"]
    call_id = provider.simulate_tool_call(session, "nope", {})
    record = await provider.wait_for_tool_result(call_id)
    assert json.loads(record.output) == {
        "error": "Tool 'nope' is not available in the current turn."
    }
    assert observed.requests.empty()
    await kit.aclose()


async def test_recovered_undeclared_key_is_rejected_by_schema() -> None:
    kit, voice, provider, driver, observed = build("recovered")
    session = await voice.start_session("room-1")
    provider.simulate_transcription(
        session, "call:ConfirmAction{action: pay, quorum: 5, urgent: yes}", role="assistant"
    )
    await provider.wait_for("inject_context")
    (text,) = provider.injected_texts
    assert text.startswith("[Tool ConfirmAction failed]")
    assert "undeclared" in text
    await kit.aclose()


def test_name_collision_is_value_error() -> None:
    with pytest.raises(ValueError, match="reuses a name"):
        RealtimeVoiceChannel(
            "v",
            provider=MockRealtimeProvider(),
            tools=[AITool(name="AskUserQuestion")],
            human_input_handler=human_tools(),
        )


def test_warnings_once_per_name_per_channel(caplog: pytest.LogCaptureFixture) -> None:
    human = HumanInputToolHandler({"AskUserQuestion", "Escalate"}, tool_definitions=[ASK])
    with caplog.at_level(logging.WARNING):
        RealtimeVoiceChannel("v1", provider=MockRealtimeProvider(), human_input_handler=human)
        channel = RealtimeVoiceChannel("v2", provider=MockRealtimeProvider(), tool_handler=human)
        channel.tool_handler = human
    assert caplog.text.count("'Escalate' but never offers it") == 1
    assert caplog.text.count("human_input_handler=") == 1


async def test_session_config_offers_the_human_input_tools() -> None:
    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel(
        "v",
        provider=provider,
        tools=[LOOKUP],
        human_input_handler=human_tools(),
        instructions="be brief",
    )
    VoiceKit().register_channel(voice)  # host tools are served only where a kit's rules reach
    session = await voice.start_session("r")
    config = provider.sessions[0].config
    assert {t.name for t in config.tools} == {"lookup", ASK.name, CONFIRM.name}
    assert config.instructions == "be brief"
    await voice.end_session(session)
    assert provider.sessions[0].closed


async def test_transport_audio_flows_both_ways() -> None:
    import numpy as np

    transport = LocalTransport()
    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel("v", provider=provider, transport=transport)
    session = await voice.start_session("r")
    frame = np.zeros(480, dtype=np.int16)
    transport.push_caller_audio(session.session_id, frame)
    provider.simulate_audio(session, [np.ones(240, dtype=np.int16)])
    transport.hang_up(session.session_id)
    # The pump ends when the caller hangs up; wait for it through the session's own task.
    assert session._audio_pump is not None
    await session._audio_pump
    assert len(provider.sessions[0].audio_in) == 1
    with pytest.raises(ValueError, match="int16"):
        transport.push_caller_audio(session.session_id, np.zeros(4, dtype=np.float32))
    await voice.close()
    assert Door.PROVIDER.value == "provider"
