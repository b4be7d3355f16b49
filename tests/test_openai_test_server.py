"""The OpenAI Realtime test server itself: its checks against the ``openai`` SDK's types both
ways, and its answers to client events, driven by a bare websocket client."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from providers.openai._conversation import Conversation, ItemError
from providers.openai._sdk_types import client_event_models, server_event_models
from providers.openai._server_reactions import handled_client_events
from providers.openai_realtime_testing import (
    ClientEventError,
    RealtimeTestServer,
    ServerConnection,
    ServerEventError,
    validate_client_event,
    validate_server_event,
)


class Raw:
    """A bare client: sends JSON, reads server events until one of a type."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def send(self, event: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(event))

    async def until(self, kind: str) -> dict[str, Any]:
        while True:
            event = json.loads(await self.ws.recv())
            validate_server_event(event)  # what arrives, checked on this side too
            if event["type"] == kind:
                assert isinstance(event, dict)
                return event


@pytest.fixture
async def pair() -> AsyncIterator[tuple[Raw, ServerConnection, RealtimeTestServer]]:
    async with RealtimeTestServer() as server, connect(server.url) as ws:
        raw = Raw(ws)
        await raw.until("session.created")
        yield raw, await server.next_connection(), server


def test_every_client_event_of_the_sdk_is_answered() -> None:
    assert handled_client_events() == set(client_event_models())
    assert len(client_event_models()) == 11 and len(server_event_models()) >= 40


@pytest.mark.parametrize(
    ("event", "code", "param"),
    [
        ({"type": "session.update", "session": {"type": "realtime", "voice": "x"}},
         "unknown_parameter", "session.voice"),
        ({"type": "conversation.item.create",
          "item": {"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                  "txt": "hi"}]}},
         "unknown_parameter", "item.content[0].txt"),
        ({"type": "conversation.item.create", "item": {"type": "function_call_output",
                                                       "output": "x"}},
         "missing_required_parameter", "item.call_id"),
        ({"type": "conversation.item.truncate", "item_id": "i", "content_index": 0,
          "audio_end_ms": "5"}, "invalid_value", "audio_end_ms"),
        ({"type": "response.create", "response": {"output_modalities": ["audio", "text"]}},
         "invalid_value", "response.output_modalities"),
        ({"type": "input_audio_buffer.append", "audio": "not base64!"}, "invalid_value", "audio"),
        ({"type": "response.create", "event_id": 7}, "invalid_value", "event_id"),
        ({"type": "session.updated", "session": {}}, "invalid_value", "type"),
    ],
)
def test_client_events_are_checked_against_the_sdk(
    event: dict[str, Any], code: str, param: str
) -> None:
    with pytest.raises(ClientEventError) as info:
        validate_client_event(event)
    assert (info.value.code, info.value.param) == (code, param)
    assert param in str(info.value)


def test_server_events_are_checked_against_the_sdk() -> None:
    good = {"type": "conversation.item.deleted", "event_id": "e", "item_id": "i"}
    assert validate_server_event(good) == "conversation.item.deleted"
    for bad, where in [
        ({**good, "previous_item_id": "x"}, "previous_item_id"),
        ({"type": "conversation.item.deleted", "event_id": "e"}, "item_id"),
        ({"type": "response.done", "event_id": "e", "response": {"output": [{"type": "x"}]}},
         "response.output[0].type"),
        ({"type": "response.brand_new", "event_id": "e"}, "type"),
    ]:
        with pytest.raises(ServerEventError) as info:
            validate_server_event(bad)
        assert info.value.param == where


async def test_a_bad_server_event_is_refused_before_it_is_sent(
    pair: tuple[Raw, ServerConnection, RealtimeTestServer],
) -> None:
    raw, conn, server = pair
    with pytest.raises(ServerEventError, match=r"session\.id"):
        await conn.send({"type": "session.updated", "session": {"type": "realtime", "id": "s"}})
    await conn.send({"type": "response.brand_new", "x": 1}, check=False)  # on purpose
    junk = json.loads(await raw.ws.recv())
    assert (junk["type"], junk["x"]) == ("response.brand_new", 1)
    assert [e["type"] for e in conn.sent] == ["session.created", "response.brand_new"]


async def test_invalid_client_events_get_the_servers_error(
    pair: tuple[Raw, ServerConnection, RealtimeTestServer],
) -> None:
    raw, conn, server = pair
    await raw.ws.send("{not json")
    assert (await raw.until("error"))["error"]["code"] == "invalid_json"
    await raw.send({"type": "session.update", "event_id": "e1", "session": {"type": "realtime",
                                                                           "modalities": []}})
    error = (await raw.until("error"))["error"]
    assert (error["code"], error["param"], error["event_id"]) == (
        "unknown_parameter",
        "session.modalities",
        "e1",
    )
    assert [bad.code for bad in server.invalid] == ["invalid_json", "unknown_parameter"]
    assert conn.received == []


async def test_audio_buffer_respects_the_input_format(
    pair: tuple[Raw, ServerConnection, RealtimeTestServer],
) -> None:
    raw, conn, server = pair
    odd = base64.b64encode(bytes(801)).decode()
    await raw.send({"type": "input_audio_buffer.append", "audio": odd, "event_id": "odd"})
    error = (await raw.until("error"))["error"]
    assert (error["param"], error["event_id"]) == ("audio", "odd")  # not whole PCM16 samples
    pcmu = {"input": {"format": {"type": "audio/pcmu"}}}
    await raw.send({"type": "session.update", "session": {"type": "realtime", "audio": pcmu}})
    updated = await raw.until("session.updated")
    assert updated["session"]["audio"]["input"]["format"] == {"type": "audio/pcmu"}
    assert updated["session"]["tools"] == []  # fields not updated stay as they were
    await raw.send({"type": "input_audio_buffer.append", "audio": odd})  # 8-bit G.711: fine
    await raw.send({"type": "input_audio_buffer.commit"})
    committed = await raw.until("input_audio_buffer.committed")
    added = await raw.until("conversation.item.added")
    assert added["item"]["id"] == committed["item_id"] and added["item"]["role"] == "user"


async def test_responses_one_at_a_time_and_cancel_by_id(
    pair: tuple[Raw, ServerConnection, RealtimeTestServer],
) -> None:
    raw, conn, server = pair
    response_id = await conn.begin_response()
    await raw.send({"type": "response.create", "event_id": "r2"})
    error = (await raw.until("error"))["error"]
    assert (error["code"], error["event_id"]) == ("conversation_already_has_active_response", "r2")
    await raw.send({"type": "response.cancel", "response_id": "resp_other", "event_id": "c"})
    assert (await raw.until("error"))["error"]["code"] == "response_cancel_not_active"
    call_id = await conn.function_call("lookup", {}, finish=False)
    await raw.send({"type": "response.cancel", "response_id": response_id})
    done = (await raw.until("response.done"))["response"]
    assert (done["id"], done["status"]) == (response_id, "cancelled")
    assert done["status_details"] == {"type": "cancelled", "reason": "client_cancelled"}
    (item,) = done["output"]
    assert (item["call_id"], item["status"]) == (call_id, "completed")  # its arguments were done
    assert conn.active_response is None


async def test_client_created_function_call_and_its_output(
    pair: tuple[Raw, ServerConnection, RealtimeTestServer],
) -> None:
    raw, conn, server = pair
    call = {"type": "function_call", "call_id": "call_c", "name": "lookup", "arguments": "{}"}
    await raw.send({"type": "conversation.item.create", "item": call})
    await raw.until("conversation.item.done")
    output = {"type": "function_call_output", "call_id": "call_c", "output": "ok"}
    await raw.send({"type": "conversation.item.create", "item": output})
    await raw.until("conversation.item.done")
    assert conn.orphan_outputs == []  # the client's own call is known
    await raw.send({"type": "conversation.item.create", "item": {**output, "call_id": "nope"}})
    await raw.until("conversation.item.done")
    assert conn.orphan_outputs == ["nope"]


def test_conversation_item_positions_and_errors() -> None:
    ids = iter(range(100))
    conversation = Conversation(lambda prefix: f"{prefix}_{next(ids)}")

    def message(text: str) -> dict[str, Any]:
        content = [{"type": "input_text", "text": text}]
        return {"type": "message", "role": "user", "content": content}

    a = conversation.create(message("a"), None)[0]["item"]["id"]
    b_added, b_done = conversation.create(message("b"), "root")
    assert b_added["previous_item_id"] is None and b_done["type"] == "conversation.item.done"
    c = conversation.create({**message("c"), "id": "c"}, a)[0]
    assert c["previous_item_id"] == a
    assert [item["id"] for item in conversation.items] == [b_added["item"]["id"], a, "c"]
    with pytest.raises(ItemError) as info:
        conversation.create({**message("d"), "id": "c"}, None)
    assert info.value.code == "item_create_duplicate_item_id"
    with pytest.raises(ItemError) as info:
        conversation.truncate("c", 0, 0)
    assert "Only model output audio" in str(info.value)  # a user's text cannot be truncated
