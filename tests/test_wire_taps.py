"""Wire taps, connect hooks and session hooks: the public ways a call recorder sees a session,
with no attribute of the provider or its session overwritten."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from providers.base import (
    ProviderSession,
    RealtimeProvider,
    SessionConfig,
    ToolCallEvent,
    WireFrame,
)
from providers.gemini_live import GeminiLiveProvider
from providers.gemini_live import ReconnectPolicy as LiveReconnect
from providers.gemini_live_testing import LiveTestServer
from providers.mock import MockRealtimeProvider
from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy
from providers.openai_realtime_testing import RealtimeTestServer
from voice_hitl import ConnectHooks, RealtimeVoiceChannel
from voice_hitl.recording import CallRecorder

FAST = ReconnectPolicy(max_attempts=1, initial_delay=0.0, max_delay=0.0)


async def _tool_call(session: ProviderSession) -> ToolCallEvent:
    async with aclosing(session.events()) as events:
        async for event in events:
            if isinstance(event, ToolCallEvent):
                return event
    raise AssertionError("the session ended before the tool call")


@asynccontextmanager
async def _served(
    kind: str,
) -> AsyncIterator[tuple[Any, OpenAIRealtimeProvider | GeminiLiveProvider]]:
    """A started test server of ``kind`` and a provider that dials it."""
    if kind == "openai":
        async with RealtimeTestServer() as server:
            yield server, OpenAIRealtimeProvider(api_key="sk", url=server.url, reconnect=FAST)
        return
    reconnect = LiveReconnect(max_attempts=1, initial_delay=0.0, max_delay=0.0)
    async with LiveTestServer(auto_respond=True) as live:
        yield live, GeminiLiveProvider(api_key="g", url=live.url, reconnect=reconnect)


@pytest.mark.parametrize("kind", ["openai", "gemini"])
async def test_a_wire_tap_sees_every_frame_both_ways_until_removed(kind: str) -> None:
    frames: list[WireFrame] = []
    async with _served(kind) as (server, provider):
        assert not provider.wire_taps
        remove = provider.wire_taps.add(frames.append)
        assert len(provider.wire_taps) == 1
        session = await provider.connect(SessionConfig(session_id="s1"))
        try:
            conn = await server.next_connection()
            await conn.function_call("lookup", {"q": 1})
            assert (await _tool_call(session)).name == "lookup"
            outs = [f for f in frames if f.direction == "out"]
            ins = [f for f in frames if f.direction == "in"]
            first_out = json.loads(outs[0].data)
            assert ("session" in first_out["type"]) if kind == "openai" else ("setup" in first_out)
            assert any("lookup" in str(f.data) for f in ins)
            assert {(f.session_id, f.connection) for f in frames} == {("s1", 1)}
            assert [f.at for f in frames] == sorted(f.at for f in frames)

            remove()
            remove()  # idempotent
            assert not provider.wire_taps
            seen = len(frames)
            await conn.function_call("lookup", {"q": 2})
            assert json.loads((await _tool_call(session)).arguments) == {"q": 2}
            assert len(frames) == seen
        finally:
            await session.aclose()


async def test_a_failing_tap_is_logged_and_the_frame_still_flows(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(frame: WireFrame) -> None:
        raise RuntimeError("tap bug")

    async with _served("openai") as (server, provider):
        provider.wire_taps.add(broken)
        session = await provider.connect(SessionConfig(session_id="s2"))
        try:
            conn = await server.next_connection()
            await conn.expect("session.update")
        finally:
            await session.aclose()
    assert "wire tap" in caplog.text and "tap bug" in caplog.text


async def test_connect_hooks_nest_in_order_and_are_removable() -> None:
    provider = MockRealtimeProvider()
    seen: list[str] = []

    def hook(name: str) -> Any:
        async def around(
            p: RealtimeProvider, config: SessionConfig, connect: Any
        ) -> ProviderSession:
            assert p is provider
            seen.append(f"{name}>")
            session: ProviderSession = await connect(config)
            seen.append(f"<{name}")
            return session

        return around

    hooks = ConnectHooks()
    hooks.add(hook("a"))
    remove_b = hooks.add(hook("b"))
    session = await hooks.connect(provider, SessionConfig(session_id="m"))
    await session.aclose()
    assert seen == ["a>", "b>", "<b", "<a"]
    remove_b()
    remove_b()
    seen.clear()
    session = await hooks.connect(provider, SessionConfig(session_id="n"))
    await session.aclose()
    assert seen == ["a>", "<a"]


def _attributes(obj: object) -> dict[str, int]:
    return {name: id(value) for name, value in vars(obj).items()}


@pytest.mark.parametrize("kind", ["openai", "mock"])
async def test_the_recorder_sets_no_attribute_on_the_provider(kind: str, tmp_path: Path) -> None:
    recorder = CallRecorder(tmp_path)
    async with _served("openai") as (server, provider):
        provider_: RealtimeProvider = provider
        if kind == "mock":
            provider_ = MockRealtimeProvider()
            assert provider_.wire_taps is None  # no wire: nothing to tap
        before = _attributes(provider_)
        channel = RealtimeVoiceChannel("desk", provider=provider_)
        detach = recorder.attach(channel)
        with pytest.raises(ValueError, match="already recorded"):
            recorder.attach(channel)
        assert _attributes(provider_) == before
        if isinstance(provider_, OpenAIRealtimeProvider):
            assert len(provider_.wire_taps) == 1
        session = await channel.start_session("room", session_id="rec-1")
        if kind == "openai":
            await (await server.next_connection()).expect("session.update")
        await channel.end_session(session)
        detach()
        await channel.close()
    await recorder.aclose()
    assert _attributes(provider_) == before
    if isinstance(provider_, OpenAIRealtimeProvider):
        assert not provider_.wire_taps
    (folder,) = recorder.folders
    wire = folder / "wire.jsonl"
    lines = [json.loads(line) for line in wire.read_text().splitlines()] if wire.exists() else []
    if kind == "openai":
        assert "session.update" in json.dumps(lines)
    else:
        assert lines == []


async def test_session_hooks_see_the_sent_audio_and_the_end_and_remove() -> None:
    import numpy as np

    from voice_hitl import LocalTransport

    transport = LocalTransport()
    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel("v", provider=provider, transport=transport)
    sent: list[tuple[str, int]] = []
    ended: list[str] = []

    async def end(session_id: str) -> None:
        ended.append(session_id)
        assert provider.sessions[0].closed  # the session is closed before its end hooks

    def broken(session_id: str, frame: Any) -> None:
        raise RuntimeError("tap bug")

    voice.add_sent_audio_tap(broken)
    remove_sent = voice.add_sent_audio_tap(lambda s, f: sent.append((s, len(f))))
    voice.add_session_end_hook(end)
    session = await voice.start_session("r", session_id="h1")
    transport.push_caller_audio("h1", np.zeros(480, dtype=np.int16))
    transport.hang_up("h1")
    assert session._audio_pump is not None
    await session._audio_pump
    assert sent == [("h1", 480)]
    assert len(provider.sessions[0].audio_in) == 1  # the failing tap did not stop the frame
    assert ended == []
    await voice.end_session(session)
    assert ended == ["h1"]
    remove_sent()
    remove_sent()  # idempotent
    await voice.close()


@pytest.mark.parametrize("detach_first", [False, True])
async def test_the_recorder_sets_nothing_on_the_session_and_finishes_a_detached_call(
    detach_first: bool, tmp_path: Path
) -> None:
    import numpy as np

    from voice_hitl import LocalTransport

    recorder = CallRecorder(tmp_path)
    transport = LocalTransport()
    voice = RealtimeVoiceChannel("v", provider=MockRealtimeProvider(), transport=transport)
    detach = recorder.attach(voice)
    session = await voice.start_session("r", session_id="rec-2")
    provider_session = session.provider_session
    transport.push_caller_audio("rec-2", np.zeros(480, dtype=np.int16))
    transport.hang_up("rec-2")
    assert session._audio_pump is not None
    await session._audio_pump
    if detach_first:  # a call under way when the recorder is detached is recorded to its end
        detach()
    await voice.end_session(session)
    assert {"send_audio", "aclose"}.isdisjoint(vars(provider_session))  # no method replaced
    (call,) = recorder.recordings
    assert call.finished
    manifest = json.loads((call.folder / "manifest.json").read_text())
    assert manifest["complete"] and manifest["stats"]["caller_samples"] == 480
    await voice.close()
    await recorder.aclose()


async def test_a_conference_call_is_recorded_through_its_session_hooks(tmp_path: Path) -> None:
    import asyncio

    import numpy as np

    from conference import ConferenceChannel, ConferenceRealtimeConfig, InMemoryConferenceBackend

    backend = InMemoryConferenceBackend(frame_samples=480)
    backend.join("alice")
    meeting = ConferenceChannel(
        "meet", backend=backend, realtime=ConferenceRealtimeConfig(MockRealtimeProvider())
    )
    recorder = CallRecorder(tmp_path)
    recorder.attach(meeting)
    sent = asyncio.Event()
    meeting.add_sent_audio_tap(lambda session_id, frame: sent.set())
    await meeting.plug_realtime()
    provider_session = meeting.provider_session
    backend.push_audio("alice", np.zeros(480, dtype=np.int16))
    backend.tick()
    await sent.wait()
    await meeting.unplug_realtime()
    assert provider_session is not None
    assert {"send_audio", "aclose"}.isdisjoint(vars(provider_session))
    (call,) = recorder.recordings
    assert call.finished
    manifest = json.loads((call.folder / "manifest.json").read_text())
    assert manifest["complete"] and manifest["stats"]["caller_samples"] == 480
    await meeting.close()
    await recorder.aclose()
