"""Approval-gated tools on the text door: an ``AIChannel``'s call waits for a person's yes.

The scripted text model calls the gated tool without asking; the channel's gate (door ``ai``)
raises a ``ConfirmAction`` on the channel's human-input handler, the host tool runs only after the
yes with exactly the approved arguments, and a no reaches the model as a refusal it can read.
"""

from __future__ import annotations

import json
from typing import Any

from providers.mock_text import MockAIProvider, tool_call
from voice_hitl import (
    AIChannel,
    AIContext,
    AIResponse,
    AITool,
    HookContext,
    HookExecution,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    VoiceKit,
)

TRANSFER = AITool(
    name="transfer",
    description="Move money between accounts.",
    parameters={
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    },
)


def last_tool_result(context: AIContext) -> AIResponse:
    """The model's closing text: the last tool result it read."""
    return AIResponse(text=str(context.messages[-1].content))


async def run_turn(answer: dict[str, Any]) -> tuple[str, list[dict[str, Any]], list[str]]:
    kit = VoiceKit()
    kit.require_approval("transfer")
    human = HumanInputToolHandler(tool_names={"ConfirmAction"}, timeout=30)
    ran: list[dict[str, Any]] = []

    async def bank(name: str, arguments: dict[str, Any]) -> str:
        ran.append(arguments)
        return json.dumps({"moved": arguments["amount"]})

    provider = MockAIProvider(
        [
            AIResponse(tool_calls=[tool_call("transfer", {"amount": 250, "to": "savings"})]),
            last_tool_result,
        ]
    )
    ai = AIChannel(
        "agent", provider=provider, tool_handler=bank, human_input_handler=human, tools=[TRANSFER]
    )
    kit.register_channel(ai)
    asked: list[str] = []

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED, execution=HookExecution.SYNC)
    async def person(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.append(event.tool_name)
        assert event.context["approval"]["arguments"] == {"amount": 250, "to": "savings"}
        assert ran == [], "the tool ran before the person answered"
        human.handler.resolve(event.pending_id, json.dumps(answer), by="alice", via="api")

    async with kit:
        reply = await ai.respond("move 250 to savings", room_id="room-1", author_id="alice")
    return reply, ran, asked


async def test_ai_door_runs_the_gated_tool_only_after_the_yes() -> None:
    reply, ran, asked = await run_turn({"answer": True})
    assert asked == ["ConfirmAction"]
    assert ran == [{"amount": 250, "to": "savings"}]
    assert json.loads(reply) == {"moved": 250}


async def test_ai_door_no_reaches_the_model_as_a_refusal() -> None:
    reply, ran, asked = await run_turn({"answer": False})
    assert asked == ["ConfirmAction"]
    assert ran == []
    assert "was not approved" in reply
