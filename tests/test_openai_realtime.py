"""OpenAIRealtimeProvider driven by RealtimeVoiceChannel against the loopback test server.

Covers the doors that apply to a real provider (its own function calls; calls recovered from
the assistant transcript), malformed server JSON, unknown events, errors, a result submitted
after the connection dropped, and reconnects.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from doors import ASK, LOOKUP, Observed, human_tools

from providers.base import (
    AudioOutEvent,
    KeypadEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SessionConfig,
    TranscriptionEvent,
)
from providers.openai_realtime import (
    OpenAIRealtimeProvider,
    OpenAIRealtimeSession,
    ReconnectPolicy,
)
from providers.openai_realtime_testing import (
    Drop,
    ExpectOutput,
    FunctionCall,
    Keypad,
    RealtimeTestServer,
    SendError,
    ServerConnection,
    Speak,
    UserSays,
    play,
)
from voice_hitl import (
    ChannelClosedError,
    HookContext,
    HookResult,
    HookTrigger,
    ProviderError,
    RealtimeVoiceChannel,
    ToolUseEvent,
    VoiceKit,
    VoiceSession,
)

FAST = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0, open_timeout=5.0)


async def host(name: str, arguments: dict[str, Any]) -> str:
    return f"host:{name}"


@pytest.fixture
async def server() -> AsyncIterator[RealtimeTestServer]:
    async with RealtimeTestServer(api_key="sk-test") as srv:
        yield srv
    assert srv.invalid == [], "the provider sent events the server rejected"


class Rig:
    def __init__(self, server: RealtimeTestServer, **provider_kw: Any) -> None:
        self.server = server
        self.kit = VoiceKit()
        self.observed = Observed.on(self.kit)
        provider_kw.setdefault("api_key", "sk-test")
        provider_kw.setdefault("reconnect", FAST)
        provider_kw.setdefault("url", server.url)
        self.provider = OpenAIRealtimeProvider(**provider_kw)
        self.voice = RealtimeVoiceChannel(
            "voice",
            provider=self.provider,
            tools=[LOOKUP],
            tool_handler=host,
            human_input_handler=human_tools(),
            instructions="Be brief.",
        )
        self.kit.register_channel(self.voice)
        self.events: asyncio.Queue[ProviderEvent] = asyncio.Queue()

    async def start(self) -> tuple[VoiceSession, ServerConnection]:
        session = await self.voice.start_session("room-1", participant_id="caller-7")
        session.add_listener(self.events.put_nowait)
        conn = await self.server.next_connection()
        await conn.expect("session.update")
        return session, conn

    async def next_event(self, kind: type[Any]) -> Any:
        while True:
            event = await self.events.get()
            if isinstance(event, kind):
                return event

    def resolve(self, pending_id: str, answer: str) -> bool:
        assert self.voice.human_input_handler is not None
        return self.voice.human_input_handler.handler.resolve(pending_id, answer)


async def test_handshake_url_headers_and_session_config(server: RealtimeTestServer) -> None:
    rig = Rig(server, model="gpt-realtime-mini", extra_headers={"X-Trace": "t1"})
    session, conn = await rig.start()
    assert conn.path == "/v1/realtime?model=gpt-realtime-mini"
    assert conn.headers["Authorization"] == "Bearer sk-test"
    assert conn.headers["X-Trace"] == "t1"
    assert "OpenAI-Beta" not in conn.headers
    tools = {t["name"] for t in conn.session["tools"]}
    assert tools == {"lookup", "AskUserQuestion", "ConfirmAction"}
    assert conn.session["instructions"] == "Be brief."
    await rig.kit.aclose()


async def test_azure_style_api_key_header(server: RealtimeTestServer) -> None:
    azure = f"{server.url}?deployment=my-dep"
    rig = Rig(server, api_key=None, url=azure, extra_headers={"api-key": "sk-test"})
    session, conn = await rig.start()
    assert conn.path == "/v1/realtime?deployment=my-dep"
    assert "Authorization" not in conn.headers
    await rig.kit.aclose()


async def test_bad_key_is_a_provider_error(server: RealtimeTestServer) -> None:
    provider = OpenAIRealtimeProvider(api_key="wrong", url=server.url)
    with pytest.raises(ProviderError, match="HTTP 401") as info:
        await provider.connect(SessionConfig())
    assert info.value.code == "unauthorized" and not info.value.recoverable
    assert server.rejected_handshakes == 1


async def test_provider_door_answer_reaches_the_server(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "Which account?"})
    event = await rig.observed.requests.get()
    assert (event.actor_id, event.arguments) == ("caller-7", {"question": "Which account?"})
    assert rig.resolve(event.pending_id, '{"answer": "savings"}')
    assert await conn.expect_function_call_output(call_id) == '{"answer": "savings"}'
    await conn.expect("response.create")
    report = await rig.observed.reports.get()
    assert (report.outcome, report.door.value) == ("ok", "provider")
    await rig.kit.aclose()


async def test_provider_door_refusal_is_error_text(server: RealtimeTestServer) -> None:
    rig = Rig(server)

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def block(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        return HookResult.block("confirmations are disabled")

    session, conn = await rig.start()
    (call_id, output) = await play(
        conn, [FunctionCall("ConfirmAction", {"action": "x"}), ExpectOutput()]
    )
    assert json.loads(output) == {"error": "confirmations are disabled"}
    assert rig.observed.requests.empty()
    await rig.kit.aclose()


async def test_host_tool_and_question_run_concurrently(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    asked = await conn.function_call("AskUserQuestion", {"question": "?"})
    await rig.observed.requests.get()
    looked = await conn.function_call("lookup", {"key": "k"})
    assert await conn.expect_function_call_output(looked) == "host:lookup"
    report = await rig.observed.reports.get()  # once the server took the output
    assert report.tool_call_id == looked and report.delivered and report.delivery == ""
    assert asked in session.open_calls  # the question still waits while the host tool is done
    await rig.voice.end_session(session)
    assert conn.count("conversation.item.create") == 1  # nothing sent for the withdrawn call
    await rig.kit.aclose()


async def test_recovered_door_from_the_assistant_transcript(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.speak("Let me check with you. call:AskUserQuestion{question: Which account?}")
    event = await rig.observed.requests.get()
    assert event.arguments == {"question": "Which account?"}
    assert rig.resolve(event.pending_id, "savings")
    context = await conn.expect("conversation.item.create")
    assert context["item"]["role"] == "system"
    assert context["item"]["content"][0]["text"] == "[Tool AskUserQuestion completed] savings"
    assert session.transcript[-1].text == "Let me check with you."
    report = await rig.observed.reports.get()
    assert report.door.value == "recovered"
    assert conn.count("response.create") == 0  # silent context: no reply is triggered
    await rig.kit.aclose()


async def test_barge_in_withdraws_the_request(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "?"}, finish=False)
    event = await rig.observed.requests.get()
    await conn.end_response(status="cancelled", reason="turn_detected", incomplete=[call_id])
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled" and "turn_detected" in report.error_detail
    assert rig.resolve(event.pending_id, "late") is False
    await rig.kit.aclose()


async def test_active_response_error_keeps_the_result(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("lookup", {"key": "k"}, finish=False)
    await conn.end_response()
    await conn.begin_response(announce=False)  # server VAD started a response we don't know
    assert await conn.expect_function_call_output(call_id) == "host:lookup"
    rejected = await conn.expect("response.create")
    await conn.end_response()  # response.created + response.done of the VAD response
    retried = await conn.expect("response.create")
    assert retried["event_id"] != rejected["event_id"]
    assert conn.count("conversation.item.create") == 1  # the output itself is not resent
    seen = [rig.events.get_nowait() for _ in range(rig.events.qsize())]
    assert not any(isinstance(e, ProviderErrorEvent) for e in seen)
    await rig.kit.aclose()


async def test_malformed_json_unknown_events_and_errors(
    server: RealtimeTestServer, caplog: pytest.LogCaptureFixture
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    with caplog.at_level(logging.DEBUG, logger="voice_hitl.providers.openai"):
        await conn.send_raw('{"type": "response.done", "response": ')
        error = await rig.next_event(ProviderErrorEvent)
        assert error.error.code == "malformed_server_event" and error.error.recoverable
        await conn.send({"type": "response.brand_new_thing", "x": 1}, check=False)
        await conn.error("Rate limit reached", code="rate_limit_exceeded")
        error = await rig.next_event(ProviderErrorEvent)
        assert error.error.code == "rate_limit_exceeded"
    assert "unknown server event 'response.brand_new_thing' ignored" in caplog.text
    # The session goes on: the next call is served.
    (call_id, output) = await play(conn, [FunctionCall("lookup", {"key": "k"}), ExpectOutput()])
    assert output == "host:lookup"
    await rig.kit.aclose()


async def test_audio_both_ways_and_say_interrupt(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    provider_session = session.provider_session
    await provider_session.send_audio(np.zeros(480, dtype=np.int16))
    append = await conn.expect("input_audio_buffer.append")
    assert len(append["audio"]) == 1280  # 960 bytes of PCM16 at 24 kHz, base64
    await provider_session.say("One moment.")
    say = await conn.expect("response.create")
    assert say["response"]["instructions"].endswith("One moment.")
    await conn.begin_response()
    await conn.speak("Hello there.", finish=False)
    audio = await rig.next_event(AudioOutEvent)
    assert audio.frame.size == 480
    spoken = await rig.next_event(TranscriptionEvent)
    while not spoken.final:
        spoken = await rig.next_event(TranscriptionEvent)
    assert (spoken.role, spoken.text) == ("assistant", "Hello there.")
    await provider_session.interrupt()
    await conn.expect("response.cancel")
    assert conn.active_response is None
    await rig.kit.aclose()


async def test_result_after_the_connection_dropped(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "?"})
    event = await rig.observed.requests.get()
    await conn.drop()
    again = await server.next_connection()
    await again.expect("session.update")  # the session config is sent again
    assert session.open_calls == [call_id]  # the question is still open after the drop
    assert rig.resolve(event.pending_id, "savings")
    report = await rig.observed.reports.get()
    assert report.delivery == "delivered as context after reconnect"
    context = await again.expect("conversation.item.create")
    assert f"(call {call_id})" in context["item"]["content"][0]["text"]
    assert again.orphan_outputs == []  # never a function_call_output the server cannot know
    provider_session = session.provider_session
    with pytest.raises(ProviderError, match="already answered") as info:
        await provider_session.submit_tool_result(call_id, "twice", is_error=False)
    assert info.value.code == "unknown_call"
    # The reconnected session serves new calls.
    (_, output) = await play(again, [FunctionCall("lookup", {"key": "k"}), ExpectOutput()])
    assert output == "host:lookup"
    assert isinstance(provider_session, OpenAIRealtimeSession)
    assert provider_session.connections == 2
    await rig.kit.aclose()


async def test_gives_up_after_max_attempts_and_settles(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.function_call("AskUserQuestion", {"question": "?"})
    await rig.observed.requests.get()
    server.api_key = "rotated"  # every reconnect is now refused
    await conn.drop()
    final = await rig.next_event(ProviderErrorEvent)
    while final.error.recoverable:
        final = await rig.next_event(ProviderErrorEvent)
    assert final.error.code == "connection_failed" and "401" in str(final.error)
    assert (await rig.observed.reports.get()).outcome == "cancelled"
    await rig.kit.aclose()


async def test_script_and_closed_session(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    script = [
        FunctionCall("lookup", {"key": "a"}),
        ExpectOutput(),
        Speak("All done."),
        UserSays("thanks"),
        Keypad("5"),
        SendError("boom", code="server_error"),
        Drop(),
    ]
    results = await play(conn, script)
    assert results[1] == "host:lookup"
    heard = await rig.next_event(TranscriptionEvent)
    while heard.role != "user" or not heard.final:
        heard = await rig.next_event(TranscriptionEvent)
    assert heard.text == "thanks"
    assert (await rig.next_event(KeypadEvent)).key == "5"
    assert (await rig.next_event(ProviderErrorEvent)).error.code == "server_error"
    await server.next_connection()
    provider_session = session.provider_session
    await rig.kit.aclose()
    await provider_session.aclose()  # idempotent
    with pytest.raises(ChannelClosedError):
        await provider_session.say("hello")
    assert [e async for e in provider_session.events()] == []


async def test_server_rejects_invalid_client_events() -> None:
    from websockets.asyncio.client import connect

    async with RealtimeTestServer() as server:
        async with connect(server.url) as ws:
            json.loads(await ws.recv())  # session.created
            bad = {"type": "session.update", "event_id": "e1", "session": {"type": "realtime"}}
            bad["session"]["modalities"] = ["audio"]  # a beta field
            await ws.send(json.dumps(bad))
            reply = json.loads(await ws.recv())
        assert reply["type"] == "error"
        assert reply["error"]["code"] == "unknown_parameter"
        assert reply["error"]["event_id"] == "e1"
        (invalid,) = server.invalid
        assert "session.modalities" in invalid.message
    assert ASK.name == "AskUserQuestion"
