"""LiveKitRealtimeProvider: a fake LiveKit RealtimeModel driven by a RealtimeVoiceChannel."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("livekit.agents")

import numpy as np
from doors import ASK, LOOKUP, Host, Observed, human_tools
from livekit.agents.types import NOT_GIVEN
from livekit_fakes import (
    FakeRealtimeModel,
    FakeRealtimeSession,
    audio_frame,
    capabilities,
)

import providers.livekit as lk
from providers.base import (
    ProviderErrorEvent,
    ProviderEvent,
    SessionConfig,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallEvent,
    TranscriptionEvent,
)
from voice_hitl import (
    ChannelClosedError,
    ChannelType,
    LocalTransport,
    ProviderError,
    RealtimeVoiceChannel,
    VoiceKit,
    VoiceSession,
)


def build(
    *, timeout: float = 300.0, model: FakeRealtimeModel | None = None, **kw: Any
) -> tuple[VoiceKit, RealtimeVoiceChannel, FakeRealtimeModel, Observed]:
    kit = VoiceKit()
    observed = Observed.on(kit)
    model = model or FakeRealtimeModel()
    voice = RealtimeVoiceChannel(
        "voice",
        provider=lk.LiveKitRealtimeProvider(model),
        tools=[LOOKUP],
        tool_handler=Host(),
        human_input_handler=human_tools(timeout),
        instructions="be brief",
        **kw,
    )
    kit.register_channel(voice)
    return kit, voice, model, observed


def fake_of(model: FakeRealtimeModel) -> FakeRealtimeSession:
    return model.sessions[-1]


def events_of(session: VoiceSession) -> asyncio.Queue[ProviderEvent]:
    queue: asyncio.Queue[ProviderEvent] = asyncio.Queue()
    session.add_listener(queue.put_nowait)
    return queue


async def next_of(queue: asyncio.Queue[ProviderEvent], kind: type[Any]) -> Any:
    while True:
        event = await queue.get()
        if isinstance(event, kind):
            return event


# -- the doors through a channel -----------------------------------------------------------


async def test_provider_call_answered_by_a_person() -> None:
    kit, voice, model, observed = build()
    await voice.start_session("room-1", participant_id="caller-7")
    fake = fake_of(model)
    assert fake.instructions == ["be brief"]
    assert fake.tool_names == ["AskUserQuestion", "ConfirmAction", "lookup"]
    fake.call_tool("AskUserQuestion", {"question": "Which account?"}, "call_1")
    event = await observed.requests.get()
    assert event.channel_type is ChannelType.REALTIME_VOICE
    assert (event.actor_id, event.room_id, event.tool_call_id) == ("caller-7", "room-1", "call_1")
    assert voice.human_input_handler is not None
    assert voice.human_input_handler.handler.resolve(event.pending_id, "savings")
    output = await fake.wait_for_output("call_1")
    assert (output.output, output.is_error, output.name) == ("savings", False, "AskUserQuestion")
    # The model does not reply to tool output by itself: the bridge asks for a reply.
    await fake.wait_until(lambda: fake.count("generate_reply") == 1)
    assert fake.reply_instructions == [NOT_GIVEN]
    report = await observed.reports.get()
    assert report.outcome == "ok" and report.door.value == "provider"
    await kit.aclose()
    assert fake.closed


async def test_no_reply_requested_when_the_model_replies_by_itself() -> None:
    model = FakeRealtimeModel(capabilities(auto_tool_reply_generation=True))
    kit, voice, model, observed = build(model=model)
    session = await voice.start_session("room-1")
    fake = fake_of(model)
    fake.call_tool("lookup", {"key": "k"}, "call_h")
    output = await fake.wait_for_output("call_h")
    assert (output.output, output.is_error) == ("host:lookup", False)
    await session.provider_session.say("one reply")
    await fake.wait_until(lambda: fake.count("generate_reply") == 1)
    # Replies go out in order: had the tool output asked for one, it would be first.
    assert fake.reply_instructions == [lk.SAY_INSTRUCTIONS.format(text="one reply")]
    await kit.aclose()


@pytest.mark.looptime
async def test_timeout_text_reaches_the_model_as_an_error() -> None:
    kit, voice, model, observed = build(timeout=30.0)
    await voice.start_session("room-1")
    fake = fake_of(model)
    fake.call_tool("AskUserQuestion", {"question": "Anyone?"}, "call_t")
    output = await fake.wait_for_output("call_t")
    assert output.is_error
    assert json.loads(output.output) == {
        "error": "Human input timed out after 30s for tool 'AskUserQuestion'"
    }
    await kit.aclose()


async def test_refusal_and_bad_arguments_reach_the_model_as_errors() -> None:
    kit, voice, model, observed = build()
    await voice.start_session("room-1")
    fake = fake_of(model)
    fake.call_tool("ConfirmAction", {"action": "transfer"}, "call_r")
    event = await observed.requests.get()
    assert voice.human_input_handler is not None
    voice.human_input_handler.handler.reject(event.pending_id, "not today")
    output = await fake.wait_for_output("call_r")
    assert output.is_error
    assert json.loads(output.output) == {"error": "Human input rejected: not today"}
    fake.call_tool("AskUserQuestion", '{"question": ', "call_bad")
    output = await fake.wait_for_output("call_bad")
    assert output.is_error and "not valid JSON" in json.loads(output.output)["error"]
    await kit.aclose()


async def test_end_session_settles_and_sends_nothing() -> None:
    kit, voice, model, observed = build()
    session = await voice.start_session("room-1", participant_id="c1")
    fake = fake_of(model)
    fake.call_tool("AskUserQuestion", {"question": "Still there?"}, "call_e")
    event = await observed.requests.get()
    await voice.end_session(session)
    assert voice.human_input_handler is not None
    assert voice.human_input_handler.handler.resolve(event.pending_id, "too late") is False
    report = await observed.reports.get()
    assert report.outcome == "cancelled" and "session ended" in report.error_detail
    assert fake.tool_outputs == [] and fake.closed
    with pytest.raises(ChannelClosedError):
        await session.provider_session.submit_tool_result("call_e", "x", is_error=False)
    await kit.aclose()


async def test_recovered_call_from_the_assistant_transcript() -> None:
    kit, voice, model, observed = build()
    session = await voice.start_session("room-1")
    fake = fake_of(model)
    fake.speak("Let me check. call:AskUserQuestion{question: Which day?}")
    event = await observed.requests.get()
    assert event.arguments == {"question": "Which day?"}
    assert voice.human_input_handler is not None
    voice.human_input_handler.handler.resolve(event.pending_id, "Friday")
    await fake.wait_until(lambda: bool(fake.system_messages))
    assert fake.system_messages == ["[Tool AskUserQuestion completed] Friday"]
    assert session.transcript[-1].text == "Let me check."
    assert fake.count("generate_reply") == 0  # silent context: no reply requested
    await kit.aclose()


async def test_transcriptions_speech_and_audio_reach_the_channel() -> None:
    transport = LocalTransport()
    kit, voice, model, observed = build(transport=transport)
    session = await voice.start_session("room-1")
    fake = fake_of(model)
    events = events_of(session)
    fake.caller_says("hello there")
    assert isinstance(await events.get(), SpeechStartedEvent)
    assert isinstance(await events.get(), SpeechStoppedEvent)
    heard = await events.get()
    assert heard == TranscriptionEvent("user", "hello there", final=True)
    # 20 ms at 48 kHz comes out as 20 ms at the channel's 24 kHz.
    fake.speak("Hi, how can I help?", audio=[audio_frame(960, 48_000, value=300)])
    said = await next_of(events, TranscriptionEvent)
    assert (said.role, said.text, said.final) == ("assistant", "Hi, how can I help?", True)
    assert [e.text for e in session.transcript] == ["hello there", "Hi, how can I help?"]
    played = transport.played(session.session_id)
    assert len(played) == 1 and played[0].shape == (480,) and set(played[0].tolist()) == {300}
    transport.push_caller_audio(session.session_id, np.full(480, 7, dtype=np.int16))
    await fake.wait_until(lambda: bool(fake.audio_in))
    frame = fake.audio_in[0]
    assert (frame.sample_rate, frame.num_channels, frame.samples_per_channel) == (24_000, 1, 480)
    await kit.aclose()


# -- the provider session on its own -----------------------------------------------------


async def connect(model: FakeRealtimeModel | None = None) -> tuple[Any, FakeRealtimeSession]:
    model = model or FakeRealtimeModel()
    provider = lk.LiveKitRealtimeProvider(model)
    session = await provider.connect(SessionConfig(tools=(ASK,)))
    return session, model.sessions[-1]


async def test_interrupt_say_inject_and_duplicate_call_ids() -> None:
    session, fake = await connect()
    await session.interrupt()
    assert fake.calls[-1] == "interrupt"
    await session.inject_context("the caller is a VIP")
    assert fake.system_messages == ["the caller is a VIP"]
    await session.say("Hello")
    await fake.wait_until(lambda: fake.count("generate_reply") == 1)
    assert fake.reply_instructions == [lk.SAY_INSTRUCTIONS.format(text="Hello")]
    fake.call_tool("AskUserQuestion", {"question": "?"}, "dup")
    fake.call_tool("AskUserQuestion", {"question": "?"}, "dup")
    fake.call_tool("AskUserQuestion", {"question": "!"}, "other")
    seen: list[ToolCallEvent] = []
    async for event in session.events():
        if isinstance(event, ToolCallEvent):
            seen.append(event)
            if event.call_id == "other":
                break
    assert [e.call_id for e in seen] == ["dup", "other"]
    await session.aclose()


@pytest.mark.parametrize("emit_replies", [True, False])
async def test_reply_generation_is_read_once(emit_replies: bool) -> None:
    session, fake = await connect(FakeRealtimeModel(emit_replies=emit_replies))
    await session.say("Hello")
    texts: list[str] = []
    async for event in session.events():
        if isinstance(event, TranscriptionEvent):
            texts.append(event.text)
            if event.text == "Thanks, noted.":
                fake.speak("marker")
            if event.text == "marker":
                break
    assert texts == ["Thanks, noted.", "marker"]
    await session.aclose()


async def test_reply_waits_for_the_active_generation() -> None:
    session, fake = await connect()
    generation = fake.open_generation()
    await session.submit_tool_result("call_x", "done", is_error=False)
    assert [o.output for o in fake.tool_outputs] == ["done"]
    assert session.pending_replies == 1 and fake.count("generate_reply") == 0
    generation.finish()
    await fake.wait_until(lambda: fake.count("generate_reply") == 1)
    assert session.pending_replies == 0
    await session.aclose()


async def test_errors_map_and_a_fatal_error_ends_the_events() -> None:
    session, fake = await connect()
    fake.fail("hiccup", recoverable=True)
    fake.fail("gone", recoverable=False)
    received = [event async for event in session.events()]  # ends after the fatal error
    assert all(isinstance(e, ProviderErrorEvent) for e in received)
    codes = [(e.error.code, e.error.recoverable) for e in received]
    assert codes == [("fake_error", True), ("fake_error", False)]
    assert "gone" in str(received[1].error)
    await session.aclose()


async def test_refused_update_is_a_provider_error() -> None:
    session, fake = await connect()
    fake.fail_updates = True
    with pytest.raises(ProviderError, match="refused") as caught:
        await session.submit_tool_result("c", "x", is_error=True)
    assert caught.value.code == "fake_refusal" and caught.value.recoverable
    assert fake.count("generate_reply") == 0
    await session.aclose()


async def test_failed_reply_is_an_error_event_and_later_replies_go_out() -> None:
    session, fake = await connect()
    fake.fail_replies = True
    await session.say("first")
    error = await anext(e async for e in session.events() if isinstance(e, ProviderErrorEvent))
    assert (error.error.code, error.error.recoverable) == ("generate_reply_failed", True)
    assert "timed out" in str(error.error)
    fake.fail_replies = False
    await session.say("second")
    await fake.wait_until(lambda: fake.count("generate_reply") == 2)
    await session.aclose()


async def test_failed_setup_closes_the_session() -> None:
    model = FakeRealtimeModel()
    model.fail_setup = True
    with pytest.raises(ProviderError, match="setup failed"):
        await lk.LiveKitRealtimeProvider(model).connect(SessionConfig(tools=(ASK,)))
    assert model.sessions[0].closed


async def test_aclose_cancels_open_generations_and_is_idempotent() -> None:
    session, fake = await connect()
    fake.open_generation()  # never finished by the "model"
    await session.say("queued behind it")
    assert session.pending_replies == 1
    await session.aclose()
    await session.aclose()
    assert fake.count("aclose") == 1 and fake.count("generate_reply") == 0
    assert [e async for e in session.events()] == []
    for call in (session.interrupt(), session.say("x"), session.inject_context("x")):
        with pytest.raises(ChannelClosedError):
            await call
    with pytest.raises(ChannelClosedError):
        await session.send_audio(np.zeros(4, dtype=np.int16))


async def test_bad_audio_is_a_clear_error() -> None:
    session, fake = await connect()
    with pytest.raises(ValueError, match="mono PCM16"):
        await session.send_audio(np.zeros(4, dtype=np.float32))
    await session.aclose()


def test_capabilities_are_mapped() -> None:
    caps = lk.provider_capabilities(capabilities(audio_output=True, user_transcription=False))
    assert (caps.can_say, caps.user_transcription) == (True, False)
    assert (caps.tool_call_cancellation, caps.speaker_attribution) == (False, False)
    provider = lk.LiveKitRealtimeProvider(FakeRealtimeModel())
    assert provider.capabilities.can_say is False  # the fake speaks text only
    with pytest.raises(TypeError, match="RealtimeModel"):
        lk.LiveKitRealtimeProvider(object())  # type: ignore[arg-type]


def test_frames_convert_channels_and_rates() -> None:
    stereo = np.array([[100, 300], [-100, -300]] * 240, dtype=np.int16).reshape(-1)
    from livekit import rtc

    frame = rtc.AudioFrame(stereo.tobytes(), 24_000, 2, 480)
    mono = lk.frame_to_pcm16(frame, 24_000)
    assert mono.shape == (480,) and mono[:2].tolist() == [200, -200]
    assert lk.frame_to_pcm16(audio_frame(160, 16_000), 24_000).shape == (240,)
    back = lk.pcm16_to_frame(mono, 24_000)
    assert (back.sample_rate, back.samples_per_channel) == (24_000, 480)


def test_exports_show_the_public_module() -> None:
    for name in lk.__all__:
        obj = getattr(lk, name)
        if isinstance(obj, type) or callable(obj):
            assert obj.__module__ == "providers.livekit", name
