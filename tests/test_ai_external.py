"""Runtimes that run their own tools: ExternalToolHandler, served calls, who serves what."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from providers.mock_text import MockAIProvider, tool_call
from voice_hitl import (
    AIChannel,
    AIContext,
    AIResponse,
    AITool,
    ExternalToolHandler,
    HookContext,
    HookResult,
    HookTrigger,
    HumanInputHandler,
    HumanInputRejectedError,
    PendingInputEvent,
    ServedCall,
    ToolCallReport,
    ToolDecision,
    ToolUseEvent,
    VoiceKit,
)

LOOKUP = AITool(
    name="lookup",
    description="Look a key up.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)


class Reports:
    def __init__(self, kit: VoiceKit) -> None:
        self.items: list[ToolCallReport] = []
        self.changed = asyncio.Event()

        @kit.hook(HookTrigger.ON_TOOL_CALL)
        async def report(event: ToolCallReport, ctx: HookContext) -> None:
            self.items.append(event)
            self.changed.set()

    async def until(self, count: int) -> list[ToolCallReport]:
        while len(self.items) < count:
            self.changed.clear()
            await self.changed.wait()
        return self.items


handler = HumanInputHandler()


class SandboxRuntime(ExternalToolHandler):
    """The document's external-runtime example, as written (with its handler at module level)."""

    def __init__(self, channel_id: str) -> None:
        self._channel_id = channel_id
        self.cancelled: list[tuple[str, str]] = []
        self.asked = asyncio.Event()

    async def process_tool_call(
        self, tool_name: str, tool_input: dict[str, Any], *, room_id: str | None = None, **kw: Any
    ) -> ToolDecision:
        if tool_name == "AskUserQuestion":
            pending = await handler.create(
                tool_name,
                tool_input,
                room_id=room_id or "",
                tool_call_id=kw.get("tool_call_id", ""),
                channel_id=self._channel_id,
            )
            self.asked.set()
            try:
                result = await handler.wait(pending.pending_id, timeout=300)
            except HumanInputRejectedError as rejected:
                return ToolDecision(approved=False, reason=f"Rejected: {rejected}")
            return ToolDecision(approved=False, reason=result)
        return ToolDecision(approved=True)

    async def on_tool_cancelled(
        self, tool_name: str, tool_input: dict[str, Any], **kwargs: Any
    ) -> None:
        self.cancelled.append((tool_name, kwargs["tool_call_id"]))
        await super().on_tool_cancelled(tool_name, tool_input, **kwargs)


def only_pending() -> str:
    (pending_id,) = handler.pending
    return pending_id


async def test_external_runtime_example_as_documented() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = SandboxRuntime("sandbox")
    ask = tool_call("AskUserQuestion", {"question": "Deploy to prod?"})
    shell = tool_call("Bash", {"command": "ls"})
    provider = MockAIProvider([AIResponse(tool_calls=[ask, shell]), AIResponse(text="done")])
    ai = AIChannel("sandbox", provider=provider, tool_handler=runtime)
    kit.register_channel(ai)
    kit.attach_human_input("sandbox", handler)
    asked: list[PendingInputEvent] = []

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def notify(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.append(event)

    async with kit:
        turn = asyncio.create_task(ai.respond("ship it", room_id="r1"))
        await runtime.asked.wait()
        assert handler.resolve(only_pending(), '{"answer": "yes"}')
        assert await turn == "done"
    assert asked and asked[0].tool_name == "AskUserQuestion"
    answer, approval = [m for m in provider.contexts[1].messages if m.role == "tool"]
    assert (answer.content, answer.approved, answer.is_error) == ('{"answer": "yes"}', False, True)
    assert (approval.approved, approval.content) == (True, "")
    (report,) = await reports.until(1)  # the approved call belongs to the runtime
    assert (report.tool_name, report.outcome) == ("AskUserQuestion", "refused")
    assert report.result == '{"answer": "yes"}'  # what the model read
    assert runtime.cancelled == []


async def test_turn_cancelled_mid_wait_calls_on_tool_cancelled_once() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = SandboxRuntime("sandbox")
    ask = tool_call("AskUserQuestion", {"question": "Sure?"})
    ai = AIChannel(
        "sandbox", provider=MockAIProvider([AIResponse(tool_calls=[ask])]), tool_handler=runtime
    )
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("go"))
        await runtime.asked.wait()
        pending_id = only_pending()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert not handler.resolve(pending_id, "late")  # a late answer is not taken
        (report,) = await reports.until(1)
    assert runtime.cancelled == [("AskUserQuestion", ask.id)]
    assert report.outcome == "cancelled"


async def test_call_cut_before_the_handler_was_asked() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = SandboxRuntime("sandbox")
    ask = tool_call("AskUserQuestion", {"question": "Sure?"})
    turn: asyncio.Task[str] | None = None

    def cut(context: AIContext) -> AIResponse:
        assert turn is not None
        turn.cancel()  # lands as the round starts, before any call task runs
        return AIResponse(tool_calls=[ask])

    ai = AIChannel("sandbox", provider=MockAIProvider([cut]), tool_handler=runtime)
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("go"))
        with pytest.raises(asyncio.CancelledError):
            await turn
        (report,) = await reports.until(1)
    assert not runtime.asked.is_set()
    assert runtime.cancelled == [("AskUserQuestion", ask.id)]
    assert report.outcome == "cancelled"


async def test_served_call_is_reported_and_never_run() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    ran: list[dict[str, Any]] = []

    async def host(name: str, arguments: dict[str, Any]) -> str:
        ran.append(arguments)
        return "ran here"

    served = tool_call("lookup", {"key": "a"}, served=ServedCall(result="42"))
    failed = tool_call("lookup", {"key": "b"}, served=ServedCall(result="boom", is_error=True))
    faked = tool_call("lookup", {"key": "c", "_result": "pretend"})
    provider = MockAIProvider(
        [AIResponse(tool_calls=[served, failed]), AIResponse(tool_calls=[faked]), AIResponse()]
    )
    ai = AIChannel("agent", provider=provider, tool_handler=host, tools=[LOOKUP])
    kit.register_channel(ai)
    async with kit:
        await ai.respond("go")  # only served calls: the turn ends after the first round
        assert len(provider.contexts) == 1 and ran == []
        await ai.respond("again")
    first, second, third = await reports.until(3)
    assert (first.served, first.outcome, first.result) == (True, "ok", "42")
    assert (second.served, second.outcome, second.error_detail) == (True, "failed", "boom")
    # A ``_result`` key the model writes is an argument: the call goes through the gate.
    assert (third.served, third.outcome, third.result) == (False, "ok", "ran here")
    assert ran == [{"key": "c", "_result": "pretend"}]


async def test_own_tool_goes_through_the_gate_even_with_an_external_handler() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = SandboxRuntime("sandbox")

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def block(event: ToolUseEvent, ctx: HookContext) -> HookResult:
        return HookResult.block("no lookups today")

    call = tool_call("lookup", {"key": "a"})
    provider = MockAIProvider([AIResponse(tool_calls=[call]), AIResponse(text="ok")])
    ai = AIChannel("sandbox", provider=provider, tool_handler=runtime, tools=[LOOKUP])
    kit.register_channel(ai)
    async with kit:
        await ai.respond("go")
    (report,) = await reports.until(1)
    assert (report.outcome, report.result) == ("refused", '{"error": "no lookups today"}')
    assert not runtime.asked.is_set()


class Refusing(ExternalToolHandler):
    def __init__(self) -> None:
        self.refused: list[tuple[str, dict[str, Any]]] = []

    async def process_tool_call(
        self, tool_name: str, tool_input: dict[str, Any], **kwargs: Any
    ) -> ToolDecision:
        if tool_name == "Explode":
            raise RuntimeError("sandbox crashed")
        return ToolDecision(approved=False, reason="policy says no", detail="hook failed closed")

    async def on_tool_refused(
        self, tool_name: str, tool_input: dict[str, Any], reason: str, **kwargs: Any
    ) -> None:
        self.refused.append((reason, kwargs))
        await super().on_tool_refused(tool_name, tool_input, reason, **kwargs)


class RefusingNarrowly(Refusing):
    async def on_tool_refused(  # type: ignore[override]
        self, tool_name: str, tool_input: dict[str, Any], reason: str, *, tool_call_id: str = ""
    ) -> None:
        self.refused.append((reason, {"tool_call_id": tool_call_id}))


async def test_refusals_reach_on_tool_refused_with_detail_only_when_taken() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    wide, narrow = Refusing(), RefusingNarrowly()
    calls = [tool_call("Write", {"path": "x"})]
    for name, runtime in (("wide", wide), ("narrow", narrow)):
        provider = MockAIProvider([AIResponse(tool_calls=calls), AIResponse()])
        kit.register_channel(AIChannel(name, provider=provider, tool_handler=runtime))
    async with kit:
        await kit.channels["wide"].respond("go")  # type: ignore[attr-defined]
        await kit.channels["narrow"].respond("go")  # type: ignore[attr-defined]
        (report,) = await reports.until(1)  # the narrow override does not call super()
    assert wide.refused[0][0] == "policy says no"
    assert wide.refused[0][1]["detail"] == "hook failed closed"
    assert narrow.refused == [("policy says no", {"tool_call_id": calls[0].id})]
    assert (report.channel_id, report.outcome, report.error_detail) == (
        "wide",
        "refused",
        "hook failed closed",
    )


async def test_handler_failure_and_cut_arguments_are_reported_by_the_channel() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = Refusing()
    boom = tool_call("Explode", {})
    cut = tool_call("Write", '{"path": "x"')
    provider = MockAIProvider([AIResponse(tool_calls=[boom, cut]), AIResponse(text="after")])
    ai = AIChannel("agent", provider=provider, tool_handler=runtime)
    kit.register_channel(ai)
    async with kit:
        assert await ai.respond("go") == "after"
        items = await reports.until(2)
    by_id = {r.tool_call_id: r for r in items}
    assert by_id[boom.id].outcome == "failed"
    assert "sandbox crashed" in by_id[boom.id].error_detail
    assert by_id[cut.id].outcome == "refused" and "not valid JSON" in by_id[cut.id].result
    assert runtime.refused == []


async def test_create_detached_and_release() -> None:
    local = HumanInputHandler()
    pending = await local.create_detached("AskUserQuestion", {"question": "Q?"}, room_id="r")
    assert pending.detached
    assert local.resolve(pending.pending_id, "carried back by the runtime")
    assert local.release(pending.pending_id)
    unanswered = await local.create_detached("AskUserQuestion", {"question": "Q?"}, room_id="r")
    assert local.release(unanswered.pending_id) and local.pending == {}


class Twice(SandboxRuntime):
    """An override that calls the default twice: the call is still reported once."""

    async def on_tool_cancelled(
        self, tool_name: str, tool_input: dict[str, Any], **kwargs: Any
    ) -> None:
        await super().on_tool_cancelled(tool_name, tool_input, **kwargs)
        await ExternalToolHandler.on_tool_cancelled(self, tool_name, tool_input, **kwargs)


async def test_the_default_report_is_made_once() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = Twice("sandbox")
    first, second = (tool_call("AskUserQuestion", {"question": q}) for q in ("A?", "B?"))
    provider = MockAIProvider([AIResponse(tool_calls=[first, second])])
    ai = AIChannel("sandbox", provider=provider, tool_handler=runtime)
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("go"))
        await runtime.asked.wait()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        await kit.hooks.drain()
    expected = [("AskUserQuestion", first.id), ("AskUserQuestion", second.id)]
    assert sorted(runtime.cancelled) == sorted(expected)  # each call told once
    assert sorted(r.tool_call_id for r in reports.items) == sorted([first.id, second.id])


async def test_a_cut_calls_report_survives_the_kit_closing_at_once() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    runtime = SandboxRuntime("sandbox")
    ask = tool_call("AskUserQuestion", {"question": "Sure?"})
    ai = AIChannel(
        "sandbox", provider=MockAIProvider([AIResponse(tool_calls=[ask])]), tool_handler=runtime
    )
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("go"))
        await runtime.asked.wait()
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
    assert [r.outcome for r in reports.items] == ["cancelled"]
