"""Issue 45: a gated tool never runs without the yes its policy asks for. Setups that could not
ask are refused when they are built (``ApprovalSetupError`` naming the missing step); bad input
is refused before anyone is asked or any handler runs."""

from __future__ import annotations

import asyncio
import json
import re
import types
from pathlib import Path
from typing import Any

import pytest
from conference_rig import make_rig
from doors import LOOKUP, human_tools
from test_approval import TRANSFER, RecordingHost, approval_rig

from providers.mock import MockRealtimeProvider
from providers.mock_text import MockAIProvider
from voice_hitl import (
    AIChannel,
    ApprovalSetupError,
    ChannelType,
    Door,
    HumanInputToolHandler,
    RealtimeVoiceChannel,
    ToolApprovals,
    ToolCall,
    ToolGate,
    VoiceKit,
    canonical_arguments,
    read_decision,
)

ROOT = Path(__file__).resolve().parent.parent
# The README's approval example as it was printed before issue 45 (it never registers the
# channel with the kit): the setup a user copies must refuse, never run the tool unasked.
PRINTED_BEFORE_ISSUE_45 = '''\
from providers.mock import MockRealtimeProvider
from voice_hitl import AITool, HumanInputToolHandler, RealtimeVoiceChannel, VoiceKit

TRANSFER = AITool(name="transfer_money", description="Move money between the caller's accounts.",
                  parameters={"type": "object", "properties": {"amount": {"type": "number"}}})

async def bank(name: str, arguments: dict) -> str:      # your tools
    return '{"moved": true}'

human = HumanInputToolHandler({"AskUserQuestion"}, timeout=60)

kit = VoiceKit()
kit.require_approval("transfer_money")          # the caller, high risk: "say confirm, or press 1"
voice = RealtimeVoiceChannel("phone", provider=MockRealtimeProvider(), tools=[TRANSFER],
                             tool_handler=bank, human_input_handler=human)  # the responder asks
'''
GUIDE = ROOT / "docs" / "guides" / "approval-gated-tools.md"


def first_python_block(text: str, after: str = "") -> str:
    start = text.index(after) if after else 0
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match is not None, f"no python block after {after!r}"
    return match.group(1)


def run_module(code: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(code, name, "exec"), module.__dict__)
    return module


# -- the README's example ---------------------------------------------------------------


async def test_the_readme_example_as_printed_refuses_to_serve_the_tool() -> None:
    printed = run_module(PRINTED_BEFORE_ISSUE_45, "printed")
    voice: RealtimeVoiceChannel = printed.voice
    with pytest.raises(ApprovalSetupError, match=r"kit\.register_channel\(channel\)"):
        await voice.start_session("call-1", participant_id="caller")
    result = await voice.gate.call(ToolCall("transfer_money", '{"amount": 250}', "c1", "call-1"))
    assert result.outcome == "refused" and "kit.register_channel" in result.text
    await voice.close()


async def test_the_corrected_example_asks_before_the_tool_runs() -> None:
    # The guide's example registers the channel; it asserts itself that nothing moves while
    # the caller is asked, and runs its own event loop (asyncio.run), so it runs in a thread.
    guide = await asyncio.to_thread(run_module, first_python_block(GUIDE.read_text()), "guide")
    assert guide.moved == [{"amount": 250}]


# -- setups refused when built ---------------------------------------------------------------


def voice_channel(channel_id: str = "voice", **kw: Any) -> RealtimeVoiceChannel:
    kw.setdefault("human_input_handler", human_tools())
    return RealtimeVoiceChannel(
        channel_id,
        provider=MockRealtimeProvider(),
        tools=[TRANSFER, LOOKUP],
        tool_handler=RecordingHost(),
        **kw,
    )


async def test_named_approvers_on_a_single_caller_channel_are_refused_either_order() -> None:
    kit = VoiceKit()
    kit.register_channel(voice_channel())
    with pytest.raises(ApprovalSetupError, match=r"cannot tell who is speaking.*operator="):
        kit.require_approval("transfer", approvers=["alice", "bob"], quorum=2)
    assert kit.approvals.empty  # refused, not kept
    other = VoiceKit()
    other.require_approval(when=lambda tool, args: True, approvers=["alice"])
    with pytest.raises(ApprovalSetupError, match="a when= rule over every tool needs 1 of"):
        other.register_channel(voice_channel("late"))
    await kit.aclose()


async def test_a_text_channel_cannot_count_named_approvers_either() -> None:
    kit = VoiceKit()
    kit.require_approval("transfer", approvers=["alice", "bob"], quorum=2)
    ai = AIChannel(
        "chat",
        provider=MockAIProvider([]),  # never asked: refused before any turn
        tools=[TRANSFER],
        tool_handler=RecordingHost(),
        human_input_handler=human_tools(),
    )
    with pytest.raises(ApprovalSetupError, match="'chat' cannot tell who is speaking"):
        kit.register_channel(ai)
    await ai.close()


async def test_a_policy_over_a_human_input_tool_is_refused() -> None:
    kit = VoiceKit()
    kit.register_channel(voice_channel())
    with pytest.raises(ApprovalSetupError, match="'AskUserQuestion' is a human-input tool"):
        kit.require_approval("AskUserQuestion")
    await kit.aclose()


async def test_an_unregistered_gate_refuses_host_tools_on_every_door_and_asks_nothing() -> None:
    host = RecordingHost()
    human = human_tools()
    gate = ToolGate(
        "bare", ChannelType.REALTIME_VOICE, tools=[TRANSFER], tool_handler=host, human_input=human
    )
    with pytest.raises(ApprovalSetupError, match="'bare' serves host tools"):
        gate.check_reachable()
    for door in Door:
        call = ToolCall("transfer", {"amount": 1, "to": "a"}, f"c-{door}", "r", door=door)
        result = await gate.call(call)
        assert result.outcome == "refused", door
    assert host.calls == [] and human.handler.pending == {}
    gate.approvals = ToolApprovals()  # said by name: this gate needs no approvals
    gate.check_reachable()
    assert not (await gate.call(ToolCall("transfer", {"amount": 1, "to": "a"}))).is_error


async def test_a_gate_with_only_human_input_tools_needs_no_kit() -> None:
    human = human_tools()
    gate = ToolGate("asker", ChannelType.REALTIME_VOICE, human_input=human)
    gate.check_reachable()  # nothing a policy could hold


# -- who may say yes ---------------------------------------------------------------------


async def test_a_quorum_yes_that_did_not_come_from_the_conference_count_is_refused() -> None:
    host = RecordingHost()
    rig = await make_rig(host=host)
    rig.kit.require_approval("lookup", approvers=["alice", "bob"], quorum=2)
    reading = rig.call("lookup", {"key": "vault"})
    event = await rig.observed.requests.get()
    human = rig.conf.human_input_handler
    assert human is not None
    assert human.handler.resolve(event.pending_id, '{"answer": true}', by="mallory", via="api")
    read = await reading
    assert read.is_error and "needs a yes from 2 of ['alice', 'bob']" in read.json()["error"]
    assert host.calls == []
    await rig.kit.aclose()


async def test_a_policy_naming_someone_not_in_the_conference_is_a_clear_refusal() -> None:
    host = RecordingHost()
    rig = await make_rig(host=host)
    rig.kit.require_approval("lookup", approvers=["alice", "zed"], quorum=2)
    read = await rig.call("lookup", {"key": "vault"})
    assert read.is_error and "zed" in read.json()["error"]
    assert "was not approved" in read.json()["error"] and host.calls == []
    await rig.kit.aclose()


async def test_approve_always_in_a_conference_is_honoured_and_a_veto_reads_the_action() -> None:
    host = RecordingHost()
    rig = await make_rig(host=host)
    rig.kit.require_approval("lookup", approvers=["alice", "bob"], quorum=2)
    reading = rig.call("lookup", {"key": "vault"})
    event = await rig.observed.requests.get()
    assert "say confirm always" in event.arguments["action"]
    assert rig.conf.answer(event.pending_id, "alice", "approve always")
    assert rig.conf.answer(event.pending_id, "bob", "confirm always")
    assert not (await reading).is_error
    grants = rig.kit.approvals.grants()
    assert [g.tool for g in grants] == ["lookup"]
    assert not (await rig.call("lookup", {"key": "again"})).is_error  # not asked again
    assert rig.observed.requests.empty()
    assert rig.kit.approvals.revoke("lookup", room_id=grants[0].room_id)
    # One approver's plain yes approves this call alone.
    reading = rig.call("lookup", {"key": "three"})
    event = await rig.observed.requests.get()
    assert rig.conf.answer(event.pending_id, "alice", "approve always")
    assert rig.conf.answer(event.pending_id, "bob", "approve")
    assert not (await reading).is_error and rig.kit.approvals.grants() == []
    # A veto's refusal reads the action, not the prompt with its hint.
    reading = rig.call("lookup", {"key": "four"})
    event = await rig.observed.requests.get()
    assert rig.conf.answer(event.pending_id, "bob", "deny")
    error = (await reading).json()["error"]
    assert "key four" in error and "say confirm always" not in error
    assert [c[1]["key"] for c in host.calls] == ["vault", "again", "three"]
    await rig.kit.aclose()


# -- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"amount": NaN, "to": "a"}', "not finite (nan) at amount"),
        ('{"amount": Infinity, "to": "a"}', "not finite (inf) at amount"),
        ('{"amount": -1e400, "to": "a"}', "not finite (-inf) at amount"),
        ('{"amount": 1' + "0" * 30 + ', "to": "a"}', "too large (100 bits) at amount"),
        ('{"amount": 1e300, "to": "a"}', "too large (1e+300) at amount"),
        ('{"amount": 1' + "0" * 5000 + ', "to": "a"}', "a number too large"),
    ],
)
async def test_non_finite_or_huge_numbers_are_refused_before_anyone_is_asked(
    raw: str, where: str
) -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")
    session = await rig.start()
    read = await rig.driver.call(session, "transfer", raw)
    assert read.is_error and where in read.json()["error"]
    assert "'transfer'" in read.json()["error"]
    assert rig.observed.requests.empty() and rig.host.calls == []
    await rig.kit.aclose()


async def test_a_duplicate_call_id_is_refused_while_the_first_waits() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")
    gate = rig.voice.gate
    first = asyncio.ensure_future(
        gate.call(ToolCall("transfer", {"amount": 1, "to": "a"}, "dup", "room-1"))
    )
    event = await rig.observed.requests.get()
    second = await gate.call(ToolCall("transfer", {"amount": 9000, "to": "b"}, "dup", "room-1"))
    assert second.outcome == "refused" and "call id 'dup' is already waiting" in second.text
    rig.answer(event, {"answer": True})
    assert (await first).outcome == "ok"
    assert rig.host.calls == [("transfer", {"amount": 1, "to": "a"})]
    await rig.kit.aclose()


def test_equal_numbers_have_one_canonical_text() -> None:
    forms = ['{"amount": 10, "to": "a"}', '{"amount": 10.0, "to": "a"}', '{"to":"a","amount":1e1}']
    texts = {canonical_arguments(json.loads(f)) for f in forms}
    assert texts == {'{"amount":10,"to":"a"}'}
    assert canonical_arguments({"x": [2.5, -0.0, {"y": 3.0}]}) == '{"x":[2.5,0,{"y":3}]}'
    with pytest.raises(ValueError, match=r"not finite.*at x/1"):
        canonical_arguments({"x": [1, float("nan")]})


async def test_the_handler_gets_the_canonical_number_that_was_approved() -> None:
    rig = approval_rig()
    rig.kit.require_approval("transfer")
    session = await rig.start()
    reading = rig.driver.call(session, "transfer", '{"amount": 1e1, "to": "a"}')
    event = await rig.observed.requests.get()
    assert event.context["approval"]["arguments"] == {"amount": 10, "to": "a"}
    rig.answer(event, {"answer": True})
    assert not (await reading).is_error
    assert rig.host.calls == [("transfer", {"amount": 10, "to": "a"})]
    await rig.kit.aclose()


@pytest.mark.parametrize(
    ("answer", "always"),
    [
        ('{"answer": true, "transcript": "yes, just this once, not always"}', False),
        ('{"answer": true, "always": true, "transcript": "yes but not always"}', False),
        ('{"answer": true, "transcript": "yes, only this time"}', False),
        ('{"answer": true, "transcript": "confirm, but never always"}', False),
        ('{"answer": true, "transcript": "confirm always"}', True),
        ('{"answer": true, "always": true}', True),
        ("yes always", True),
    ],
)
def test_always_only_from_an_unambiguous_phrase(answer: str, always: bool) -> None:
    decision = read_decision(answer)
    assert decision.approved and decision.always is always


async def test_unregistered_ai_channel_refuses_host_tools() -> None:
    host = RecordingHost()
    ai = AIChannel(
        "chat",
        provider=MockAIProvider([]),  # never asked: refused before any turn
        tools=[TRANSFER],
        tool_handler=host,
        human_input_handler=HumanInputToolHandler({"AskUserQuestion"}),
    )
    result = await ai.gate.call(ToolCall("transfer", {"amount": 1, "to": "a"}, door=Door.AI))
    assert result.outcome == "refused" and "kit.register_channel" in result.text
    assert host.calls == []
    await ai.close()


async def test_a_closed_channel_does_not_hold_back_a_later_policy() -> None:
    kit = VoiceKit()
    bare = RealtimeVoiceChannel(
        "bare", provider=MockRealtimeProvider(), tools=[TRANSFER], tool_handler=RecordingHost()
    )
    kit.register_channel(bare)
    await bare.close()  # it leaves the kit
    kit.require_approval("transfer")  # no channel left that could not ask
    assert kit.approvals.by_tool.keys() == {"transfer"}
    await kit.aclose()
