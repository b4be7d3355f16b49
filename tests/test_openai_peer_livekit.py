"""LiveKit's OpenAI plugin (``livekit-plugins-openai`` RealtimeModel) against the OpenAI
Realtime test server: a client nobody here wrote, with its own expectations of the server's
event sequences (it keys spoken replies by the ``response.output_item.added`` item, waits for
``conversation.item.added``/``deleted`` to settle ``update_chat_ctx``).

Its sessions run a function call round trip, a spoken reply, a cancel, a truncate and an item
delete; wrapped in ``LiveKitRealtimeProvider`` inside a ``RealtimeVoiceChannel`` they serve a
human-input tool end to end. The server checks every event both ways against the SDK's types.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("livekit.plugins.openai")

import aiohttp
from doors import ASK, LOOKUP, Host, Observed, human_tools
from livekit.agents import llm
from livekit.plugins.openai.realtime import RealtimeModel

import providers.livekit as lk
from providers.base import ProviderEvent, TranscriptionEvent
from providers.openai_realtime_testing import RealtimeTestServer, ServerConnection
from voice_hitl import RealtimeVoiceChannel, VoiceKit


@pytest.fixture
async def server() -> AsyncIterator[RealtimeTestServer]:
    async with RealtimeTestServer(api_key="sk-lk") as srv:
        yield srv
    assert srv.invalid == [], "the LiveKit plugin sent events the server rejected"
    for conn in srv.connections:
        assert [e for e in conn.sent if e["type"] == "error"] == []


@pytest.fixture
async def model(server: RealtimeTestServer) -> AsyncIterator[RealtimeModel]:
    async with aiohttp.ClientSession() as http:
        yield RealtimeModel(api_key="sk-lk", base_url=server.base_url, http_session=http)


async def open_session(
    model: RealtimeModel, server: RealtimeTestServer
) -> tuple[Any, ServerConnection, asyncio.Queue[llm.GenerationCreatedEvent]]:
    session = model.session()
    generations: asyncio.Queue[llm.GenerationCreatedEvent] = asyncio.Queue()
    session.on("generation_created", generations.put_nowait)
    conn = await server.next_connection()
    await conn.expect("session.update")
    return session, conn, generations


async def read_message(generation: llm.GenerationCreatedEvent) -> tuple[str, str, int]:
    """The first message of a generation: its id, text and number of audio frames."""
    async for message in generation.message_stream:
        text = "".join([str(t) async for t in message.text_stream])
        frames = [f async for f in message.audio_stream]
        return message.message_id, text, len(frames)
    raise AssertionError("the generation had no message")


async def test_function_call_reply_and_chat_context(
    model: RealtimeModel, server: RealtimeTestServer
) -> None:
    server.auto_reply = "It is 42."
    session, conn, generations = await open_session(model, server)
    assert conn.path == "/v1/realtime?model=gpt-realtime"
    call_id = await conn.function_call("lookup", {"key": "balance"})
    generation = await generations.get()
    calls = [call async for call in generation.function_stream]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        (call_id, "lookup", '{"key": "balance"}')
    ]

    chat_ctx = session.chat_ctx.copy()
    chat_ctx.items.append(
        llm.FunctionCallOutput(call_id=call_id, name="lookup", output="42", is_error=False)
    )
    await session.update_chat_ctx(chat_ctx)  # settles on conversation.item.added
    assert await conn.expect_function_call_output(call_id) == "42"
    reply = await session.generate_reply()
    assert reply.user_initiated
    item_id, text, frames = await read_message(reply)
    assert (text, frames) == ("It is 42.", 2)
    assert conn.conversation.find(item_id) is not None

    # Drop everything after the call from the context: LiveKit deletes the items.
    chat_ctx = session.chat_ctx.copy()
    kept = [i for i in chat_ctx.items if i.type == "function_call"]
    chat_ctx.items[:] = kept
    await session.update_chat_ctx(chat_ctx)  # settles on conversation.item.deleted
    assert [i["type"] for i in conn.conversation.items] == ["function_call"]
    assert conn.count("conversation.item.delete") == 2
    await session.aclose()


async def test_spoken_reply_cancel_and_truncate(
    model: RealtimeModel, server: RealtimeTestServer
) -> None:
    session, conn, generations = await open_session(model, server)
    await conn.begin_response()
    await conn.speak("Here is the long list of accounts", finish=False)
    generation = await generations.get()
    item_id, text, frames = await read_message(generation)
    assert text == "Here is the long list of accounts" and frames == 2
    assert session.has_active_generation
    session.interrupt()  # response.cancel
    await conn.expect("response.cancel")
    (done,) = [e for e in conn.sent if e["type"] == "response.done"]
    assert done["response"]["status"] == "cancelled"
    session.truncate(message_id=item_id, modalities=["audio"], audio_end_ms=10)
    truncate = await conn.expect("conversation.item.truncate")
    assert (truncate["item_id"], truncate["audio_end_ms"]) == (item_id, 10)
    assert conn.conversation.audio_ms[(item_id, 0)] == 10
    session.truncate(message_id=item_id, modalities=["audio"], audio_end_ms=0)
    await conn.expect("conversation.item.delete")  # nothing was heard: LiveKit deletes it
    assert conn.conversation.find(item_id) is None
    kinds = [e["type"] for e in conn.sent]
    assert {"conversation.item.truncated", "conversation.item.deleted"} <= set(kinds)
    await session.aclose()


async def test_channel_serves_ask_user_question_through_the_plugin(
    model: RealtimeModel, server: RealtimeTestServer
) -> None:
    server.auto_reply = "Savings, noted."
    kit = VoiceKit()
    observed = Observed.on(kit)
    voice = RealtimeVoiceChannel(
        "voice",
        provider=lk.LiveKitRealtimeProvider(model),
        tools=[LOOKUP],
        tool_handler=Host(),
        human_input_handler=human_tools(30.0),
        instructions="Be brief.",
    )
    kit.register_channel(voice)
    session = await voice.start_session("room-1", participant_id="caller-7")
    events: asyncio.Queue[ProviderEvent] = asyncio.Queue()
    session.add_listener(events.put_nowait)
    conn = await server.next_connection()
    update = await conn.expect("session.update", lambda e: "tools" in e["session"])
    names = {t["name"] for t in update["session"]["tools"]}
    assert names == {"lookup", ASK.name, "ConfirmAction"}

    await conn.transcribe_user("What is my balance?", speech=True)  # server VAD, then text
    heard = [await events.get() for _ in range(3)]
    assert [type(e).__name__ for e in heard] == [
        "SpeechStartedEvent",
        "SpeechStoppedEvent",
        "TranscriptionEvent",
    ]
    final = await events.get()
    while not (isinstance(final, TranscriptionEvent) and final.final):
        final = await events.get()
    assert (final.role, final.text) == ("user", "What is my balance?")

    call_id = await conn.function_call(ASK.name, {"question": "Which account?"})
    event = await observed.requests.get()
    assert (event.actor_id, event.arguments) == ("caller-7", {"question": "Which account?"})
    assert voice.human_input_handler is not None
    assert voice.human_input_handler.handler.resolve(event.pending_id, "savings")
    assert await conn.expect_function_call_output(call_id) == "savings"
    await conn.expect("response.create")  # the bridge asks for the model's reply
    report = await observed.reports.get()
    assert (report.outcome, report.door.value, report.delivered) == ("ok", "provider", True)
    said = await events.get()
    while not (isinstance(said, TranscriptionEvent) and said.role == "assistant"):
        said = await events.get()
    assert said.text == "Savings, noted."  # the reply reached the channel
    await kit.aclose()
