"""HumanInputToolHandler and the tool model: serving, outcomes, composition, context."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from voice_hitl import (
    AITool,
    ChannelType,
    HumanInputHandler,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolCallContext,
    ToolFailedError,
    ToolRefusedError,
    UnservedToolCallError,
    compose_tool_handlers,
    current_tool_context,
    tool_context,
)
from voice_hitl.testing import RequestQueue

ASK = AITool(
    name="AskUserQuestion",
    description="Ask the user",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="at least one tool name"):
        HumanInputToolHandler(set())
    with pytest.raises(ValueError, match="'Other' is not among tool_names"):
        HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[AITool(name="Other")])
    with pytest.raises(ValueError, match="timeout"):
        HumanInputToolHandler({"AskUserQuestion"}, timeout=0)
    shared = HumanInputHandler()
    assert HumanInputToolHandler({"A"}, handler=shared).handler is shared


async def test_called_as_tool_handler_asks_on_ai_door() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    events: list[PendingInputEvent] = []

    async def notify(event: PendingInputEvent) -> str | None:
        events.append(event)
        human.handler.resolve(event.pending_id, '{"answer": "blue"}')
        return None

    human.handler.set_notifier("agent", notify)
    with tool_context(ToolCallContext("room", "call_9", "agent", ChannelType.AI, "alice")):
        result = await human("AskUserQuestion", {"question": "color?"})
    assert json.loads(result) == {"answer": "blue"}
    (event,) = events
    assert (event.room_id, event.tool_call_id, event.channel_id, event.actor_id) == (
        "room",
        "call_9",
        "agent",
        "alice",
    )
    assert event.channel_type is ChannelType.AI
    await human.handler.close()


async def test_unserved_name_passes_on() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"})
    with pytest.raises(UnservedToolCallError):
        await human("weather", {})

    async def weather(name: str, arguments: dict[str, Any]) -> str:
        if name != "weather":
            raise UnservedToolCallError(name)
        return "sunny"

    composed = compose_tool_handlers(human, weather)
    assert await composed("weather", {}) == "sunny"
    with pytest.raises(UnservedToolCallError):
        await composed("unknown", {})


def test_compose_needs_two() -> None:
    async def one(name: str, arguments: dict[str, Any]) -> str:
        return ""

    with pytest.raises(ValueError, match="at least two"):
        compose_tool_handlers(one)


@pytest.mark.looptime
async def test_timeout_text_uses_g_format() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=300.0)
    with pytest.raises(ToolFailedError) as info:
        await human.ask("AskUserQuestion", {})
    assert str(info.value) == "Human input timed out after 300s for tool 'AskUserQuestion'"
    short = HumanInputToolHandler({"AskUserQuestion"}, timeout=0.1)
    with pytest.raises(ToolFailedError) as info:
        await short.ask("AskUserQuestion", {})
    assert str(info.value) == "Human input timed out after 0.1s for tool 'AskUserQuestion'"


async def test_rejection_is_refusal_with_reason() -> None:
    human = HumanInputToolHandler({"ConfirmAction"})

    requests = RequestQueue(human.handler)

    async def reject_next() -> None:
        event = await requests.next()
        human.handler.reject(event.pending_id, "caller said no")

    rejecter = asyncio.create_task(reject_next())
    with pytest.raises(ToolRefusedError) as info:
        await human.ask("ConfirmAction", {}, channel_type=ChannelType.REALTIME_VOICE)
    await rejecter
    assert str(info.value) == "Human input rejected: caller said no"


async def test_closed_handler_raises_plain_runtime_error() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"})

    requests = RequestQueue(human.handler)

    async def close_soon() -> None:
        await requests.next()
        await human.handler.close()

    closer = asyncio.create_task(close_soon())
    with pytest.raises(RuntimeError) as info:
        await human.ask("AskUserQuestion", {})
    await closer
    assert type(info.value) is RuntimeError


async def test_channel_type_override_reaches_the_request() -> None:
    human = HumanInputToolHandler({"AskUserQuestion"})
    requests = RequestQueue(human.handler)
    asking = asyncio.create_task(
        human.ask("AskUserQuestion", {}, channel_type=ChannelType.CONFERENCE)
    )
    event = await requests.next()
    assert event.channel_type is ChannelType.CONFERENCE
    human.handler.resolve(event.pending_id, "ok")
    assert await asking == "ok"
    await human.handler.close()


def test_current_tool_context_outside_a_call_is_empty_ai() -> None:
    assert current_tool_context() == ToolCallContext()


def test_ai_tool_rejects_empty_name() -> None:
    with pytest.raises(ValueError):
        AITool(name="")
