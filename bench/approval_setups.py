"""The table of approval setups tried for issue 45: channel x door x registration x policy,
and what happens to a gated ``transfer`` when the caller (the only person on the line) says
yes to whatever is asked.

Outcomes: ``ran unasked`` (the defect), ``asked`` (ran only after the yes), ``asked; yes
refused`` (the yes did not satisfy the policy: nothing ran), ``refused at setup`` (the
setup raised when built, naming the missing step), ``refused at call`` (the call was refused
and nothing was asked or run). It runs on any tree of the repository (before or after the
change): ``PYTHONPATH=<tree> python bench/approval_setups.py``. Offline, a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    AITool,
    ChannelType,
    Door,
    HumanInputToolHandler,
    RealtimeVoiceChannel,
    RequestEvent,
    ToolApprovals,
    ToolCall,
    ToolGate,
    VoiceKit,
)

TRANSFER = AITool(
    name="transfer",
    description="Move money.",
    parameters={"type": "object", "properties": {"amount": {"type": "number"}}},
)
POLICIES: dict[str, dict[str, Any]] = {
    "caller": {},
    "quorum alice+bob": {"approvers": ["alice", "bob"], "quorum": 2},
    "operator": {"operator": "supervisor"},
}
REGISTRATIONS = ["register, then policy", "policy, then register", "not registered"]


class Outcome(Exception):
    """How a setup ended, before any call."""


async def voice_setup(registration: str, policy: str, human: bool, door: Door) -> str:
    ran: list[Any] = []

    async def bank(name: str, arguments: dict[str, Any]) -> str:
        ran.append(arguments)
        return '{"moved": true}'

    handler = HumanInputToolHandler({"AskUserQuestion"}, timeout=60) if human else None
    asked = Asked()
    if handler is not None:
        handler.handler.add_observer(asked)
    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel(
        "phone",
        provider=provider,
        tools=[TRANSFER],
        tool_handler=bank,
        human_input_handler=handler,
    )
    kit = VoiceKit()
    try:
        try:
            steps: list[Callable[[], object]] = [
                lambda: kit.register_channel(voice),
                lambda: kit.require_approval("transfer", **POLICIES[policy]),
            ]
            if registration == "policy, then register":
                steps.reverse()
            elif registration == "not registered":
                steps = steps[1:]
            for step in steps:
                step()
        except Exception as exc:
            return f"refused at setup ({type(exc).__name__})"
        call = ToolCall("transfer", {"amount": 250}, "c1", "room", "caller", door)
        if door is Door.PROVIDER:
            try:
                session = await voice.start_session("room", participant_id="caller")
            except Exception as exc:
                return f"refused at session start ({type(exc).__name__})"
            call_id = provider.simulate_tool_call(session, "transfer", {"amount": 250})
            reading: asyncio.Future[Any] = asyncio.ensure_future(
                provider.wait_for_tool_result(call_id)
            )
        else:
            reading = asyncio.ensure_future(voice.gate.call(call))
        return await answer_as_caller(reading, asked, handler, ran)
    finally:
        await kit.aclose()
        await voice.close()


async def answer_as_caller(
    reading: asyncio.Future[Any],
    asked: Asked,
    handler: HumanInputToolHandler | None,
    ran: list[Any],
) -> str:
    """Let the call run until it ends or asks; answer what is asked with the caller's yes."""
    question = asyncio.ensure_future(asked.opened.wait())
    await asyncio.wait({reading, question}, return_when=asyncio.FIRST_COMPLETED)
    question.cancel()
    if not asked.ids:
        result = await reading
        return "ran unasked" if ran else f"refused at call ({_error(result)})"
    if ran:
        return "RAN BEFORE THE ANSWER"
    assert handler is not None
    handler.handler.resolve(asked.ids[0], json.dumps({"answer": True}), by="caller")
    result = await reading
    return "asked" if ran else f"asked; yes refused ({_error(result)})"


class Asked:
    """The requests a handler opened, and an event set at the first."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.opened = asyncio.Event()

    def __call__(self, event: RequestEvent) -> None:
        if event.type == "opened":
            self.ids.append(event.pending_id)
            self.opened.set()


def _error(result: Any) -> str:
    text = getattr(result, "text", None) or getattr(result, "output", "")
    try:
        message = str(json.loads(text).get("error", text))
    except (ValueError, AttributeError):
        message = str(text)
    return message[:60]


async def gate_setup(registration: str, policy: str) -> str:
    """A bare gate with no channel (the application's own door, ``Door.DIRECT``)."""
    ran: list[Any] = []

    async def bank(name: str, arguments: dict[str, Any]) -> str:
        ran.append(arguments)
        return "{}"

    handler = HumanInputToolHandler({"AskUserQuestion"}, timeout=60)
    asked = Asked()
    handler.handler.add_observer(asked)
    gate = ToolGate(
        "g", ChannelType.REALTIME_VOICE, tools=[TRANSFER], tool_handler=bank, human_input=handler
    )
    kit = VoiceKit()
    try:
        if registration == "gate's own approvals":
            own = ToolApprovals()
            own.require("transfer", **POLICIES[policy])
            gate.approvals = own
        elif registration == "empty gate approvals + kit policy":
            gate.approvals = ToolApprovals()
            gate.kit = kit
            kit.require_approval("transfer", **POLICIES[policy])
        else:
            kit.require_approval("transfer", **POLICIES[policy])
    except Exception as exc:
        return f"refused at setup ({type(exc).__name__})"
    call = ToolCall("transfer", {"amount": 250}, "c1", "room", "caller", Door.DIRECT)
    return await answer_as_caller(asyncio.ensure_future(gate.call(call)), asked, handler, ran)


async def main() -> None:
    rows: list[tuple[str, str, str, str, str]] = []
    for policy in POLICIES:
        for registration in REGISTRATIONS:
            for door in (Door.PROVIDER, Door.DIRECT):
                outcome = await voice_setup(registration, policy, True, door)
                rows.append(("RealtimeVoiceChannel", door.value, registration, policy, outcome))
        outcome = await voice_setup("register, then policy", policy, False, Door.PROVIDER)
        rows.append(
            (
                "RealtimeVoiceChannel, no human_input_handler",
                "provider",
                "register, then policy",
                policy,
                outcome,
            )
        )
        for registration in (
            "gate's own approvals",
            "empty gate approvals + kit policy",
            "kit policy, gate not bound",
        ):
            outcome = await gate_setup(registration, policy)
            rows.append(("ToolGate", "direct", registration, policy, outcome))
    print("| channel | door | registration | policy | outcome |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
