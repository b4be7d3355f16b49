"""AIChannel: a text agent's tool loop through the one ToolGate, human-input tools first."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from providers.mock_text import MockAIProvider, tool_call
from voice_hitl import (
    AIChannel,
    AIContext,
    AIResponse,
    AITool,
    ChannelClosedError,
    ChannelType,
    Door,
    HookContext,
    HookExecution,
    HookResult,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolCallReport,
    ToolUseEvent,
    VoiceKit,
    current_tool_actor_id,
)

ASK = AITool(
    name="AskUserQuestion",
    description="Ask the user a question and wait for the answer.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)
LOOKUP = AITool(
    name="lookup",
    description="Look a key up.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)


class Observed:
    """Collects ON_TOOL_CALL reports and ON_USER_INPUT_REQUIRED events as they arrive."""

    def __init__(self, kit: VoiceKit) -> None:
        self.reports: list[ToolCallReport] = []
        self.requests: list[PendingInputEvent] = []
        self.changed = asyncio.Event()

        @kit.hook(HookTrigger.ON_TOOL_CALL)
        async def report(event: ToolCallReport, ctx: HookContext) -> None:
            self.reports.append(event)
            self.changed.set()

        @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
        async def asked(event: PendingInputEvent, ctx: HookContext) -> None:
            self.requests.append(event)
            self.changed.set()

    async def until(self, predicate: Any) -> None:
        while not predicate():
            self.changed.clear()
            await self.changed.wait()


def echo_last(context: AIContext) -> AIResponse:
    return AIResponse(text=f"model read: {context.messages[-1].content}")


def human_tools(timeout: float = 300.0) -> HumanInputToolHandler:
    return HumanInputToolHandler({"AskUserQuestion"}, timeout=timeout, tool_definitions=[ASK])


async def test_quick_start_as_documented() -> None:
    """The document's quick start: the model asks, a hook notifies, the app resolves."""
    kit = VoiceKit()
    human = HumanInputToolHandler(
        tool_names={"AskUserQuestion", "ConfirmAction"},
        timeout=300,
        tool_definitions=[ASK],
    )
    host_calls: list[str] = []

    async def my_other_tools(name: str, arguments: dict[str, Any]) -> str:
        host_calls.append(name)
        return "looked up"

    provider = MockAIProvider(
        [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Colour?"})]), echo_last]
    )
    ai = AIChannel(
        "agent",
        provider=provider,
        system_prompt="You are a helpful assistant. Use AskUserQuestion to ask the user.",
        tool_handler=my_other_tools,
        human_input_handler=human,
        tools=[LOOKUP],
    )
    kit.register_channel(ai)
    notified: list[dict[str, Any]] = []

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED, execution=HookExecution.SYNC)
    async def notify_user(event: PendingInputEvent, ctx: HookContext) -> None:
        notified.append(
            {
                "to": event.actor_id,
                "pending_id": event.pending_id,
                "tool_name": event.tool_name,
                "arguments": event.arguments,
            }
        )
        human.handler.resolve(event.pending_id, '{"answer": "blue"}')

    async with kit:
        reply = await ai.respond("pick a colour for me", room_id="room-1", author_id="alice")
    assert reply == 'model read: {"answer": "blue"}'
    assert notified[0]["to"] == "alice" and notified[0]["tool_name"] == "AskUserQuestion"
    assert notified[0]["arguments"] == {"question": "Colour?"}
    assert host_calls == []
    first = provider.contexts[0]
    assert first.system_prompt.startswith("You are a helpful assistant")
    assert {t.name for t in first.tools} == {"AskUserQuestion", "lookup"}
    assert ai.tools == list(first.tools)


async def test_requests_carry_ai_door_room_and_author() -> None:
    kit = VoiceKit()
    seen = Observed(kit)
    human = human_tools()
    ai = AIChannel(
        "agent",
        provider=MockAIProvider(
            [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})])]
        ),
        human_input_handler=human,
    )
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("hi", room_id="r", author_id="bob"))
        await seen.until(lambda: seen.requests)
        event = seen.requests[0]
        assert (event.channel_type, event.room_id, event.actor_id) == (ChannelType.AI, "r", "bob")
        assert human.handler.resolve(event.pending_id, "yes")
        await turn
    (report,) = seen.reports
    assert (report.door, report.channel_type, report.outcome) == (Door.AI, ChannelType.AI, "ok")
    assert report.actor_id == "bob" and report.result == "yes"
    tool_message = ai.conversation("r")[2]
    assert (tool_message.role, tool_message.content) == ("tool", "yes")
    assert not tool_message.is_error


async def test_host_handler_reads_the_turns_author() -> None:
    actors: list[str | None] = []

    async def host(name: str, arguments: dict[str, Any]) -> str:
        actors.append(current_tool_actor_id())
        return "ok"

    ai = AIChannel(
        "agent",
        provider=MockAIProvider([AIResponse(tool_calls=[tool_call("lookup", {})])]),
        tool_handler=host,
        tools=[LOOKUP],
    )
    VoiceKit().register_channel(ai)  # host tools are served only where a kit's rules reach
    await ai.respond("x", author_id="carol")
    await ai.respond("y")
    assert actors == ["carol"]
    await ai.close()


async def test_before_tool_use_denies_and_rewrites_with_schema_check() -> None:
    kit = VoiceKit()
    seen = Observed(kit)
    got: list[dict[str, Any]] = []

    async def host(name: str, arguments: dict[str, Any]) -> str:
        got.append(arguments)
        return "done"

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def gate(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        key = event.arguments.get("key")
        if key == "secret":
            return HookResult.block("not that key")
        if key == "fix":
            return HookResult.modify(arguments={"key": "fixed"})
        if key == "break":
            return HookResult.modify(arguments={"key": 7})
        return None

    calls = [tool_call("lookup", {"key": k}) for k in ("secret", "fix", "break")]
    provider = MockAIProvider([AIResponse(tool_calls=calls), AIResponse(text="end")])
    ai = AIChannel("agent", provider=provider, tool_handler=host, tools=[LOOKUP])
    kit.register_channel(ai)
    async with kit:
        assert await ai.respond("go") == "end"
    assert got == [{"key": "fixed"}]
    results = [m for m in provider.contexts[1].messages if m.role == "tool"]
    assert [m.is_error for m in results] == [True, False, True]
    assert json.loads(results[0].content) == {"error": "not that key"}
    assert "field 'key'" in json.loads(results[2].content)["error"]
    outcomes = {r.tool_call_id: r.outcome for r in seen.reports}
    assert [outcomes[c.id] for c in calls] == ["refused", "ok", "failed"]


async def test_parallel_calls_complete_while_a_question_waits() -> None:
    kit = VoiceKit()
    seen = Observed(kit)
    human = human_tools()
    host_done = asyncio.Event()

    async def host(name: str, arguments: dict[str, Any]) -> str:
        host_done.set()
        return f"value of {arguments['key']}"

    calls = [
        tool_call("AskUserQuestion", {"question": "Which?"}),
        tool_call("lookup", {"key": "a"}),
        tool_call("lookup", {"key": "b"}),
    ]
    provider = MockAIProvider([AIResponse(tool_calls=calls), AIResponse(text="end")])
    ai = AIChannel(
        "agent", provider=provider, tool_handler=host, human_input_handler=human, tools=[LOOKUP]
    )
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("go"))
        await seen.until(lambda: len(seen.reports) == 2 and seen.requests)
        assert {r.tool_name for r in seen.reports} == {"lookup"}
        assert len(provider.contexts) == 1  # the round waits for the question
        human.handler.resolve(seen.requests[0].pending_id, "the first")
        assert await turn == "end"
    results = [m for m in provider.contexts[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in results] == [c.id for c in calls]
    assert [m.content for m in results] == ["the first", "value of a", "value of b"]


async def test_cancelled_turn_withdraws_its_question() -> None:
    kit = VoiceKit()
    seen = Observed(kit)
    human = human_tools()
    ai = AIChannel(
        "agent",
        provider=MockAIProvider(
            [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})])]
        ),
        human_input_handler=human,
    )
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("hi"))
        await seen.until(lambda: seen.requests)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert not human.handler.resolve(seen.requests[0].pending_id, "too late")
        await seen.until(lambda: seen.reports)
        assert await ai.respond("next") == ""  # the script is over: an empty answer
    (report,) = seen.reports
    assert report.outcome == "cancelled"
    cut = ai.conversation()[2]  # the cut call keeps a result: the next request stays valid
    assert (cut.role, cut.tool_call_id, cut.is_error) == ("tool", report.tool_call_id, True)
    assert "was cut" in cut.content


async def test_close_settles_open_requests_and_refuses_new_turns() -> None:
    kit = VoiceKit()
    seen = Observed(kit)
    human = human_tools()
    ai = AIChannel(
        "agent",
        provider=MockAIProvider(
            [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})])]
        ),
        human_input_handler=human,
    )
    kit.register_channel(ai)
    turn = asyncio.create_task(ai.respond("hi"))
    await seen.until(lambda: seen.requests)
    await ai.close()
    with pytest.raises(ChannelClosedError, match="closed"):
        await turn
    assert human.handler.pending == {}
    assert not human.handler.resolve(seen.requests[0].pending_id, "late")
    with pytest.raises(ChannelClosedError):
        await ai.respond("again")
    assert ai.channel_id not in kit.channels
    await kit.aclose()
    assert [r.outcome for r in seen.reports] == ["cancelled"]
    assert seen.reports[0].error_detail == "the AI channel closed"


async def test_human_input_timeout_is_the_handlers_own() -> None:
    human = human_tools(timeout=0.05)
    provider = MockAIProvider(
        [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})]), echo_last]
    )
    ai = AIChannel(
        "agent", provider=provider, human_input_handler=human, tool_timeout_seconds=0.01
    )
    reply = await ai.respond("hi")
    assert "timed out after 0.05s" in reply
    await ai.close()


async def test_warnings_for_misplaced_human_input_tools(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="voice_hitl.gate")
    AIChannel(
        "quiet",
        provider=MockAIProvider(),
        human_input_handler=HumanInputToolHandler(
            {"AskUserQuestion", "Never"}, tool_definitions=[ASK]
        ),
    )
    never = [r for r in caplog.records if "'Never'" in r.getMessage()]
    assert len(never) == 1 and "never offers" in never[0].getMessage()
    caplog.clear()
    human = human_tools()
    ai = AIChannel("plain", provider=MockAIProvider(), tool_handler=human)
    ai.tool_handler = human
    hint = [r for r in caplog.records if "human_input_handler=" in r.getMessage()]
    assert len(hint) == 1


async def test_human_input_handler_as_tool_handler_is_a_host_tool() -> None:
    """Served as any host handler: asked on the AI door, without the channel's notifications."""
    kit = VoiceKit()
    seen = Observed(kit)
    human = human_tools()
    opened = asyncio.Event()
    human.handler.add_observer(lambda event: opened.set() if event.type == "opened" else None)
    provider = MockAIProvider(
        [AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})]), echo_last]
    )
    ai = AIChannel("plain", provider=provider, tool_handler=human, tools=[ASK])
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("hi"))
        await opened.wait()
        (pending,) = human.handler.pending.values()
        assert pending.channel_id == "plain" and seen.requests == []
        human.handler.resolve(pending.pending_id, "fine")
        assert await turn == "model read: fine"


async def test_human_ask_names_the_door() -> None:
    human = human_tools()
    seen: list[PendingInputEvent] = []

    async def notify(event: PendingInputEvent) -> str | None:
        seen.append(event)
        human.handler.resolve(event.pending_id, "ok")
        return None

    human.handler.set_notifier("", notify)
    answer = await human.ask(
        "AskUserQuestion", {"question": "Q?"}, channel_type=ChannelType.REALTIME_VOICE
    )
    assert answer == "ok" and seen[0].channel_type is ChannelType.REALTIME_VOICE


async def test_bad_max_rounds_is_named() -> None:
    with pytest.raises(ValueError, match="max_rounds"):
        AIChannel("x", provider=MockAIProvider(), max_rounds=0)


async def test_a_provider_returning_the_wrong_type_is_named() -> None:
    from voice_hitl import ProviderError

    def wrong(context: AIContext) -> Any:
        return {"text": "not a response"}

    def wrong_call(context: AIContext) -> AIResponse:
        return AIResponse(tool_calls=[("lookup", {})])  # type: ignore[list-item]

    ai = AIChannel("x", provider=MockAIProvider([wrong, wrong_call]))
    with pytest.raises(ProviderError, match="returned dict, not an AIResponse"):
        await ai.respond("hi")
    with pytest.raises(ProviderError, match="tool call of type tuple"):
        await ai.respond("hi")
    await ai.close()
