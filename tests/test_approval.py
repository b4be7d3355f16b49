"""Approval-gated tools: a regular tool that cannot run without a person's yes, on every door.

The scripted model calls the gated tool without asking first; the gate holds the call, asks a
``ConfirmAction`` through the channel's human-input handler, and runs the tool only after the
yes, with exactly the approved arguments.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from doors import DOORS, LOOKUP, DoorDriver, Observed, QueueBackend, human_tools

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    AITool,
    ApprovalPolicy,
    ApprovalSetupError,
    Escalation,
    HookContext,
    HookResult,
    HookTrigger,
    PendingInputEvent,
    RealtimeVoiceChannel,
    RequestEvent,
    ToolApprovals,
    ToolUseEvent,
    VoiceKit,
    VoiceSession,
    canonical_arguments,
    read_decision,
)
from voice_hitl.journal import Journal, verify_chain

TRANSFER = AITool(
    name="transfer",
    description="Move money between the caller's accounts.",
    parameters={
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    },
)


class RecordingHost:
    """A host tool handler that records each call's arguments as it starts."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.started: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

    async def __call__(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls.append((name, arguments))
        self.started.put_nowait((name, arguments))
        return json.dumps({"done": name, "arguments": arguments})


@dataclass
class ApprovalRig:
    kit: VoiceKit
    voice: RealtimeVoiceChannel
    provider: MockRealtimeProvider
    driver: DoorDriver
    observed: Observed
    host: RecordingHost
    events: list[RequestEvent]

    async def start(self) -> VoiceSession:
        return await self.voice.start_session("room-1", participant_id="caller")

    def answer(self, event: PendingInputEvent, body: dict[str, Any]) -> None:
        human = self.voice.human_input_handler
        assert human is not None
        assert human.handler.resolve(event.pending_id, json.dumps(body), by="caller", via="api")

    def notes(self, name: str) -> list[RequestEvent]:
        return [e for e in self.events if e.type == "noted" and e.note == name]


def approval_rig(door: str = "provider") -> ApprovalRig:
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    backend = QueueBackend() if door == "reasoning" else None
    host = RecordingHost()
    human = human_tools()
    voice = RealtimeVoiceChannel(
        "voice",
        provider=provider,
        tools=[TRANSFER, LOOKUP],
        tool_handler=host,
        human_input_handler=human,
        reasoning_backend=backend,
    )
    kit.register_channel(voice)
    events: list[RequestEvent] = []
    human.handler.add_observer(events.append)
    driver = DoorDriver(door, provider, backend)
    return ApprovalRig(kit, voice, provider, driver, observed, host, events)


@pytest.mark.parametrize("door", DOORS)
async def test_gated_tool_runs_only_after_the_yes_with_the_exact_arguments(door: str) -> None:
    rig = approval_rig(door)
    rig.kit.require_approval("transfer")
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 250, "to": "savings"})
    event = await rig.observed.requests.get()
    assert event.tool_name == "ConfirmAction"
    assert event.arguments["action"].startswith(
        "Move money between the caller's accounts: amount 250"
    )
    assert "to savings" in event.arguments["action"]
    assert event.context["risk"] == "high" and event.actor_id == "caller"
    approved = event.context["approval"]
    assert approved["tool"] == "transfer" and approved["arguments"]["to"] == "savings"
    assert rig.host.calls == [] and not reading.done()
    rig.answer(event, {"answer": True})
    read = await reading
    assert not read.is_error, read.text
    assert rig.host.calls == [("transfer", approved["arguments"])]
    assert rig.host.calls[0][1]["amount"] == 250
    report = await rig.observed.reports.get()
    assert (report.tool_name, report.outcome) == ("transfer", "ok")
    delivered = [e for e in rig.events if e.type == "delivered"]
    assert [e.pending_id for e in delivered] == [event.pending_id]
    await rig.kit.aclose()


async def test_other_arguments_ask_again_and_an_approval_is_used_once() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", allow_always=False)
    session = await rig.start()
    for arguments in ({"amount": 10, "to": "savings"}, {"amount": 9000, "to": "savings"}) * 2:
        reading = rig.driver.call(session, "transfer", arguments)
        event = await rig.observed.requests.get()
        assert event.context["approval"]["arguments"] == arguments
        assert "always" not in event.arguments["action"]
        rig.answer(event, {"answer": True})
        assert not (await reading).is_error
    assert [a for _, a in rig.host.calls] == [
        {"amount": 10, "to": "savings"},
        {"amount": 9000, "to": "savings"},
    ] * 2
    await rig.kit.aclose()


async def test_a_no_reaches_the_model_as_a_refusal_and_the_tool_never_runs() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 250, "to": "savings"})
    rig.answer(await rig.observed.requests.get(), {"answer": False})
    read = await reading
    assert read.is_error
    assert read.json() == {"error": "Tool 'transfer' was not approved: the answer was no"}
    report = await rig.observed.reports.get()
    assert report.outcome == "refused" and rig.host.calls == []
    # A rejection (cancel, a console's reject) reads the same way, with its reason.
    reading = rig.driver.call(session, "transfer", {"amount": 1, "to": "savings"})
    event = await rig.observed.requests.get()
    human = rig.voice.human_input_handler
    assert human is not None and human.handler.reject(event.pending_id, "not on this call")
    assert (await reading).json() == {
        "error": "Tool 'transfer' was not approved: Human input rejected: not on this call"
    }
    assert rig.host.calls == []
    await rig.kit.aclose()


async def test_always_is_remembered_journaled_and_revocable() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", risk="low")
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 5, "to": "savings"})
    event = await rig.observed.requests.get()
    assert event.arguments["action"].endswith(
        "(say confirm always to allow it for the rest of the call)"
    )
    rig.answer(event, {"answer": True, "transcript": "confirm, always", "actor_id": "caller"})
    assert not (await reading).is_error
    [grant] = rig.kit.approvals.grants("room-1")
    assert (grant.tool, grant.by, grant.request_id) == ("transfer", "caller", event.pending_id)
    [granted] = rig.notes("always_granted")
    assert granted.pending_id == event.pending_id
    # Remembered: other arguments run without asking.
    assert not (await rig.driver.call(session, "transfer", {"amount": 7, "to": "x"})).is_error
    assert rig.observed.requests.empty()
    assert [a["amount"] for _, a in rig.host.calls] == [5, 7]
    assert rig.kit.approvals.revoke("transfer", room_id="room-1", by="caller")
    assert rig.kit.approvals.revoke("transfer", room_id="room-1") is False
    [revoked] = rig.notes("always_revoked")
    assert revoked.pending_id == event.pending_id and revoked.data["by"] == "caller"
    # Revoked: the next call asks again.
    reading = rig.driver.call(session, "transfer", {"amount": 8, "to": "x"})
    rig.answer(await rig.observed.requests.get(), {"answer": True})
    assert not (await reading).is_error
    assert rig.kit.approvals.grants() == []
    await rig.kit.aclose()


async def test_always_ends_with_the_call_in_that_room() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", risk="low")
    session = await rig.start()
    other = await rig.voice.start_session("room-2", participant_id="caller-2")
    reading = rig.driver.call(session, "transfer", {"amount": 5, "to": "savings"})
    rig.answer(await rig.observed.requests.get(), {"answer": True, "always": True})
    assert not (await reading).is_error
    reading = rig.driver.call(other, "transfer", {"amount": 6, "to": "savings"})
    rig.answer(await rig.observed.requests.get(), {"answer": True, "always": True})
    assert not (await reading).is_error
    assert {g.room_id for g in rig.kit.approvals.grants()} == {"room-1", "room-2"}
    await rig.voice.end_session(session)
    # room-1's call ended: its grant went with it; room-2's call goes on, and so does its grant.
    assert [g.room_id for g in rig.kit.approvals.grants()] == ["room-2"]
    await rig.kit.aclose()
    assert rig.kit.approvals.grants() == []


async def test_always_is_not_granted_when_the_policy_forbids_it() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", allow_always=False)
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 5, "to": "savings"})
    rig.answer(await rig.observed.requests.get(), {"answer": True, "always": True})
    assert not (await reading).is_error
    assert rig.kit.approvals.grants() == [] and rig.notes("always_granted") == []
    await rig.kit.aclose()


async def test_a_rule_on_the_call_asks_only_when_it_applies() -> None:
    rig = approval_rig()
    rig.kit.require_approval(when=lambda name, args: name == "transfer" and args["amount"] > 100)
    session = await rig.start()
    assert not (await rig.driver.call(session, "transfer", {"amount": 50, "to": "a"})).is_error
    assert not (await rig.driver.call(session, "lookup", {"key": "k"})).is_error
    assert rig.observed.requests.empty()
    reading = rig.driver.call(session, "transfer", {"amount": 150, "to": "a"})
    event = await rig.observed.requests.get()
    assert event.context["approval"]["arguments"] == {"amount": 150, "to": "a"}
    rig.answer(event, {"answer": True})
    assert not (await reading).is_error
    assert [a["amount"] for n, a in rig.host.calls if n == "transfer"] == [50, 150]
    await rig.kit.aclose()


async def test_a_rule_that_raises_asks() -> None:
    def broken(name: str, arguments: Any) -> bool:
        raise KeyError("amount")

    rig = approval_rig()
    rig.kit.require_approval("transfer", when=broken)
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 50, "to": "a"})
    rig.answer(await rig.observed.requests.get(), {"answer": False})
    assert (await reading).is_error and rig.host.calls == []
    await rig.kit.aclose()


async def test_a_hook_runs_first_and_a_rewrite_is_approved_as_rewritten() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", phrasing="move {amount} pounds to {to}")

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def cap(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        if event.tool_name == "transfer" and event.arguments["amount"] > 100:
            return HookResult.modify(arguments={**event.arguments, "amount": 100})
        return None

    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 900, "to": "savings"})
    event = await rig.observed.requests.get()
    assert event.arguments["action"].startswith("move 100 pounds to savings")
    rig.answer(event, {"answer": True})
    assert not (await reading).is_error
    assert rig.host.calls == [("transfer", {"amount": 100, "to": "savings"})]
    await rig.kit.aclose()


async def test_a_blocking_hook_stops_the_call_before_anyone_is_asked() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def block(event: ToolUseEvent, ctx: HookContext) -> HookResult:
        return HookResult.block("transfers are closed")

    session = await rig.start()
    read = await rig.driver.call(session, "transfer", {"amount": 1, "to": "a"})
    assert read.json() == {"error": "transfers are closed"}
    assert rig.observed.requests.empty() and rig.host.calls == []
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_the_deadline_denies_by_default_and_proceeds_when_declared() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", timeout=30, escalate_to=Escalation("boss", after=10))
    rig.kit.require_approval("lookup", timeout=30, on_deadline="proceed", risk="low")
    session = await rig.start()
    read = await rig.driver.call(session, "transfer", {"amount": 1, "to": "a"})
    assert read.json() == {
        "error": "Tool 'transfer' was not approved: Human input timed out after 30s "
        "for tool 'ConfirmAction'"
    }
    event = await rig.observed.requests.get()
    assert event.deadline is not None and rig.host.calls == []
    [escalated] = rig.notes("escalated")
    assert escalated.pending_id == event.pending_id and escalated.data["to"] == ["boss"]
    read = await rig.driver.call(session, "lookup", {"key": "k"})
    assert not read.is_error
    proceeded = await rig.observed.requests.get()
    assert proceeded.context["deadline_policy"]["on_deadline"] == "proceed unless vetoed"
    assert rig.host.calls == [("lookup", {"key": "k"})]
    await rig.kit.aclose()


async def test_a_channel_without_human_input_is_refused_when_the_policy_meets_it() -> None:
    host = RecordingHost()
    bare = RealtimeVoiceChannel(
        "bare", provider=MockRealtimeProvider(), tools=[TRANSFER], tool_handler=host
    )
    kit = VoiceKit()
    kit.register_channel(bare)
    with pytest.raises(ApprovalSetupError, match="'bare' has no human_input_handler="):
        kit.require_approval("transfer")  # declared after registration: refused, not kept
    assert kit.approvals.empty
    other = VoiceKit()
    other.require_approval("transfer")
    late = RealtimeVoiceChannel(
        "late", provider=MockRealtimeProvider(), tools=[TRANSFER], tool_handler=host
    )
    with pytest.raises(ApprovalSetupError, match="'late' has no human_input_handler="):
        other.register_channel(late)  # declared before registration: the channel is refused
    assert host.calls == []
    await kit.aclose()
    await late.close()


async def test_a_gate_policy_of_its_own_wins_but_never_hides_the_kits() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")
    rig.voice.gate.approvals = ToolApprovals()  # an empty set of its own: the kit's still holds
    session = await rig.start()
    reading = asyncio.ensure_future(rig.driver.call(session, "transfer", {"amount": 1, "to": "a"}))
    request = await rig.observed.requests.get()
    assert request.tool_name == "ConfirmAction" and rig.host.calls == []
    rig.answer(request, {"answer": False})
    assert (await reading).is_error and rig.host.calls == []
    own = ToolApprovals()
    own.require("transfer", ApprovalPolicy(risk="low"))
    rig.voice.gate.approvals = own  # the gate's own policy for the tool wins over the kit's
    reading = asyncio.ensure_future(rig.driver.call(session, "transfer", {"amount": 2, "to": "a"}))
    request = await rig.observed.requests.get()
    assert request.context["risk"] == "low"
    rig.answer(request, {"answer": True})
    assert not (await reading).is_error
    assert rig.host.calls == [("transfer", {"amount": 2, "to": "a"})]
    await rig.kit.aclose()


async def test_closing_the_channel_withdraws_the_approval_and_the_tool_never_runs() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 1, "to": "a"})
    await rig.observed.requests.get()
    await rig.kit.aclose()
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled" and rig.host.calls == []
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)


def test_policies_are_checked_when_declared() -> None:
    approvals = ToolApprovals()
    for options, message in (
        ({"quorum": 2}, "quorum needs approvers"),
        ({"approvers": ["a"], "quorum": 2}, "between 1 and 1"),
        ({"approvers": ["a"], "operator": "ops"}, "cannot both"),
        ({"on_deadline": "maybe"}, "'deny' or 'proceed'"),
        ({"timeout": 0}, "timeout"),
        ({"risk": "medium"}, "'low' or 'high'"),
        ({"timeout": 10, "escalate_to": "boss"}, None),
    ):
        if message is None:
            approvals.require(f"t{len(options)}", **options)
            continue
        with pytest.raises(ValueError, match=message):
            approvals.require("t", **options)
    with pytest.raises(ValueError, match="needs when="):
        approvals.require()
    approvals.require("x")
    with pytest.raises(ValueError, match="declare it once"):
        approvals.require("x")
    with pytest.raises(ValueError, match="not both"):
        approvals.require("y", ApprovalPolicy(), risk="low")


@pytest.mark.parametrize(
    ("text", "approved", "always"),
    [
        ('{"answer": true}', True, False),
        ('{"answer": false, "always": true}', False, False),
        ('{"approved": true, "approvers": ["Alice"]}', True, False),
        ('{"answer": true, "transcript": "confirm always"}', True, True),
        ('{"answer": true, "always": true}', True, True),
        ('{"answer": "yes"}', True, False),
        ("yes", True, False),
        ("approve, always", True, True),
        ("no", False, False),
        ("I don't approve", False, False),
        ('{"error": "x"}', False, False),
        ("[1, 2]", False, False),
    ],
)
def test_answers_are_read_as_decisions(text: str, approved: bool, always: bool) -> None:
    decision = read_decision(text)
    assert (decision.approved, decision.always) == (approved, always)


def test_canonical_arguments_ignore_key_order() -> None:
    assert canonical_arguments({"b": 1, "a": [1, {"y": 2, "x": 1}]}) == canonical_arguments(
        {"a": [1, {"x": 1, "y": 2}], "b": 1}
    )
    assert canonical_arguments({"a": 1}) != canonical_arguments({"a": 2})


async def test_the_journal_keeps_the_approval_and_its_always_grant_and_revocation(
    tmp_path: Path,
) -> None:
    rig = approval_rig()
    human = rig.voice.human_input_handler
    assert human is not None
    journal = Journal.open(tmp_path / "j.sqlite3", b"journal-key")
    journal.attach(human.handler)
    rig.kit.require_approval("transfer")
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", {"amount": 5, "to": "savings"})
    event = await rig.observed.requests.get()
    rig.answer(event, {"answer": True, "always": True, "actor_id": "caller"})
    assert not (await reading).is_error
    assert rig.kit.approvals.revoke("transfer", room_id="room-1", by="supervisor")
    assert await asyncio.to_thread(journal.flush)
    story = journal.store.read(event.pending_id)
    assert verify_chain(journal.store.read(), b"journal-key") == []
    kinds = [(e.kind, e.data.get("note")) for e in story]
    assert kinds == [
        ("opened", None),
        ("notified", None),
        ("settled", None),
        ("noted", "always_granted"),
        ("delivered", None),
        ("noted", "always_revoked"),
    ]
    opened = story[0].data
    assert opened["tool"] == "ConfirmAction"
    assert opened["context"]["approval"] == {
        "tool": "transfer",
        "arguments": {"amount": 5, "to": "savings"},
    }
    granted = {"note": "always_granted", "tool": "transfer", "room": "room-1", "by": "caller"}
    assert story[3].data == granted
    assert story[5].data == {"note": "always_revoked", "tool": "transfer", "by": "supervisor"}
    await rig.kit.aclose()
    await asyncio.to_thread(journal.close)


async def test_human_input_tools_are_never_held_even_by_a_rule_over_every_tool() -> None:
    rig = approval_rig()
    rig.kit.require_approval(when=lambda name, arguments: True)
    session = await rig.start()
    reading = rig.driver.call(session, "AskUserQuestion", {"question": "Which account?"})
    event = await rig.observed.requests.get()
    assert event.tool_name == "AskUserQuestion"  # asked once, as itself
    rig.answer(event, {"answer": "savings"})
    assert (await reading).json() == {"answer": "savings"}
    assert rig.observed.requests.empty()
    await rig.kit.aclose()


async def test_a_hooks_risk_for_the_call_wins_over_the_policys() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer", risk="low")

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    async def large(event: ToolUseEvent, ctx: HookContext) -> HookResult | None:
        return HookResult.modify(risk="high") if event.arguments["amount"] > 1000 else None

    session = await rig.start()
    for amount, risk in ((5, "low"), (5000, "high")):
        reading = rig.driver.call(session, "transfer", {"amount": amount, "to": "a"})
        event = await rig.observed.requests.get()
        assert event.context["risk"] == risk
        rig.answer(event, {"answer": True})
        assert not (await reading).is_error
    await rig.kit.aclose()
