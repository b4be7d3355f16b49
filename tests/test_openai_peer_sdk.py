"""The official ``openai`` SDK's realtime client against the OpenAI Realtime test server.

The SDK's own client (``AsyncOpenAI(...).realtime.connect``, pointed at the server with
``websocket_base_url``) runs sessions written the way its users write them: a function call
round trip, a spoken reply, a cancel, item retrieve/truncate/delete, the input buffer, and a
human-input tool served by ``HumanInputToolHandler``. Every event both ways is checked against
the SDK's types by the server itself (client events on arrival, server events before sending).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("openai")

from openai import AsyncOpenAI

from providers.openai._sdk_types import client_event_models
from providers.openai._server_reactions import handled_client_events
from providers.openai_realtime_testing import RealtimeTestServer, ServerConnection
from voice_hitl import ASK_USER_QUESTION, HumanInputToolHandler, PendingInput

Connection = Any  # openai.resources.realtime.realtime.AsyncRealtimeConnection


@pytest.fixture
async def server() -> AsyncIterator[RealtimeTestServer]:
    async with RealtimeTestServer(api_key="sk-peer") as srv:
        yield srv
    assert srv.invalid == [], "the SDK client sent events the server rejected"


def sdk_client(server: RealtimeTestServer) -> AsyncOpenAI:
    # base_url is only for HTTP calls, which these sessions never make.
    return AsyncOpenAI(
        api_key="sk-peer", base_url="http://127.0.0.1:9/v1", websocket_base_url=server.base_url
    )


async def until(rt: Connection, kind: str) -> tuple[Any, list[Any]]:
    """Read events until one of ``kind``; returns it and everything read."""
    seen: list[Any] = []
    while True:
        event = await rt.recv()
        seen.append(event)
        if event.type == kind:
            return event, seen


async def opened(rt: Connection, server: RealtimeTestServer) -> ServerConnection:
    conn = await server.next_connection()
    created = await rt.recv()
    assert created.type == "session.created"
    return conn


async def test_function_call_round_trip_and_spoken_reply(server: RealtimeTestServer) -> None:
    server.auto_reply = "The balance is 42."
    async with sdk_client(server).realtime.connect(model="gpt-realtime") as rt:
        conn = await opened(rt, server)
        tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
        await rt.session.update(
            session={"type": "realtime", "tools": [tool], "parallel_tool_calls": False}
        )
        updated, _ = await until(rt, "session.updated")
        assert updated.session.parallel_tool_calls is False
        assert conn.path == "/v1/realtime?model=gpt-realtime"
        assert conn.headers["Authorization"] == "Bearer sk-peer"

        call_id = await conn.function_call("lookup", {"account": "savings"})
        done, seen = await until(rt, "response.done")
        arguments = next(e for e in seen if e.type == "response.function_call_arguments.done")
        assert (arguments.call_id, arguments.name) == (call_id, "lookup")
        assert arguments.arguments == '{"account": "savings"}'
        (item,) = done.response.output
        assert (item.type, item.call_id, item.status) == ("function_call", call_id, "completed")
        assert {e.item.id for e in seen if hasattr(e, "item")} == {item.id}

        await rt.conversation.item.create(
            item={"type": "function_call_output", "call_id": call_id, "output": "42"}
        )
        added, _ = await until(rt, "conversation.item.added")
        assert added.previous_item_id == item.id
        await until(rt, "conversation.item.done")
        await rt.response.create(response={"metadata": {"turn": "2"}})
        done, seen = await until(rt, "response.done")
        kinds = [e.type for e in seen]
        assert [k for k in kinds if not k.endswith(".delta")] == [
            "response.created",
            "response.output_item.added",
            "conversation.item.added",
            "response.content_part.added",
            "response.output_audio.done",
            "response.output_audio_transcript.done",
            "response.content_part.done",
            "response.output_item.done",
            "conversation.item.done",
            "response.done",
        ]
        deltas = [i for i, k in enumerate(kinds) if k.endswith(".delta")]
        assert kinds.index("response.content_part.added") < min(deltas)
        assert max(deltas) < kinds.index("response.output_audio.done")
        item_ids = {e.item_id for e in seen if hasattr(e, "item_id")}
        item_ids |= {e.item.id for e in seen if hasattr(e, "item")}
        assert len(item_ids) == 1
        transcript = "".join(
            e.delta for e in seen if e.type == "response.output_audio_transcript.delta"
        )
        assert transcript == "The balance is 42."
        response_ids = {e.response_id for e in seen if hasattr(e, "response_id")}
        assert response_ids == {done.response.id} and done.response.metadata == {"turn": "2"}
        (message,) = done.response.output
        assert message.content[0].transcript == "The balance is 42."
        audio = b"".join(
            base64.b64decode(e.delta) for e in seen if e.type == "response.output_audio.delta"
        )
        assert len(audio) == 2 * 480 * 2  # two deltas of 480 silent samples
    assert conn.orphan_outputs == []


async def test_cancel_truncate_retrieve_delete(server: RealtimeTestServer) -> None:
    async with sdk_client(server).realtime.connect(model="gpt-realtime") as rt:
        conn = await opened(rt, server)
        await conn.begin_response()
        item_id = await conn.speak("Let me read the whole list to you", finish=False)
        await rt.response.cancel()
        done, _ = await until(rt, "response.done")
        assert done.response.status == "cancelled"
        assert done.response.status_details.reason == "client_cancelled"
        await rt.response.cancel(event_id="again")
        error, _ = await until(rt, "error")
        assert (error.error.code, error.error.event_id) == ("response_cancel_not_active", "again")

        await rt.conversation.item.truncate(item_id=item_id, content_index=0, audio_end_ms=15)
        truncated, _ = await until(rt, "conversation.item.truncated")
        assert (truncated.item_id, truncated.audio_end_ms) == (item_id, 15)
        await rt.conversation.item.truncate(
            item_id=item_id, content_index=0, audio_end_ms=5000, event_id="too-far"
        )
        error, _ = await until(rt, "error")
        assert error.error.event_id == "too-far" and error.error.param == "audio_end_ms"
        await rt.conversation.item.retrieve(item_id=item_id)
        retrieved, _ = await until(rt, "conversation.item.retrieved")
        assert retrieved.item.content[0].transcript == ""  # truncation drops the transcript

        await rt.conversation.item.delete(item_id=item_id)
        deleted, _ = await until(rt, "conversation.item.deleted")
        assert deleted.item_id == item_id
        for op, code in [
            ("delete", "item_delete_invalid_item_id"),
            ("retrieve", "item_retrieve_invalid_item_id"),
            ("truncate", "item_truncate_invalid_item_id"),
        ]:
            method = getattr(rt.conversation.item, op)
            extra = {"content_index": 0, "audio_end_ms": 0} if op == "truncate" else {}
            await method(item_id=item_id, event_id=f"bad-{op}", **extra)
            error, _ = await until(rt, "error")
            assert (error.error.code, error.error.event_id) == (code, f"bad-{op}")
        assert conn.conversation.find(item_id) is None


async def test_items_and_buffers_every_client_event(server: RealtimeTestServer) -> None:
    async with sdk_client(server).realtime.connect(model="gpt-realtime") as rt:
        conn = await opened(rt, server)
        await rt.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        await until(rt, "session.updated")
        call = {"type": "function_call", "call_id": "call_a", "name": "lookup", "arguments": "{}"}
        await rt.conversation.item.create(item=call)
        first, _ = await until(rt, "conversation.item.done")
        text = [{"type": "input_text", "text": "x"}]
        note = {"type": "message", "role": "system", "content": text}
        await rt.conversation.item.create(item=note, previous_item_id="root")
        added, _ = await until(rt, "conversation.item.added")
        assert added.previous_item_id is None
        assert [i["id"] for i in conn.conversation.items] == [added.item.id, first.item.id]
        await rt.conversation.item.create(item=note, previous_item_id="gone", event_id="p")
        error, _ = await until(rt, "error")
        assert (error.error.code, error.error.param) == (
            "item_create_invalid_previous_item_id",
            "previous_item_id",
        )

        await rt.input_audio_buffer.commit(event_id="empty")
        error, _ = await until(rt, "error")
        assert error.error.code == "input_audio_buffer_commit_empty"
        await rt.input_audio_buffer.append(audio=base64.b64encode(bytes(9600)).decode())
        await rt.input_audio_buffer.commit()
        committed, _ = await until(rt, "input_audio_buffer.committed")
        assert committed.previous_item_id == first.item.id
        await rt.input_audio_buffer.append(audio=base64.b64encode(bytes(960)).decode())
        await rt.input_audio_buffer.clear()
        await until(rt, "input_audio_buffer.cleared")
        assert conn.input_audio_bytes == 0
        await rt.output_audio_buffer.clear(event_id="ws")
        error, _ = await until(rt, "error")
        assert error.error.event_id == "ws"  # no output audio buffer on a WebSocket session

        server.auto_reply = "noted"
        await rt.response.create()
        done, seen = await until(rt, "response.done")
        assert "response.output_text.done" in {e.type for e in seen}  # text modality
        assert done.response.output[0].content[0].text == "noted"
        await rt.response.create(response={"conversation": "none"})
        done, seen = await until(rt, "response.done")
        assert done.response.conversation_id is None
        assert not any(e.type.startswith("conversation.item") for e in seen)  # out of band
    sent = {e["type"] for e in conn.received}
    assert sent == set(client_event_models()) - {
        "conversation.item.delete",
        "conversation.item.retrieve",
        "conversation.item.truncate",
        "response.cancel",
    }  # those four: test_cancel_truncate_retrieve_delete
    assert handled_client_events() == set(client_event_models())


async def test_sip_call_output_buffer(server: RealtimeTestServer) -> None:
    sip = sdk_client(server).realtime.connect(model="gpt-realtime", extra_query={"call_id": "c1"})
    async with sip as rt:
        conn = await opened(rt, server)
        assert conn.sip
        await conn.begin_response()
        await conn.speak("Hello caller.", finish=False)
        await rt.output_audio_buffer.clear()
        cleared, _ = await until(rt, "output_audio_buffer.cleared")
        assert cleared.response_id == conn.active_response
        await conn.dtmf("42")
        keys = [(await rt.recv()).event for _ in range(2)]
        assert keys == ["4", "2"]


async def test_human_input_tool_served_through_the_sdk_client(
    server: RealtimeTestServer,
) -> None:
    ask = ASK_USER_QUESTION
    human = HumanInputToolHandler({ask.name}, timeout=30.0, tool_definitions=[ask])
    server.auto_reply = "Savings it is."
    async with sdk_client(server).realtime.connect(model="gpt-realtime") as rt:
        conn = await opened(rt, server)
        tool = {"type": "function", "name": ask.name, "description": ask.description}
        await rt.session.update(
            session={"type": "realtime", "tools": [{**tool, "parameters": ask.parameters}]}
        )
        await until(rt, "session.updated")
        call_id = await conn.function_call(ask.name, {"question": "Which account?"})
        done, _ = await until(rt, "response.done")
        (item,) = done.response.output
        created: asyncio.Queue[PendingInput] = asyncio.Queue()
        asking = asyncio.create_task(
            human.ask(item.name, json.loads(item.arguments), on_created=created.put_nowait)
        )
        pending = await created.get()
        assert pending.arguments == {"question": "Which account?"}
        assert human.handler.resolve(pending.pending_id, "savings")
        answer = await asking
        await rt.conversation.item.create(
            item={"type": "function_call_output", "call_id": item.call_id, "output": answer}
        )
        await rt.response.create()
        spoken, _ = await until(rt, "response.output_audio_transcript.done")
        assert spoken.transcript == "Savings it is."
        assert await conn.expect_function_call_output(call_id) == answer == "savings"
    await human.handler.close()
