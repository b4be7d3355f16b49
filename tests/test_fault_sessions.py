"""Issue 11, items 3 and 11: a provider whose event stream fails ends its session visibly, and
audio of the wrong format is refused where it enters with one ``AudioFormatError``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from doors import LOOKUP, Host, human_tools

from providers.base import ProviderEvent, SessionConfig
from providers.mock import _END, MockProviderSession, MockRealtimeProvider
from voice_hitl import (
    AudioFormatError,
    HookContext,
    HookTrigger,
    LocalTransport,
    PendingInputEvent,
    ProviderError,
    RealtimeVoiceChannel,
    ToolCallReport,
    VoiceKit,
)


class _Raise:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class FailingSession(MockProviderSession):
    """A mock session whose event stream raises what the test queues."""

    def fail(self, exc: BaseException) -> None:
        self._queue.put_nowait(_Raise(exc))  # type: ignore[arg-type]

    async def events(self) -> AsyncIterator[ProviderEvent]:
        while True:
            item = await self._queue.get()
            if isinstance(item, _Raise):
                raise item.exc
            if item is _END:
                return
            yield item


class FailingProvider(MockRealtimeProvider):
    async def connect(self, config: SessionConfig) -> FailingSession:
        session = FailingSession(self, config)
        self.sessions.append(session)
        self._record("connect", session.session_id, None)
        return session


async def _asking_session() -> tuple[Any, ...]:
    kit = VoiceKit()
    reports: asyncio.Queue[ToolCallReport] = asyncio.Queue()
    asked: asyncio.Queue[PendingInputEvent] = asyncio.Queue()

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def record(report: ToolCallReport, ctx: HookContext) -> None:
        reports.put_nowait(report)

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def ask(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.put_nowait(event)

    provider = FailingProvider()
    human = human_tools()
    voice = RealtimeVoiceChannel(
        "voice", provider=provider, tools=[LOOKUP], tool_handler=Host(), human_input_handler=human
    )
    kit.register_channel(voice)
    session = await voice.start_session("room", participant_id="caller")
    provider.simulate_tool_call(session, "AskUserQuestion", {"question": "Which account?"}, "c1")
    request = await asked.get()
    return kit, voice, provider, session, human, request, reports


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (RuntimeError("socket went away"), "RuntimeError: socket went away"),
        (ConnectionResetError("peer reset"), "ConnectionResetError: peer reset"),
        (ProviderError("quota", code="insufficient_quota"), "insufficient_quota: quota"),
        (KeyError("type"), "KeyError: 'type'"),
    ],
)
async def test_a_failing_event_stream_ends_the_session_visibly(
    exc: BaseException, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    kit, voice, provider, session, human, request, reports = await _asking_session()
    with caplog.at_level(logging.ERROR, logger="voice_hitl.driver"):
        provider.sessions[0].fail(exc)
        await session.wait_closed()
    assert session.ended
    assert session not in voice.sessions
    assert session.end_reason is not None and reason in session.end_reason
    assert provider.sessions[0].closed  # the provider session was released too
    report = await reports.get()
    assert report.outcome == "cancelled"
    assert reason in report.error_detail
    assert human.handler.resolve(request.pending_id, "late") is False
    assert provider.tool_results == []  # the model is gone: nothing is sent
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert logged, "the failure was not logged"
    assert type(exc).__name__ != "ProviderError" or "provider failed" in logged[0].message
    if not isinstance(exc, ProviderError):
        assert logged[0].exc_info is not None and logged[0].exc_info[1] is exc
    await kit.aclose()


async def test_a_stream_that_just_ends_ends_the_session() -> None:
    kit, voice, provider, session, human, request, reports = await _asking_session()
    provider.sessions[0]._queue.put_nowait(_END)  # the stream ends, as on a clean hang-up
    await session.wait_closed()
    assert voice.sessions == [] and session.end_reason == "the provider session ended"
    assert (await reports.get()).error_detail == "the provider session ended"
    await kit.aclose()


async def test_the_channel_can_start_a_new_session_after_a_failure() -> None:
    kit, voice, provider, session, human, request, reports = await _asking_session()
    provider.sessions[0].fail(RuntimeError("gone"))
    await session.wait_closed()
    again = await voice.start_session("room")
    call_id = provider.simulate_tool_call(again, "lookup", {"key": "k"})
    assert (await provider.wait_for_tool_result(call_id)).output == "host:lookup"
    await kit.aclose()


# -- item 11: audio of the wrong format ------------------------------------------------------

BAD_FRAMES = {
    "float32": np.zeros(160, dtype=np.float32),
    "float64": np.zeros(160, dtype=np.float64),
    "int32": np.zeros(160, dtype=np.int32),
    "stereo": np.zeros((160, 2), dtype=np.int16),
    "bytes": b"\x00\x00" * 160,
    "list": [0] * 160,
}


@pytest.mark.parametrize("kind", sorted(BAD_FRAMES))
async def test_wrong_audio_is_refused_where_it_enters_and_the_session_goes_on(kind: str) -> None:
    bad = BAD_FRAMES[kind]
    good = np.zeros(160, dtype=np.int16)
    provider = MockRealtimeProvider()
    transport = LocalTransport()
    voice = RealtimeVoiceChannel("voice", provider=provider, transport=transport)
    session = await voice.start_session("room")
    with pytest.raises(AudioFormatError, match="audio frame must"):
        transport.push_caller_audio(session.session_id, bad)  # type: ignore[arg-type]
    with pytest.raises(AudioFormatError, match="audio frame must"):
        await session.provider_session.send_audio(bad)  # type: ignore[arg-type]
    transport.push_caller_audio(session.session_id, good)
    await provider.wait_for("send_audio")
    assert len(provider.sessions[0].audio_in) == 1
    await voice.close()


class SloppyTransport(LocalTransport):
    """A transport that hands the session whatever it was given (no check on the way in)."""

    def push_unchecked(self, session_id: str, frame: Any) -> None:
        self._lane(session_id).inbound.put_nowait(frame)


async def test_a_transport_yielding_bad_frames_does_not_end_the_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = MockRealtimeProvider()
    transport = SloppyTransport()
    voice = RealtimeVoiceChannel("voice", provider=provider, transport=transport)
    session = await voice.start_session("room")
    with caplog.at_level(logging.ERROR, logger="voice_hitl.voice"):
        for frame in (BAD_FRAMES["float32"], BAD_FRAMES["int32"]):
            transport.push_unchecked(session.session_id, frame)
        transport.push_unchecked(session.session_id, np.ones(160, dtype=np.int16))
        await provider.wait_for("send_audio")
    assert [f.dtype for f in provider.sessions[0].audio_in] == [np.int16]
    errors = [r for r in caplog.records if "cannot use" in r.message]
    assert len(errors) == 1 and "float32" in errors[0].message  # said once, naming the dtype
    assert not session.ended
    await voice.close()


class _Silent:
    async def recognize(self, pcm16: Any, sample_rate: int, spec: Any = None) -> list[Any]:
        return []


class _Mute:
    async def synthesize(self, text: str) -> tuple[Any, int]:
        return np.zeros(0, dtype=np.int16), 16_000


async def test_the_local_cascade_refuses_wrong_audio_and_keeps_hearing() -> None:
    from providers.local import LocalCascadeProvider

    provider = LocalCascadeProvider(recognizer=_Silent(), synthesizer=_Mute())  # type: ignore[arg-type]
    session = await provider.connect(SessionConfig())
    try:
        for kind in ("float32", "int32", "stereo"):
            with pytest.raises(AudioFormatError, match="audio frame must"):
                await session.send_audio(BAD_FRAMES[kind])
        await session.send_audio(np.zeros(2400, dtype=np.int16))  # still accepted
    finally:
        await session.aclose()


def test_there_is_one_audio_format_error() -> None:
    from voice_hitl.speech.asr import AudioFormatError as SpeechAudioFormatError

    assert SpeechAudioFormatError is AudioFormatError
    assert issubclass(AudioFormatError, ValueError)


async def test_a_failing_conference_provider_is_unplugged_with_a_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from conference import ConferenceChannel, ConferenceRealtimeConfig, InMemoryConferenceBackend

    kit = VoiceKit()
    reports: asyncio.Queue[ToolCallReport] = asyncio.Queue()
    asked: asyncio.Queue[PendingInputEvent] = asyncio.Queue()

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def record(report: ToolCallReport, ctx: HookContext) -> None:
        reports.put_nowait(report)

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def ask(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.put_nowait(event)

    provider = FailingProvider()
    backend = InMemoryConferenceBackend()
    backend.join("alice", "Alice")
    human = human_tools()
    config = ConferenceRealtimeConfig(provider, human_input_handler=human)
    conf = ConferenceChannel("meeting", backend=backend, realtime=config)
    kit.register_channel(conf)
    await conf.plug_realtime()
    provider.simulate_tool_call(conf, "AskUserQuestion", {"question": "Budget?"}, "c1")
    request = await asked.get()
    with caplog.at_level(logging.ERROR, logger="voice_hitl.driver"):
        provider.sessions[0].fail(RuntimeError("socket went away"))
        report = await reports.get()
        await asyncio.gather(*conf._ending)
    assert report.outcome == "cancelled"
    assert "RuntimeError: socket went away" in report.error_detail
    assert conf.realtime_config is None  # unplugged: nothing pretends to be connected
    assert provider.sessions[0].closed
    assert human.handler.resolve(request.pending_id, "late") is False
    assert any(r.exc_info for r in caplog.records)
    await conf.plug_realtime(config)  # and it can be plugged again
    assert conf.realtime_config is config
    await kit.aclose()
