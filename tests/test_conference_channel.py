"""ConferenceChannel: the door scenarios on the conference door, plug/unplug/close settling,
re-plug re-announcing, audio both ways and who the turn's actor is."""

from __future__ import annotations

import asyncio
import logging

import numpy as np
import pytest
from conference_rig import ASK, CONFIRM, LOOKUP, make_rig
from doors import Host

from conference import (
    ConferenceChannel,
    ConferenceRealtimeConfig,
    InMemoryConferenceBackend,
)
from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ChannelClosedError,
    ChannelType,
    Door,
    HookContext,
    HookResult,
    HookTrigger,
    ToolUseEvent,
)


def loud(n: int = 160, level: int = 4000) -> np.ndarray:
    return np.full(n, level, dtype=np.int16)


async def test_answer_becomes_the_result_on_the_conference_door() -> None:
    rig = await make_rig()
    reading = rig.call("AskUserQuestion", {"question": "Which room?"})
    event = await rig.observed.requests.get()
    assert event.channel_type is ChannelType.CONFERENCE
    assert event.channel_id == "conf" and event.room_id == "conf"
    assert event.actor_id is None  # nobody was heard: no single author
    assert rig.conf.addressed_to(event.pending_id) is None  # anyone may answer
    assert rig.conf.answer(event.pending_id, "bob", '{"room": "blue"}')
    read = await reading
    assert (read.json(), read.is_error) == ({"room": "blue"}, False)
    report = await rig.observed.reports.get()
    assert report.outcome == "ok" and report.door is Door.CONFERENCE
    assert report.channel_type is ChannelType.CONFERENCE
    await rig.kit.aclose()


async def test_session_offers_host_and_human_input_tools() -> None:
    rig = await make_rig()
    config = rig.provider.sessions[0].config
    assert {t.name for t in config.tools} == {LOOKUP.name, ASK.name, CONFIRM.name}
    assert config.instructions == "You are the meeting bot."
    assert {t.name for t in rig.conf.tools} == {LOOKUP.name, ASK.name, CONFIRM.name}
    assert rig.conf.human_input_handler is rig.human
    read = await rig.call("lookup", {"key": "k"})
    assert read.text == "host:lookup"
    await rig.kit.aclose()


async def test_hook_block_is_a_refusal_the_model_reads() -> None:
    rig = await make_rig()

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE, channel_types=[ChannelType.CONFERENCE])
    async def no_confirms(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        assert event.door is Door.CONFERENCE
        return (
            HookResult.block("confirmations are off")
            if event.tool_name == "ConfirmAction"
            else None
        )

    read = await rig.call("ConfirmAction", {"action": "deploy", "approvers": ["alice"]})
    assert read.is_error and read.json() == {"error": "confirmations are off"}
    assert rig.observed.requests.empty()
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_handler_timeout_beats_the_10s_bound() -> None:
    rig = await make_rig(timeout=30.0)
    assert rig.conf.gate is not None and rig.conf.gate.tool_timeout_seconds == 10.0
    loop = asyncio.get_running_loop()
    start = loop.time()
    reading = rig.call("AskUserQuestion", {"question": "Slow?", "ask": "alice"})
    event = await rig.observed.requests.get()
    await asyncio.sleep(12)  # 12 s of virtual time: past the channel's 10 s bound
    assert rig.conf.answer(event.pending_id, "alice", "finally")
    read = await reading
    assert (read.text, read.is_error) == ("finally", False)
    assert loop.time() - start == pytest.approx(12.0, abs=0.05)
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_handler_timeout_text_and_host_bound() -> None:
    rig = await make_rig(timeout=30.0, host=Host(delay=12))
    read = await rig.call("AskUserQuestion", {"question": "Anyone?"})
    assert read.json() == {"error": "Human input timed out after 30s for tool 'AskUserQuestion'"}
    read = await rig.call("lookup", {"key": "k"})
    assert read.json() == {"error": "Tool 'lookup' timed out after 10s"}
    await rig.kit.aclose()


async def test_unplug_settles_in_order_and_replug_reannounces() -> None:
    rig = await make_rig()
    session = rig.provider.sessions[0]
    reading = rig.call("AskUserQuestion", {"question": "Still there?"})
    event = await rig.observed.requests.get()
    assert rig.backend.open_lanes == 1
    sent_before = len(rig.provider.tool_results)
    await rig.conf.unplug_realtime()
    assert not rig.conf.plugged and rig.conf.provider_session is None
    # Order on the provider: interrupt, then disconnect; the call is settled after.
    methods = [m for m, _ in rig.provider.calls if m in ("interrupt", "disconnect")]
    assert methods == ["interrupt", "disconnect"]
    assert session.closed
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled"
    assert report.error_detail == "realtime provider unplugged"
    assert rig.human.handler.resolve(event.pending_id, "too late") is False
    assert len(rig.provider.tool_results) == sent_before  # the provider was sent nothing
    assert rig.backend.open_lanes == 0  # audio lane closed
    assert rig.conf.answer(event.pending_id, "alice", "late") is False
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    await rig.conf.unplug_realtime()  # idempotent
    # Plug in again: the next request is asked and announced as usual.
    await rig.conf.plug_realtime()
    assert rig.backend.open_lanes == 1
    second = rig.call("AskUserQuestion", {"question": "Hello again?", "ask": "carol"})
    event2 = await rig.observed.requests.get()
    assert event2.channel_type is ChannelType.CONFERENCE
    assert rig.conf.answer(event2.pending_id, "carol", "here")
    assert (await second).text == "here"
    assert len(rig.provider.sessions) == 2
    await rig.kit.aclose()


async def test_plugging_again_is_a_no_op_and_another_config_is_refused() -> None:
    rig = await make_rig()
    await rig.conf.plug_realtime(rig.config)
    assert len(rig.provider.sessions) == 1
    other = ConferenceRealtimeConfig(MockRealtimeProvider())
    with pytest.raises(RuntimeError, match="unplug it first"):
        await rig.conf.plug_realtime(other)
    await rig.conf.unplug_realtime()
    await rig.conf.plug_realtime(other)
    assert rig.conf.human_input_handler is None and rig.conf.tools == []
    await rig.kit.aclose()


async def test_close_settles_and_ends_the_channel() -> None:
    rig = await make_rig()
    reading = rig.call("AskUserQuestion", {"question": "?"})
    event = await rig.observed.requests.get()
    await rig.conf.close()
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled" and report.error_detail == "the conference channel closed"
    assert rig.human.handler.resolve(event.pending_id, "late") is False
    with pytest.raises(RuntimeError, match="closed for channel 'conf'"):
        await rig.human.handler.create("AskUserQuestion", {}, channel_id="conf")
    with pytest.raises(ChannelClosedError):
        await rig.conf.plug_realtime()
    with pytest.raises(ChannelClosedError):
        rig.conf.open_approval("x", approvers=["alice"])
    assert rig.provider.sessions[0].closed and rig.backend.open_lanes == 0
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    await rig.conf.close()  # idempotent
    await rig.kit.aclose()


async def test_leave_settles_the_request_addressed_only_to_them() -> None:
    rig = await make_rig()
    reading = rig.call("AskUserQuestion", {"question": "Bob, ship it?", "ask": "Bob"})
    event = await rig.observed.requests.get()
    (bob,) = rig.conf.addressed_to(event.pending_id) or ()
    assert bob.participant_id == "bob"
    rig.backend.leave("bob")
    read = await reading
    assert read.is_error
    assert read.json() == {
        "error": "Human input rejected: Bob (bob), the only person this question was for, "
        "left the conference before answering"
    }
    report = await rig.observed.reports.get()
    assert report.outcome == "refused"
    await rig.kit.aclose()


async def test_audio_flows_mixed_in_and_bot_out_to_everyone() -> None:
    rig = await make_rig()
    session = rig.provider.sessions[0]
    rig.backend.push_audio("alice", loud(160, 1000))
    rig.backend.push_audio("bob", loud(160, 2000))
    rig.backend.tick()
    await rig.provider.wait_for("send_audio")
    (sent,) = session.audio_in
    assert sent.dtype == np.int16 and np.all(sent == 3000)
    bot = np.arange(80, dtype=np.int16)
    rig.provider.simulate_audio(rig.conf, [bot])
    rig.provider.simulate_speech(rig.conf, started=True)  # barge-in reaches the lane
    # Events are read in order: once a later call is answered, the audio was played.
    assert (await rig.call("lookup", {})).text == "host:lookup"
    plug = rig.conf._plug
    assert plug is not None and getattr(plug.lane, "barge_ins", None) == 1
    for participant in ("alice", "bob", "carol"):
        (heard,) = rig.backend.heard(participant)
        assert np.array_equal(heard, bot)
    await rig.kit.aclose()


async def test_actor_is_none_for_mixed_audio_and_the_speaker_when_attributed() -> None:
    rig = await make_rig()
    # Two people talk over each other: the turn has no single author.
    rig.backend.push_audio("alice", loud())
    rig.backend.push_audio("bob", loud())
    rig.backend.tick()
    await rig.provider.wait_for("send_audio", 1)
    reading = rig.call("AskUserQuestion", {"question": "Who?"})
    assert (await rig.observed.requests.get()).actor_id is None
    rig.provider.simulate_transcription(rig.conf, "Let me ask.", role="assistant")
    # Next turn: only carol speaks (the backend attributes by level).
    rig.backend.push_audio("carol", loud())
    rig.backend.tick()
    await rig.provider.wait_for("send_audio", 2)
    second = rig.call("AskUserQuestion", {"question": "Carol?"})
    assert (await rig.observed.requests.get()).actor_id == "carol"
    rig.provider.simulate_transcription(rig.conf, "Noted.", role="assistant")
    # Next turn: the provider attributes a transcription to bob.
    rig.provider.simulate_transcription(rig.conf, "book it", role="user", speaker_id="bob")
    third = rig.call("AskUserQuestion", {"question": "Bob?"})
    assert (await rig.observed.requests.get()).actor_id == "bob"
    await rig.conf.close()
    for task in (reading, second, third):
        task.cancel()
    await asyncio.gather(reading, second, third, return_exceptions=True)
    await rig.kit.aclose()


async def test_unknown_speaker_makes_the_turn_unattributed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rig = await make_rig()
    with caplog.at_level(logging.WARNING):
        rig.provider.simulate_transcription(rig.conf, "hi", role="user", speaker_id="zed")
        reading = rig.call("AskUserQuestion", {"question": "?"})
        assert (await rig.observed.requests.get()).actor_id is None
    assert "'zed' is not on the roster" in caplog.text
    await rig.conf.close()
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    await rig.kit.aclose()


async def test_plug_without_config_and_context_manager() -> None:
    backend = InMemoryConferenceBackend()
    bare = ConferenceChannel("c0", backend=backend)
    with pytest.raises(ValueError, match="no realtime config"):
        await bare.plug_realtime()
    await bare.unplug_realtime()  # never plugged: nothing to do
    await bare.close()
    provider = MockRealtimeProvider()
    config = ConferenceRealtimeConfig(provider, tools=(LOOKUP,))
    async with ConferenceChannel("c1", backend=backend, realtime=config) as conf:
        assert conf.plugged and conf.channel_type is ChannelType.CONFERENCE
    assert conf.closed and provider.sessions[0].closed
    with pytest.raises(ValueError, match="tool_timeout_seconds"):
        ConferenceRealtimeConfig(provider, tool_timeout_seconds=0)
