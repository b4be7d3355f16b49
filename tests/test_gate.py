"""ToolGate: toolset, schema validation, BEFORE_TOOL_USE, serving order and bounds, reports."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from voice_hitl import (
    AITool,
    ChannelType,
    Door,
    HookContext,
    HookExecution,
    HookResult,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolApprovals,
    ToolCall,
    ToolCallReport,
    ToolFailedError,
    ToolGate,
    ToolRefusedError,
    ToolUseEvent,
    VoiceKit,
    current_tool_context,
)
from voice_hitl.testing import RequestQueue

ASK = AITool(
    name="AskUserQuestion",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
        "additionalProperties": False,
    },
)
TRANSFER = AITool(
    name="transfer",
    parameters={
        "type": "object",
        "properties": {"amount": {"type": "integer", "minimum": 1}},
        "required": ["amount"],
    },
)


class Host:
    """A host tool handler that records calls and can be told to hang."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.hang = False
        self.contexts: list[Any] = []

    async def __call__(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls.append((name, arguments))
        self.contexts.append(current_tool_context())
        if self.hang:
            await asyncio.Event().wait()
        if name == "explode":
            raise KeyError("secret internals")
        if name == "refuse":
            raise ToolRefusedError("not today")
        if name == "fail":
            raise ToolFailedError("backend down")
        return f"done {arguments}"


class Reports:
    def __init__(self, kit: VoiceKit) -> None:
        self.items: list[ToolCallReport] = []
        self.arrived = asyncio.Event()

        @kit.hook(HookTrigger.ON_TOOL_CALL)
        async def observe(report: ToolCallReport, ctx: HookContext) -> None:
            self.items.append(report)
            self.arrived.set()


def make_gate(
    kit: VoiceKit | None = None, *, timeout: float = 300.0, bound: float = 10.0, **kw: Any
) -> tuple[ToolGate, Host, HumanInputToolHandler]:
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=timeout, tool_definitions=[ASK])
    host = Host()
    tools = kw.pop("tools", [TRANSFER])
    gate = ToolGate(
        "voice",
        ChannelType.REALTIME_VOICE,
        tools=tools,
        tool_handler=host,
        human_input=human,
        tool_timeout_seconds=bound,
    )
    if kit is not None:
        gate.kit = kit
        kit.attach_human_input("voice", human.handler)
    else:
        gate.approvals = ToolApprovals()  # no kit: this gate declares that none needs a yes
    return gate, host, human


async def test_tool_not_in_turn_is_refused_before_any_handler() -> None:
    gate, host, _ = make_gate()
    result = await gate.call(ToolCall("weather", "{}"))
    assert result.outcome == "failed"
    assert json.loads(result.text) == {
        "error": "Tool 'weather' is not available in the current turn."
    }
    assert host.calls == []


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ('{"amount": "ten"}', "field 'amount'"),
        ('{"amount": 0}', "field 'amount'"),
        ("{}", "'amount' is a required property"),
        ('{"amount": 1', "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
async def test_schema_errors_name_the_field_and_nothing_runs(arguments: str, needle: str) -> None:
    gate, host, _ = make_gate()
    result = await gate.call(ToolCall("transfer", arguments))
    assert result.outcome == "failed"
    message = json.loads(result.text)["error"]
    assert "Invalid arguments for tool 'transfer'" in message
    assert needle in message
    assert host.calls == []


async def test_host_tool_runs_with_context() -> None:
    gate, host, _ = make_gate()
    result = await gate.call(
        ToolCall("transfer", '{"amount": 5}', "call_1", "room_a", "bob", Door.PROVIDER)
    )
    assert result.outcome == "ok" and result.text == "done {'amount': 5}"
    ctx = host.contexts[0]
    assert (ctx.room_id, ctx.tool_call_id, ctx.channel_id, ctx.actor_id) == (
        "room_a",
        "call_1",
        "voice",
        "bob",
    )
    assert ctx.channel_type is ChannelType.REALTIME_VOICE


@pytest.mark.parametrize(
    ("name", "outcome", "message"),
    [
        ("explode", "failed", "Tool 'explode' failed (KeyError)"),
        ("refuse", "refused", "not today"),
        ("fail", "failed", "backend down"),
    ],
)
async def test_host_errors_map_to_outcomes(name: str, outcome: str, message: str) -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    gate, _, _ = make_gate(kit, tools=[AITool(name=name)])
    result = await gate.call(ToolCall(name, {}))
    assert result.outcome == outcome
    assert json.loads(result.text) == {"error": message}
    assert "secret internals" not in result.text
    (report,) = reports.items
    assert report.outcome == outcome
    if name == "explode":
        assert "secret internals" in report.error_detail
    await kit.aclose()


@pytest.mark.looptime
async def test_host_tool_bounded_by_channel_timeout() -> None:
    gate, host, _ = make_gate(bound=10.0)
    host.hang = True
    loop = asyncio.get_running_loop()
    start = loop.time()
    result = await gate.call(ToolCall("transfer", {"amount": 1}))
    assert result.outcome == "failed"
    assert json.loads(result.text) == {"error": "Tool 'transfer' timed out after 10s"}
    assert loop.time() - start == pytest.approx(10.0, abs=0.01)


@pytest.mark.looptime
async def test_human_input_served_first_under_its_own_timeout() -> None:
    kit = VoiceKit()
    gate, host, human = make_gate(kit, timeout=30.0, bound=10.0)
    loop = asyncio.get_running_loop()
    start = loop.time()

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def answer_after_12s(event: PendingInputEvent, ctx: HookContext) -> None:
        await asyncio.sleep(12)  # a person who takes 12 s (virtual time)
        human.handler.resolve(event.pending_id, "took my time")

    result = await gate.call(ToolCall("AskUserQuestion", {"question": "?"}))
    assert result.outcome == "ok" and result.text == "took my time"
    assert loop.time() - start == pytest.approx(12.0, abs=0.01)
    assert host.calls == []
    await kit.aclose()


@pytest.mark.looptime
async def test_human_input_timeout_text() -> None:
    gate, _, _ = make_gate(timeout=30.0)
    result = await gate.call(ToolCall("AskUserQuestion", {"question": "?"}))
    assert result.outcome == "failed"
    assert json.loads(result.text) == {
        "error": "Human input timed out after 30s for tool 'AskUserQuestion'"
    }


async def test_replacing_tool_handler_leaves_human_input_served() -> None:
    gate, _, human = make_gate()
    replacement = Host()
    gate.tool_handler = replacement

    requests = RequestQueue(human.handler, "voice")

    async def answer() -> None:
        event = await requests.next()
        human.handler.resolve(event.pending_id, "yes")

    answering = asyncio.create_task(answer())
    result = await gate.call(ToolCall("AskUserQuestion", {"question": "?"}))
    await answering
    assert result.text == "yes"
    assert replacement.calls == []


async def test_before_tool_use_block_is_refusal() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    gate, host, _ = make_gate(kit)

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def no_transfers(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        assert ctx.channel_type is ChannelType.REALTIME_VOICE
        return HookResult.block("transfers are paused") if event.tool_name == "transfer" else None

    result = await gate.call(ToolCall("transfer", {"amount": 3}, "c1", "r1"))
    assert result.outcome == "refused"
    assert json.loads(result.text) == {"error": "transfers are paused"}
    assert host.calls == []
    assert [r.outcome for r in reports.items] == ["refused"]
    await kit.aclose()


async def test_before_tool_use_rewrite_is_validated_again() -> None:
    kit = VoiceKit()
    gate, host, _ = make_gate(kit)
    replacement: dict[str, Any] = {"amount": 7}

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, priority=1)
    async def rewrite(event: ToolUseEvent, ctx: HookContext) -> HookResult:
        return HookResult.modify(arguments=replacement)

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, priority=2)
    async def sees_rewrite(event: ToolUseEvent, ctx: HookContext) -> None:
        assert event.arguments == replacement

    ok = await gate.call(ToolCall("transfer", {"amount": 1}))
    assert ok.outcome == "ok" and host.calls[-1] == ("transfer", {"amount": 7})
    replacement = {"amount": "lots"}
    bad = await gate.call(ToolCall("transfer", {"amount": 1}))
    assert bad.outcome == "failed" and "field 'amount'" in bad.text
    assert len(host.calls) == 1
    await kit.aclose()


@pytest.mark.looptime
async def test_hook_errors_fail_open_unless_fail_closed(caplog: pytest.LogCaptureFixture) -> None:
    kit = VoiceKit(hook_timeout=30.0)
    gate, host, _ = make_gate(kit)

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def broken(event: ToolUseEvent, ctx: HookContext) -> None:
        raise ValueError("oops")

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, priority=1)
    async def slow(event: ToolUseEvent, ctx: HookContext) -> None:
        await asyncio.sleep(31)

    with caplog.at_level(logging.WARNING):
        assert (await gate.call(ToolCall("transfer", {"amount": 2}))).outcome == "ok"
    assert "raised ValueError: oops; failing open" in caplog.text
    assert "overran its 30s budget" in caplog.text

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, priority=2, fail_closed=True)
    async def strict(event: ToolUseEvent, ctx: HookContext) -> None:
        raise ValueError("policy store down")

    result = await gate.call(ToolCall("transfer", {"amount": 2}))
    assert result.outcome == "refused"
    assert "policy store down" in result.error_detail
    assert len(host.calls) == 1
    await kit.aclose()


async def test_hooks_limited_to_channel_types_and_priority_order() -> None:
    kit = VoiceKit()
    gate, _, _ = make_gate(kit)
    order: list[str] = []

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, priority=5)
    async def later(event: ToolUseEvent, ctx: HookContext) -> None:
        order.append("later")

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, priority=-1)
    async def first(event: ToolUseEvent, ctx: HookContext) -> None:
        order.append("first")

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, channel_types=[ChannelType.CONFERENCE])
    async def conference_only(event: ToolUseEvent, ctx: HookContext) -> None:
        order.append("conference")

    await gate.call(ToolCall("transfer", {"amount": 2}))
    assert order == ["first", "later"]
    await kit.aclose()


async def test_async_hooks_observe_without_blocking() -> None:
    kit = VoiceKit()
    gate, _, _ = make_gate(kit)
    seen = asyncio.Event()

    @kit.hook(HookTrigger.BEFORE_TOOL_USE, execution=HookExecution.ASYNC)
    async def watcher(event: ToolUseEvent, ctx: HookContext) -> HookResult:
        seen.set()
        return HookResult.block("ignored: async hooks only observe")

    result = await gate.call(ToolCall("transfer", {"amount": 2}))
    assert result.outcome == "ok"
    await seen.wait()
    await kit.aclose()


async def test_on_user_input_required_block_rejects_request() -> None:
    kit = VoiceKit()
    gate, _, _ = make_gate(kit)

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def deny(event: PendingInputEvent, ctx: HookContext) -> HookResult:
        assert ctx.channel_type is ChannelType.REALTIME_VOICE
        return HookResult.block("quiet hours")

    result = await gate.call(ToolCall("AskUserQuestion", {"question": "?"}))
    assert result.outcome == "refused"
    assert json.loads(result.text) == {
        "error": "Human input rejected: Denied by ON_USER_INPUT_REQUIRED hook: quiet hours"
    }
    await kit.aclose()


async def test_cancelled_call_is_reported_with_hint() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    gate, _, human = make_gate(kit)
    asked = asyncio.Event()

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def on_ask(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.set()

    call = asyncio.create_task(gate.call(ToolCall("AskUserQuestion", {"question": "?"}, "c7")))
    await asked.wait()
    (pending_id,) = human.handler.pending
    call.cancel("session ended")
    with pytest.raises(asyncio.CancelledError):
        await call
    await reports.arrived.wait()
    assert human.handler.resolve(pending_id, "late") is False
    (report,) = reports.items
    assert report.outcome == "cancelled" and report.error_detail == "session ended"
    assert report.arguments == {"question": "?"}
    await kit.aclose()


def test_name_collision_is_value_error() -> None:
    with pytest.raises(ValueError, match="reuses a name"):
        make_gate(tools=[AITool(name="AskUserQuestion")])


def test_warnings_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    human = HumanInputToolHandler({"AskUserQuestion", "ConfirmAction"}, tool_definitions=[ASK])
    with caplog.at_level(logging.WARNING):
        gate = ToolGate("v", ChannelType.REALTIME_VOICE, human_input=human)
    assert caplog.text.count("'ConfirmAction' but never offers it") == 1
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        gate.tool_handler = human
        gate.tool_handler = human
    assert caplog.text.count("Pass it as human_input_handler=") == 1
