"""The seed's text-door contract: PolicyExternalToolHandler failing closed, human-input tools
declared in a channel's ``tools=``, and ON_USER_INPUT_REQUIRED from a runtime's own handler."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from test_ai_channel import ASK
from test_ai_external import Reports

from providers.mock_text import MockAIProvider, tool_call
from voice_hitl import (
    AIChannel,
    AIResponse,
    AITool,
    ExternalToolHandler,
    HookContext,
    HookResult,
    HookTrigger,
    HumanInputHandler,
    HumanInputRejectedError,
    HumanInputToolHandler,
    PendingInputEvent,
    PolicyExternalToolHandler,
    ProviderError,
    ToolCallReport,
    ToolDecision,
    ToolUseEvent,
    VoiceKit,
)


class Recording(PolicyExternalToolHandler):
    """The policy handler, recording what reaches on_tool_refused (written with **kwargs)."""

    def __init__(self) -> None:
        self.refused: list[tuple[str, str, dict[str, Any]]] = []

    async def on_tool_refused(
        self, tool_name: str, tool_input: dict[str, Any], reason: str, **kwargs: Any
    ) -> None:
        self.refused.append((tool_name, reason, kwargs))
        await super().on_tool_refused(tool_name, tool_input, reason, **kwargs)


async def run_turn(
    kit: VoiceKit, runtime: ExternalToolHandler, *calls: Any, register: bool = True
) -> tuple[MockAIProvider, AIChannel]:
    provider = MockAIProvider([AIResponse(tool_calls=list(calls)), AIResponse(text="done")])
    ai = AIChannel("sandbox", provider=provider, tool_handler=runtime)
    if register:
        kit.register_channel(ai)
    assert await ai.respond("go", room_id="r", author_id="alice") == "done"
    if not register:
        await ai.close()
    return provider, ai


def tool_messages(provider: MockAIProvider) -> dict[str, Any]:
    return {m.tool_name: m for m in provider.contexts[1].messages if m.role == "tool"}


async def test_policy_handler_applies_the_hooks_to_the_runtimes_calls() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    seen: list[ToolUseEvent] = []

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def policy(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        seen.append(event)
        if event.tool_name == "Bash":
            return HookResult.block("no shell in this sandbox")
        return None

    runtime = Recording()
    read, bash = tool_call("Read", {"path": "a"}), tool_call("Bash", {"command": "rm -rf /"})
    async with kit:
        provider, _ = await run_turn(kit, runtime, read, bash)
        (report,) = await reports.until(1)
    messages = tool_messages(provider)
    assert messages["Read"].approved is True  # the runtime runs it
    assert messages["Bash"].approved is False
    assert messages["Bash"].content == '{"error": "no shell in this sandbox"}'
    assert [(e.tool_name, e.actor_id, e.room_id, e.door) for e in seen] == [
        ("Read", "alice", "r", "ai"),
        ("Bash", "alice", "r", "ai"),
    ]
    assert [(name, kwargs["detail"]) for name, _, kwargs in runtime.refused] == [("Bash", "")]
    assert (report.tool_name, report.outcome, report.error_detail) == ("Bash", "refused", "")


def _raises(event: ToolUseEvent, ctx: HookContext) -> HookResult:
    raise RuntimeError("policy store unreachable")


async def _overruns(event: ToolUseEvent, ctx: HookContext) -> HookResult:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def _invalid(event: ToolUseEvent, ctx: HookContext) -> Any:
    return "allow"  # not a HookResult


async def _cancels_itself(event: ToolUseEvent, ctx: HookContext) -> HookResult:
    raise asyncio.CancelledError


async def _rewrites(event: ToolUseEvent, ctx: HookContext) -> HookResult:
    return HookResult.modify(arguments={"command": "ls"})


@pytest.mark.parametrize(
    ("hook", "detail"),
    [
        (_raises, "raised RuntimeError: policy store unreachable"),
        (_overruns, "overran its 0.2s budget"),
        (_invalid, "returned str, not a HookResult or None"),
        (_cancels_itself, "raised CancelledError"),
        (_rewrites, "replaced the arguments of tool 'Bash'"),
    ],
    ids=["raises", "overruns", "invalid", "cancels-itself", "rewrites"],
)
async def test_a_hook_that_fails_refuses_the_call_with_what_failed_as_detail(
    hook: Any, detail: str
) -> None:
    kit = VoiceKit(hook_timeout=0.2)
    reports = Reports(kit)
    kit.hook(HookTrigger.BEFORE_TOOL_USE)(hook)  # registered fail-open: the handler fails closed
    runtime = Recording()
    async with kit:
        provider, _ = await run_turn(kit, runtime, tool_call("Bash", {"command": "ls -l"}))
        (report,) = await reports.until(1)
    message = tool_messages(provider)["Bash"]
    assert message.approved is False
    assert message.content == '{"error": "Tool \'Bash\' was refused: its policy check failed"}'
    ((name, reason, kwargs),) = runtime.refused
    assert name == "Bash" and detail in kwargs["detail"]
    assert detail not in reason  # the model reads that it failed, not what failed
    assert (report.outcome, report.result) == ("refused", message.content)
    assert detail in report.error_detail


async def test_a_hook_that_keeps_the_arguments_allows_the_call() -> None:
    kit = VoiceKit()

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def same(event: ToolUseEvent, ctx: HookContext) -> HookResult:
        return HookResult.modify(arguments=dict(event.arguments), risk="high")

    async with kit:
        provider, _ = await run_turn(kit, Recording(), tool_call("Read", {"path": "a"}))
    assert tool_messages(provider)["Read"].approved is True


async def test_without_a_kit_or_a_channel_the_policy_handler_refuses() -> None:
    runtime = Recording()
    provider, _ = await run_turn(VoiceKit(), runtime, tool_call("Read", {}), register=False)
    assert tool_messages(provider)["Read"].approved is False
    ((_, _, kwargs),) = runtime.refused
    assert "not registered with a VoiceKit (kit.register_channel(channel))" in kwargs["detail"]
    outside = await PolicyExternalToolHandler().process_tool_call("Read", {}, room_id="r")
    assert not outside.approved and "outside an AIChannel's tool loop" in outside.detail


async def test_an_unregistered_channel_never_approves_a_plain_runtimes_call() -> None:
    # The plain handler approves everything; the gate's approval step must still refuse,
    # since no kit's policy can reach a channel that was never registered.
    provider, _ = await run_turn(
        VoiceKit(), ExternalToolHandler(), tool_call("Deploy", {"env": "prod"}), register=False
    )
    message = tool_messages(provider)["Deploy"]
    assert message.approved is False
    assert "kit.register_channel" in message.content


@pytest.mark.parametrize("policy_handler", [True, False], ids=["policy-handler", "plain-handler"])
async def test_a_tool_that_needs_approval_is_not_approved_unasked(policy_handler: bool) -> None:
    kit = VoiceKit()
    kit.require_approval("Deploy")
    asked: list[PendingInputEvent] = []
    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def say_yes(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.append(event)
        human.handler.resolve(event.pending_id, '{"answer": true}')

    # The default ExternalToolHandler approves every call: the door still asks first.
    runtime = Recording() if policy_handler else ExternalToolHandler()
    deploy = tool_call("Deploy", {"env": "prod"})
    provider = MockAIProvider([AIResponse(tool_calls=[deploy]), AIResponse(text="done")])
    bare = AIChannel("bare", provider=provider, tool_handler=runtime)  # nobody to ask
    kit.register_channel(bare)
    provider2 = MockAIProvider([AIResponse(tool_calls=[deploy]), AIResponse(text="done")])
    asking = AIChannel(
        "asking", provider=provider2, tool_handler=runtime, human_input_handler=human
    )
    kit.register_channel(asking)
    async with kit:
        await bare.respond("ship", room_id="r")
        await asking.respond("ship", room_id="r", author_id="alice")
    assert tool_messages(provider)["Deploy"].approved is False
    assert "no human-input handler to ask" in tool_messages(provider)["Deploy"].content
    assert tool_messages(provider2)["Deploy"].approved is True  # after the person's yes
    (event,) = asked
    assert event.actor_id == "alice" and event.context["approval"]["tool"] == "Deploy"


# -- human-input tools declared in tools= ---------------------------------------------------


async def test_human_input_tool_declared_in_tools_is_offered_once_and_served(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pytest.importorskip("openai")
    from providers.openai_text import OpenAIResponsesProvider, ResponsesTestServer

    kit = VoiceKit()
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=30)  # no definition of its own

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def answer(event: PendingInputEvent, ctx: HookContext) -> None:
        human.handler.resolve(event.pending_id, "blue")

    async with ResponsesTestServer() as server:
        provider = OpenAIResponsesProvider("m", api_key="test", base_url=server.url, max_retries=0)
        with caplog.at_level(logging.WARNING):
            ai = AIChannel("agent", provider=provider, tools=[ASK], human_input_handler=human)
        assert "never offers it" not in caplog.text
        kit.register_channel(ai)
        (call_id,) = server.reply_function_calls(("AskUserQuestion", '{"question": "Colour?"}'))
        server.reply_text("blue it is")
        async with kit:
            assert await ai.respond("pick") == "blue it is"
        await provider.aclose()
    assert server.rejected == []
    for request in server.requests:
        names = [tool["name"] for tool in request.body["tools"]]
        assert names == ["AskUserQuestion"]  # offered once, in every request
    outputs = [
        i for i in server.requests[1].body["input"] if i.get("type") == "function_call_output"
    ]
    assert outputs == [{"type": "function_call_output", "call_id": call_id, "output": "blue"}]


async def test_the_same_definition_in_both_places_is_offered_once_another_is_refused() -> None:
    pytest.importorskip("anthropic")
    from providers.anthropic import AnthropicAIProvider, AnthropicTestServer

    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    async with AnthropicTestServer() as server:
        provider = AnthropicAIProvider("m", api_key="test", base_url=server.url, max_retries=0)
        ai = AIChannel("agent", provider=provider, tools=[ASK], human_input_handler=human)
        server.reply_text("hi")
        assert await ai.respond("hello") == "hi"
        await ai.close()
        await provider.aclose()
    assert [t["name"] for t in server.requests[0].body["tools"]] == ["AskUserQuestion"]
    other = AITool(name="AskUserQuestion", description="Something else.")
    with pytest.raises(ValueError, match="another definition than its tool_definitions"):
        AIChannel("agent", provider=MockAIProvider(), tools=[other], human_input_handler=human)


# -- ON_USER_INPUT_REQUIRED from a runtime's own handler -------------------------------------


class SandboxRuntime(ExternalToolHandler):
    """The seed's external-runtime example, with its own HumanInputHandler."""

    def __init__(self, channel_id: str, handler: HumanInputHandler) -> None:
        self._channel_id = channel_id
        self.handler = handler

    async def process_tool_call(
        self, tool_name: str, tool_input: dict[str, Any], *, room_id: str | None = None, **kw: Any
    ) -> ToolDecision:
        if tool_name == "AskUserQuestion":
            pending = await self.handler.create(
                tool_name,
                tool_input,
                room_id=room_id or "",
                tool_call_id=kw.get("tool_call_id", ""),
                channel_id=self._channel_id,
            )
            try:
                result = await self.handler.wait(pending.pending_id, timeout=300)
            except HumanInputRejectedError as rejected:
                return ToolDecision(approved=False, reason=f"Rejected: {rejected}")
            return ToolDecision(approved=False, reason=result)
        return ToolDecision(approved=True)


@pytest.mark.parametrize("attached", [False, True], ids=["no-attach-step", "attached-too"])
async def test_a_runtimes_own_handler_fires_on_user_input_required(attached: bool) -> None:
    kit = VoiceKit()
    handler = HumanInputHandler()
    runtime = SandboxRuntime("sandbox", handler)
    asked: list[PendingInputEvent] = []

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def notify(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.append(event)
        assert ctx.channel_id == "sandbox"
        handler.resolve(event.pending_id, '{"answer": "yes"}')

    if attached:  # the old extra step still works, and notifies once
        kit.attach_human_input("sandbox", handler)
    ask = tool_call("AskUserQuestion", {"question": "Deploy?"})
    async with kit:
        provider, _ = await run_turn(kit, runtime, ask)
    (event,) = asked
    assert (event.tool_name, event.actor_id, event.room_id) == ("AskUserQuestion", "alice", "r")
    assert tool_messages(provider)["AskUserQuestion"].content == '{"answer": "yes"}'


async def test_a_hook_denial_rejects_a_runtimes_request() -> None:
    kit = VoiceKit()
    runtime = SandboxRuntime("sandbox", HumanInputHandler())

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def deny(event: PendingInputEvent, ctx: HookContext) -> HookResult:
        return HookResult.block("nobody on shift")

    async with kit:
        provider, _ = await run_turn(kit, runtime, tool_call("AskUserQuestion", {"question": "?"}))
    content = tool_messages(provider)["AskUserQuestion"].content
    assert content.startswith("Rejected:") and "nobody on shift" in content


# -- bad input -------------------------------------------------------------------------------


class SaysNoAsText(ExternalToolHandler):
    async def process_tool_call(
        self, tool_name: str, tool_input: dict[str, Any], **kwargs: Any
    ) -> ToolDecision:
        return ToolDecision(approved="no")  # type: ignore[arg-type]


async def test_a_decision_that_is_not_a_bool_never_approves() -> None:
    with pytest.raises(TypeError, match="approved must be True or False, got 'no'"):
        ToolDecision(approved="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reason must be str"):
        ToolDecision(approved=False, reason=None)  # type: ignore[arg-type]
    kit = VoiceKit()
    reports = Reports(kit)
    async with kit:
        provider, _ = await run_turn(kit, SaysNoAsText(), tool_call("Bash", {}))
        (report,) = await reports.until(1)
    message = tool_messages(provider)["Bash"]
    assert message.approved is None and message.is_error  # failed: the runtime does not run it
    assert report.outcome == "failed" and "approved must be True or False" in report.error_detail


def test_the_channel_checks_what_it_is_given() -> None:
    with pytest.raises(TypeError, match="provider must be an AIProvider"):
        AIChannel("a", provider=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="system_prompt must be str"):
        AIChannel("a", provider=MockAIProvider(), system_prompt=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tool_handler must be"):
        AIChannel("a", provider=MockAIProvider(), tool_handler="tools")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="human_input_handler must be a HumanInputToolHandler"):
        AIChannel("a", provider=MockAIProvider(), human_input_handler=HumanInputHandler())  # type: ignore[arg-type]


class NotAsync:
    def generate(self, context: Any) -> AIResponse:  # forgot async
        return AIResponse(text="hi")


async def test_a_provider_whose_generate_is_not_async_is_named() -> None:
    ai = AIChannel("a", provider=NotAsync())  # type: ignore[arg-type]
    with pytest.raises(ProviderError, match="can't be used in 'await' expression") as failed:
        await ai.respond("hi")
    assert failed.value.code == "provider_failed"
    await ai.close()


class Tracking(ExternalToolHandler):
    def __init__(self) -> None:
        self.cancelled: list[str] = []

    async def on_tool_cancelled(
        self, tool_name: str, tool_input: dict[str, Any], **kwargs: Any
    ) -> None:
        self.cancelled.append(tool_name)
        await super().on_tool_cancelled(tool_name, tool_input, **kwargs)


async def test_a_turn_cut_while_the_approval_waits_tells_the_handler() -> None:
    kit = VoiceKit()
    reports = Reports(kit)
    kit.require_approval("Deploy")
    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    opened = asyncio.Event()

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def shown(event: PendingInputEvent, ctx: HookContext) -> None:
        opened.set()

    runtime = Tracking()
    provider = MockAIProvider([AIResponse(tool_calls=[tool_call("Deploy", {"env": "prod"})])])
    ai = AIChannel("c", provider=provider, tool_handler=runtime, human_input_handler=human)
    kit.register_channel(ai)
    async with kit:
        turn = asyncio.create_task(ai.respond("ship"))
        await opened.wait()
        (pending_id,) = human.handler.pending
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert not human.handler.resolve(pending_id, '{"answer": true}')  # withdrawn
        (report,) = await reports.until(1)
    assert runtime.cancelled == ["Deploy"]
    assert (report.tool_name, report.outcome) == ("Deploy", "cancelled")


async def test_hook_order_and_a_turn_without_an_author() -> None:
    kit = VoiceKit()
    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    order: list[tuple[str, Any]] = []

    @kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def before(event: ToolUseEvent, ctx: HookContext) -> None:
        order.append(("before_tool_use", event.actor_id))

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def asked(event: PendingInputEvent, ctx: HookContext) -> None:
        order.append(("on_user_input_required", event.actor_id))
        human.handler.resolve(event.pending_id, "fine")

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def done(event: ToolCallReport, ctx: HookContext) -> None:
        order.append(("on_tool_call", event.actor_id))

    ask = tool_call("AskUserQuestion", {"question": "?"})
    provider = MockAIProvider([AIResponse(tool_calls=[ask]), AIResponse(text="ok")])
    ai = AIChannel("agent", provider=provider, human_input_handler=human)
    kit.register_channel(ai)
    async with kit:
        assert await ai.respond("a scheduled run, nobody wrote it") == "ok"
    assert order == [
        ("before_tool_use", None),
        ("on_user_input_required", None),
        ("on_tool_call", None),
    ]
