"""Nothing lost at a connection drop: the provider connection is dropped at every message
boundary of a tool-call round trip, and each time the request settles exactly once, the model
is told (on the new connection when the old one is gone), and the ``ON_TOOL_CALL`` report says
what the model actually read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from doors import LOOKUP, Observed, human_tools

from providers.base import ProviderErrorEvent
from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy
from providers.openai_realtime_testing import RealtimeTestServer, ServerConnection
from voice_hitl import RealtimeVoiceChannel, RequestEvent, VoiceKit, VoiceSession

FAST = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0, open_timeout=5.0)
AFTER_RECONNECT = "delivered as context after reconnect"


class SlowHost:
    """A host tool that finishes when the test says so."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.finish = asyncio.Event()

    async def __call__(self, name: str, arguments: dict[str, Any]) -> str:
        self.started.set()
        await self.finish.wait()
        return f"host:{name}"


class Rig:
    def __init__(self, server: RealtimeTestServer) -> None:
        self.server = server
        self.kit = VoiceKit()
        self.observed = Observed.on(self.kit)
        self.host = SlowHost()
        self.human = human_tools()
        self.story: list[RequestEvent] = []
        self.human.handler.add_observer(self.story.append)
        provider = OpenAIRealtimeProvider(api_key="sk-test", url=server.url, reconnect=FAST)
        self.voice = RealtimeVoiceChannel(
            "voice",
            provider=provider,
            tools=[LOOKUP],
            tool_handler=self.host,
            human_input_handler=self.human,
        )
        self.kit.register_channel(self.voice)

    async def start(self) -> tuple[VoiceSession, ServerConnection]:
        session = await self.voice.start_session("room-1", participant_id="caller-7")
        conn = await self.server.next_connection()
        await conn.expect("session.update")
        return session, conn

    async def reconnected(self) -> ServerConnection:
        again = await self.server.next_connection()
        await again.expect("session.update")
        return again

    def settles(self, pending_id: str) -> int:
        return sum(1 for e in self.story if e.type == "settled" and e.pending_id == pending_id)


@pytest.fixture
async def server() -> AsyncIterator[RealtimeTestServer]:
    async with RealtimeTestServer(api_key="sk-test") as srv:
        yield srv
    assert srv.invalid == [], "the provider sent events the server rejected"


def context_for(conn: ServerConnection, call_id: str) -> list[str]:
    texts = []
    for event in conn.received:
        item = event.get("item") or {}
        if event["type"] == "conversation.item.create" and item.get("type") == "message":
            text = item["content"][0]["text"]
            if f"(call {call_id})" in text:
                texts.append(text)
    return texts


async def test_drop_before_the_call_arrives(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.drop()
    again = await rig.reconnected()
    call_id = await again.function_call("AskUserQuestion", {"question": "Colour?"})
    request = await rig.observed.requests.get()
    assert rig.human.handler.resolve(request.pending_id, "red")
    assert await again.expect_function_call_output(call_id) == "red"
    report = await rig.observed.reports.get()
    assert (report.outcome, report.delivered, report.delivery) == ("ok", True, "")
    assert rig.settles(request.pending_id) == 1
    await rig.kit.aclose()


@pytest.mark.parametrize("tool", ["AskUserQuestion", "lookup"])
async def test_drop_while_the_person_or_host_is_answering(
    server: RealtimeTestServer, tool: str
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    arguments = {"question": "Colour?"} if tool == "AskUserQuestion" else {"key": "k"}
    call_id = await conn.function_call(tool, arguments)
    if tool == "AskUserQuestion":
        request = await rig.observed.requests.get()
    else:
        await rig.host.started.wait()
    await conn.drop()
    again = await rig.reconnected()
    assert session.open_calls == [call_id]  # still answerable: nothing was withdrawn
    if tool == "AskUserQuestion":
        assert rig.human.handler.resolve(request.pending_id, '{"answer": "red"}')
        expected = '{"answer": "red"}'
    else:
        rig.host.finish.set()
        expected = "host:lookup"
    report = await rig.observed.reports.get()
    (text,) = context_for(again, call_id)  # the model reads the call and its answer
    assert text.endswith(expected) and tool in text
    assert again.count("response.create") >= 1  # and is asked to go on
    assert conn.count("conversation.item.create") == 0  # nothing went to the dead connection
    assert (report.outcome, report.result, report.delivered) == ("ok", expected, True)
    assert report.delivery == AFTER_RECONNECT
    if tool == "AskUserQuestion":
        assert rig.settles(request.pending_id) == 1
        delivered = [e for e in rig.story if e.type == "delivered"]
        assert len(delivered) == 1 and delivered[0].detail == AFTER_RECONNECT
    await rig.kit.aclose()


async def test_drop_while_the_result_is_in_flight(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "Colour?"})
    request = await rig.observed.requests.get()
    server.acknowledge_items = False  # the server receives the result but never takes it
    assert rig.human.handler.resolve(request.pending_id, "red")
    assert await conn.expect_function_call_output(call_id) == "red"
    server.acknowledge_items = True
    await conn.drop()
    again = await rig.reconnected()
    report = await rig.observed.reports.get()
    (text,) = context_for(again, call_id)
    assert text.endswith("red")
    assert (report.outcome, report.delivered, report.delivery) == ("ok", True, AFTER_RECONNECT)
    assert rig.settles(request.pending_id) == 1
    await rig.kit.aclose()


async def test_drop_after_the_result_was_taken(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "Colour?"})
    request = await rig.observed.requests.get()
    assert rig.human.handler.resolve(request.pending_id, "red")
    report = await rig.observed.reports.get()  # reported once the server took it
    assert (report.outcome, report.delivered, report.delivery) == ("ok", True, "")
    await conn.drop()
    again = await rig.reconnected()
    assert context_for(again, call_id) == []  # nothing sent twice
    assert rig.settles(request.pending_id) == 1
    await rig.kit.aclose()


async def test_gave_up_reconnecting_while_the_person_answers(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.function_call("AskUserQuestion", {"question": "Colour?"})
    request = await rig.observed.requests.get()
    server.api_key = "rotated"  # every reconnect is refused
    await conn.drop()
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled" and "gave up reconnecting" in report.error_detail
    assert rig.human.handler.resolve(request.pending_id, "late") is False  # not taken
    assert rig.settles(request.pending_id) == 1
    await rig.kit.aclose()


@pytest.mark.parametrize(
    "error",
    [
        {"type": "invalid_request_error", "code": "invalid_api_key", "message": "bad key"},
        {"type": "insufficient_quota", "code": "insufficient_quota", "message": "no quota"},
    ],
)
async def test_a_fatal_error_ends_the_session_and_settles(
    server: RealtimeTestServer, error: dict[str, str]
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.function_call("AskUserQuestion", {"question": "Colour?"})
    request = await rig.observed.requests.get()
    errors: list[ProviderErrorEvent] = []
    session.add_listener(lambda e: errors.append(e) if isinstance(e, ProviderErrorEvent) else None)
    await conn.error(error["message"], code=error["code"], type=error["type"])
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled"
    assert error["code"] in report.error_detail and error["message"] in report.error_detail
    assert [e.error.recoverable for e in errors] == [False]
    await session.wait_closed()
    assert session.ended and session.session_id not in rig.voice.sessions
    assert rig.human.handler.resolve(request.pending_id, "late") is False
    assert len(server.connections) == 1  # no reconnect for a fatal error
    await rig.kit.aclose()


async def test_a_failed_response_is_reported(server: RealtimeTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    errors: list[ProviderErrorEvent] = []
    seen = asyncio.Event()

    def listen(event: Any) -> None:
        if isinstance(event, ProviderErrorEvent):
            errors.append(event)
            seen.set()

    session.add_listener(listen)
    await conn.begin_response()
    await conn.end_response(status="failed")
    await seen.wait()
    assert errors[0].error.code == "response_failed" and errors[0].error.recoverable
    assert not session.ended
    await rig.kit.aclose()


@pytest.mark.parametrize("dtype", ["float32", "int32"])
async def test_audio_of_the_wrong_format_is_refused_where_it_enters(
    server: RealtimeTestServer, dtype: str
) -> None:
    import numpy as np

    from voice_hitl import AudioFormatError

    rig = Rig(server)
    session, conn = await rig.start()
    with pytest.raises(AudioFormatError):
        await session.provider_session.send_audio(np.zeros(480, dtype=dtype))  # type: ignore[arg-type]
    await session.provider_session.send_audio(np.zeros(480, dtype=np.int16))  # still works
    await conn.expect("input_audio_buffer.append")
    await rig.kit.aclose()
