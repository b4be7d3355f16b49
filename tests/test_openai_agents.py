"""The OpenAI Agents SDK's own realtime session, on the OpenAI Realtime test server (no key,
no network), with voice-hitl answering its approvals and serving its human-input tools.

The SDK is pointed at the server through its documented ``model_config``: ``url`` (the
websocket URL, default ``wss://api.openai.com/v1/realtime?model=...``) and ``headers`` (which
replace the API key's ``Authorization`` header).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner, RealtimeSession

from providers.openai_agents import AgentsRealtimeBridge
from providers.openai_realtime_testing import RealtimeTestServer, ServerConnection
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    ApprovalPolicy,
    ApprovalSetupError,
    HookContext,
    HookResult,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolUseEvent,
    VoiceKit,
    VoiceResponder,
)


@dataclass
class Bank:
    moved: list[tuple[int, str]] = field(default_factory=list)

    def tool(self) -> Any:
        @function_tool(needs_approval=True)
        async def transfer(amount: int, to: str) -> str:
            """Move money between the caller's accounts."""
            self.moved.append((amount, to))
            return f"moved {amount} to {to}"

        return transfer


@dataclass
class AgentsRig:
    kit: VoiceKit
    bridge: AgentsRealtimeBridge
    session: RealtimeSession
    conn: ServerConnection
    bank: Bank
    requests: asyncio.Queue[PendingInputEvent]
    human: HumanInputToolHandler

    async def question(self) -> str:
        """The next question the bridge had the model speak."""
        event = await self.conn.expect(
            "response.create",
            lambda e: "Say exactly this" in e.get("response", {}).get("instructions", ""),
        )
        return str(event["response"]["instructions"].rsplit("\n", 1)[-1])


@pytest.fixture
async def rig() -> AsyncIterator[AgentsRig]:
    kit = VoiceKit()
    requests: asyncio.Queue[PendingInputEvent] = asyncio.Queue()

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def seen(event: PendingInputEvent, ctx: HookContext) -> None:
        requests.put_nowait(event)

    human = HumanInputToolHandler(
        {"AskUserQuestion"}, timeout=60, tool_definitions=[ASK_USER_QUESTION]
    )
    bank = Bank()
    transfer = bank.tool()
    bridge = AgentsRealtimeBridge(human=human, tools=[transfer], room_id="call-1")
    kit.register_channel(bridge)
    responder = VoiceResponder(kit)
    responder.serve(bridge)
    agent = RealtimeAgent(
        name="bank", instructions="You are a bank.", tools=[transfer, *bridge.function_tools()]
    )
    async with RealtimeTestServer(api_key="sk-test") as server:
        session = await RealtimeRunner(agent).run(
            model_config={
                "url": f"{server.url}?model=gpt-realtime",
                "headers": {"Authorization": "Bearer sk-test"},
            }
        )
        async with session:
            bridge.attach(session)
            conn = await server.next_connection()

            async def pump() -> None:
                async for event in session:
                    await bridge.on_event(event)

            pumping = asyncio.create_task(pump())
            try:
                yield AgentsRig(kit, bridge, session, conn, bank, requests, human)
            finally:
                await responder.aclose()
                await kit.aclose()
                pumping.cancel()
                await asyncio.gather(pumping, return_exceptions=True)
        assert server.invalid == [], "the SDK sent events the server rejected"


async def test_the_caller_confirms_aloud_and_the_sdk_runs_the_tool(rig: AgentsRig) -> None:
    call_id = await rig.conn.function_call("transfer", {"amount": 250, "to": "savings"})
    assert await rig.question() == (
        "Please confirm: Move money between the caller's accounts: amount 250, to savings "
        "(say confirm always to allow it for the rest of the call). To go ahead, say confirm, "
        "or press 1. To stop, say no."
    )
    event = await rig.requests.get()
    assert event.tool_name == CONFIRM_ACTION.name and event.actor_id == "caller"
    assert rig.bank.moved == []
    await rig.conn.transcribe_user("confirm")
    # A transcript alone carries no confidence or audio figures: nothing unmeasured passes, so
    # the challenge is asked once more before the SDK may run the tool.
    assert "confirm" in await rig.question()
    assert rig.bank.moved == []
    await rig.conn.transcribe_user("confirm")
    assert await rig.conn.expect_function_call_output(call_id) == "moved 250 to savings"
    assert rig.bank.moved == [(250, "savings")]


async def test_the_caller_approves_by_keypad(rig: AgentsRig) -> None:
    call_id = await rig.conn.function_call("transfer", {"amount": 40, "to": "rent"})
    await rig.question()
    await rig.conn.dtmf("1")
    assert await rig.conn.expect_function_call_output(call_id) == "moved 40 to rent"
    assert rig.bank.moved == [(40, "rent")]


async def test_a_no_reaches_the_model_and_the_tool_never_runs(rig: AgentsRig) -> None:
    call_id = await rig.conn.function_call("transfer", {"amount": 9, "to": "x"})
    await rig.question()
    await rig.conn.transcribe_user("no")
    output = await rig.conn.expect_function_call_output(call_id)
    assert output == "Tool 'transfer' was not approved: the answer was no"
    assert rig.bank.moved == []


async def test_a_hook_rewrite_is_refused_since_the_sdk_runs_the_original(rig: AgentsRig) -> None:
    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def cap(event: ToolUseEvent, ctx: HookContext) -> HookResult:
        return HookResult.modify(arguments={**event.arguments, "amount": 1})

    call_id = await rig.conn.function_call("transfer", {"amount": 500, "to": "x"})
    assert (await rig.question()).startswith("Please confirm: Move money")
    await rig.conn.dtmf("1")
    output = await rig.conn.expect_function_call_output(call_id)
    assert "its arguments were changed before the approval" in output
    assert rig.bank.moved == []


async def test_human_input_tools_are_sdk_function_tools_settled_on_close(rig: AgentsRig) -> None:
    call_id = await rig.conn.function_call("AskUserQuestion", {"question": "Which account?"})
    event = await rig.requests.get()
    assert event.tool_name == "AskUserQuestion" and event.tool_call_id == call_id
    assert rig.human.handler.resolve(event.pending_id, json.dumps({"answer": "savings"}))
    assert json.loads(await rig.conn.expect_function_call_output(call_id)) == {"answer": "savings"}
    second = await rig.conn.function_call("AskUserQuestion", {"question": "And the amount?"})
    await rig.requests.get()
    await rig.bridge.aclose()
    output = json.loads(await rig.conn.expect_function_call_output(second))
    assert output == {"error": "Tool 'AskUserQuestion' failed (RuntimeError)"}


async def test_confirm_always_answers_the_next_approvals_at_once(rig: AgentsRig) -> None:
    first = await rig.conn.function_call("transfer", {"amount": 5, "to": "a"})
    await rig.question()
    await rig.conn.transcribe_user("confirm always")
    # A transcript alone carries no confidence or audio figures: said twice in a row.
    assert "confirm" in await rig.question()
    await rig.conn.transcribe_user("confirm always")
    assert await rig.conn.expect_function_call_output(first) == "moved 5 to a"
    second = await rig.conn.function_call("transfer", {"amount": 6, "to": "b"})
    assert await rig.conn.expect_function_call_output(second) == "moved 6 to b"
    assert rig.requests.qsize() == 1  # the second call asked nobody
    [grant] = rig.bridge.approvals.grants("call-1")
    assert grant.tool == "transfer"
    await rig.bridge.aclose()
    assert rig.bridge.approvals.grants() == []


# -- issue 45: a tool the SDK would run unasked is refused; the kit's policies reach it ----


def plain_transfer(bank: Bank) -> Any:
    @function_tool
    async def transfer(amount: int, to: str) -> str:
        """Move money between the caller's accounts."""
        bank.moved.append((amount, to))
        return f"moved {amount} to {to}"

    return transfer


def bare_human() -> HumanInputToolHandler:
    return HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK_USER_QUESTION])


def test_a_policy_tool_without_needs_approval_is_refused_at_construction() -> None:
    transfer = plain_transfer(Bank())
    with pytest.raises(ApprovalSetupError, match=r"needs_approval=True"):
        AgentsRealtimeBridge(
            human=bare_human(), tools=[transfer], approvals={"transfer": ApprovalPolicy()}
        )
    # Without a policy naming it, the bridge's default covers only what the SDK pauses.
    AgentsRealtimeBridge(human=bare_human(), tools=[transfer])


async def test_a_kit_policy_over_a_tool_the_sdk_runs_unasked_is_refused_either_order() -> None:
    transfer = plain_transfer(Bank())
    kit = VoiceKit()
    kit.require_approval("transfer")
    with pytest.raises(ApprovalSetupError, match=r"'transfer'.*a policy names it"):
        kit.register_channel(AgentsRealtimeBridge(human=bare_human(), tools=[transfer]))
    other = VoiceKit()
    bridge = AgentsRealtimeBridge(human=bare_human(), tools=[transfer], channel_id="b2")
    other.register_channel(bridge)
    with pytest.raises(ApprovalSetupError, match="a when= rule may pick its calls"):
        other.require_approval(when=lambda tool, args: args.get("amount", 0) > 100)
    assert other.approvals.empty  # refused, not kept
    await bridge.aclose()


def test_named_approvers_on_the_bridge_are_refused() -> None:
    with pytest.raises(ApprovalSetupError, match="cannot tell who is speaking"):
        AgentsRealtimeBridge(
            human=bare_human(),
            tools=[Bank().tool()],
            approvals={"transfer": ApprovalPolicy(approvers=["alice", "bob"], quorum=2)},
        )


async def test_attach_checks_the_sessions_agent_tools() -> None:
    from agents.realtime import OpenAIRealtimeWebSocketModel

    kit = VoiceKit()
    kit.require_approval("transfer")
    bridge = AgentsRealtimeBridge(human=bare_human())  # not told about the agent's tools
    kit.register_channel(bridge)
    agent = RealtimeAgent(name="bank", tools=[plain_transfer(Bank())])
    session = RealtimeSession(OpenAIRealtimeWebSocketModel(), agent, None)
    with pytest.raises(ApprovalSetupError, match="the session's agent"):
        bridge.attach(session)
    asked = RealtimeSession(
        OpenAIRealtimeWebSocketModel(), RealtimeAgent(name="bank", tools=[Bank().tool()]), None
    )
    bridge.attach(asked)
    await kit.aclose()


async def test_a_kit_policy_reaches_the_sdk_session(rig: AgentsRig) -> None:
    rig.kit.require_approval("transfer", operator="supervisor")  # wins over the default
    call_id = await rig.conn.function_call("transfer", {"amount": 70, "to": "x"})
    event = await rig.requests.get()
    assert event.tool_name == CONFIRM_ACTION.name
    assert event.context["addressed"] == ["supervisor"] and rig.bank.moved == []
    assert rig.human.handler.resolve(event.pending_id, '{"answer": true}', by="maria")
    assert await rig.conn.expect_function_call_output(call_id) == "moved 70 to x"
    assert rig.bank.moved == [(70, "x")]


async def test_a_repeated_approval_event_for_an_open_call_is_not_answered(
    rig: AgentsRig,
) -> None:
    call_id = await rig.conn.function_call("transfer", {"amount": 3, "to": "a"})
    await rig.question()
    event = await rig.requests.get()
    await rig.bridge._answer("transfer", call_id, '{"amount": 9000, "to": "b"}')
    assert rig.requests.empty() and rig.bank.moved == []
    await rig.conn.dtmf("1")
    assert await rig.conn.expect_function_call_output(call_id) == "moved 3 to a"
    assert rig.bank.moved == [(3, "a")] and event.tool_call_id == call_id
