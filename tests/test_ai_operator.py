"""A text agent's requests reach the board, the journal and the deadline policies as a voice
channel's do: the AI door goes through the same handler."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from providers.mock_text import MockAIProvider, tool_call
from voice_hitl import (
    AIChannel,
    AIContext,
    AIResponse,
    AITool,
    HookContext,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    VoiceKit,
)
from voice_hitl.board import BoardBridge, BoardStatus, MemoryBoard
from voice_hitl.journal import Journal

ASK = AITool(
    name="AskUserQuestion",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)


def echo_last(context: AIContext) -> AIResponse:
    return AIResponse(text=f"model read: {context.messages[-1].content}")


async def test_a_text_agents_request_is_on_the_board_and_in_the_journal(tmp_path: Path) -> None:
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=30, tool_definitions=[ASK])
    journal = Journal.open(tmp_path / "j.sqlite3", b"key")
    journal.attach(human.handler)
    board = MemoryBoard()
    kit = VoiceKit()
    asked: asyncio.Queue[PendingInputEvent] = asyncio.Queue()

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def notify(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.put_nowait(event)

    provider = MockAIProvider(
        [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Refund?"})]), echo_last]
    )
    ai = AIChannel("chat", provider=provider, human_input_handler=human)
    kit.register_channel(ai)
    async with kit, BoardBridge(human.handler, board, worker_id="w-1") as bridge:
        turn = asyncio.create_task(ai.respond("I want a refund", room_id="t-9", author_id="dana"))
        event = await asked.get()
        await bridge.drain()
        record = await board.get(event.pending_id)
        assert record is not None and record.is_open
        assert (record.channel, record.channel_type, record.room, record.actor) == (
            "chat",
            "ai",
            "t-9",
            "dana",
        )
        settled = await board.settle(record.id, BoardStatus.ANSWERED, "yes, refund", by="op")
        assert settled.won
        assert await turn == "model read: yes, refund"
    await asyncio.to_thread(journal.close)
    story = journal.store.read(event.pending_id)
    assert [e.kind for e in story] == ["opened", "notified", "settled", "delivered"]
    assert story[0].data["room"] == "t-9"
    assert story[3].data["outcome"] == "ok" and story[3].data["text"] == "yes, refund"


async def test_a_deadline_default_answers_on_an_ai_door() -> None:
    human = HumanInputToolHandler(
        {"AskUserQuestion"},
        timeout=0.05,
        tool_definitions=[ASK],
        default={"AskUserQuestion": "no"},
    )
    provider = MockAIProvider(
        [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})]), echo_last]
    )
    async with AIChannel("chat", provider=provider, human_input_handler=human) as ai:
        reply = await ai.respond("hi")
    read = json.loads(reply.removeprefix("model read: "))
    assert read["via"] == "default"
