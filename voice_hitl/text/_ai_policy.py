"""``PolicyExternalToolHandler``: a runtime's calls decided by the channel's own rules.

A runtime that runs its tools itself asks the channel about each call
(:class:`~voice_hitl.ExternalToolHandler`). This handler answers with the ``BEFORE_TOOL_USE``
hooks every other door applies (through the kit's one hook engine); a call it approves then
goes through the approval rules, as every external handler's approved call does
(:func:`approval_step`: a person's yes through the gate, as for the channel's own tools).
It **fails closed**: a hook that raises, overruns its budget or returns something that
is not a ``HookResult`` refuses the call (whatever the hook's own ``fail_closed``), and so does
a hook that rewrites the arguments (the runtime runs the model's own), a channel with no kit
to take the hooks from, or a call from outside a channel's tool loop. What failed goes to
:meth:`~voice_hitl.ExternalToolHandler.on_tool_refused` as ``detail`` (and to the
``ON_TOOL_CALL`` report's ``error_detail``); the model reads only that the call was refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from .._exceptions import ToolRefusedError
from ..tools._approval_policy import canonical_arguments
from ..tools._calls import Door, ToolCall, ToolUseEvent
from ..tools._gate import ToolGate
from ..tools._hooks import HookResult, HookTrigger
from ._ai_external import ExternalToolHandler, ToolDecision, current_gate

__all__ = ["PolicyExternalToolHandler", "approval_step"]


class _Rewritten(Exception):
    """A hook asked for other arguments than the ones the runtime will run."""


def _keep_arguments(event: ToolUseEvent, result: HookResult) -> ToolUseEvent:
    replacement = result.metadata.get("arguments")
    if replacement is not None and (
        not isinstance(replacement, Mapping) or dict(replacement) != dict(event.arguments)
    ):
        raise _Rewritten(
            f"a BEFORE_TOOL_USE hook replaced the arguments of tool {event.tool_name!r}; the "
            "runtime runs the model's own arguments, so the call is refused"
        )
    risk = result.metadata.get("risk", event.risk)
    return replace(event, risk=risk) if isinstance(risk, str) else event


def _refusal(tool_name: str, message: str, detail: str = "") -> ToolDecision:
    return ToolDecision(approved=False, reason=json.dumps({"error": message}), detail=detail)


def _failed(tool_name: str, detail: str) -> ToolDecision:
    """A refusal that came from a failure: the model reads that, the observers what failed."""
    return _refusal(tool_name, f"Tool {tool_name!r} was refused: its policy check failed", detail)


class PolicyExternalToolHandler(ExternalToolHandler):
    """Approves a runtime's call only when the channel's ``BEFORE_TOOL_USE`` hooks and
    approval rules allow it, failing closed (see the module docstring).

    Give it to an ``AIChannel`` registered with a kit, as ``tool_handler=``. Subclass it to
    add your own checks: call ``await super().process_tool_call(...)`` and keep its refusal.
    """

    async def process_tool_call(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        *,
        room_id: str | None = None,
        **kwargs: Any,
    ) -> ToolDecision:
        """Apply the hooks, then the approval rules; approve only when both allow.

        Keyword arguments: ``room_id``, ``tool_call_id``, ``actor_id`` (as the channel
        passes them).

        Returns:
            ``approved=True``, or a refusal: a hook's block (its reason), a person's no (the
            approval's reason), or a failure (``detail`` says what failed).

        Cancellation: safe; hooks not yet run do not run, an approval request is withdrawn.
        """
        gate = current_gate()
        if gate is None:
            return _failed(
                tool_name,
                "PolicyExternalToolHandler was asked outside an AIChannel's tool loop: there "
                "are no hooks to apply",
            )
        kit = gate.kit
        if kit is None:
            return _failed(
                tool_name,
                f"channel {gate.channel_id!r} is not registered with a VoiceKit "
                "(kit.register_channel(channel)): its BEFORE_TOOL_USE hooks cannot be applied",
            )
        if not isinstance(tool_input, Mapping):
            kind = type(tool_input).__name__
            return _failed(
                tool_name, f"the arguments of tool {tool_name!r} are {kind}, not an object"
            )
        room = room_id or ""
        call_id = str(kwargs.get("tool_call_id", ""))
        actor = kwargs.get("actor_id")
        actor_id = actor if isinstance(actor, str) else None
        event = ToolUseEvent(
            tool_name,
            MappingProxyType(dict(tool_input)),
            call_id,
            room,
            gate.channel_id,
            gate.channel_type,
            actor_id,
            Door.AI,
        )
        ctx = kit.context(room, gate.channel_id, gate.channel_type)
        try:
            decision, event = await kit.hooks.run_sync(
                HookTrigger.BEFORE_TOOL_USE, event, ctx, rewrite=_keep_arguments, fail_closed=True
            )
        except _Rewritten as exc:
            return _failed(tool_name, str(exc))
        if decision.blocked:
            detail = str(decision.metadata.get("detail", ""))
            if detail:
                return _failed(tool_name, detail)
            return _refusal(
                tool_name, decision.reason or f"Tool {tool_name!r} was blocked by a hook"
            )
        return ToolDecision(approved=True)  # the channel then applies the approval rules


async def approval_step(
    gate: ToolGate, call: ToolCall, arguments: Mapping[str, Any]
) -> ToolDecision:
    """The gate's approval step for a call a runtime runs itself (any external handler's
    approved call goes through it): approved only after a person's yes to exactly these
    arguments when a policy asks for one.

    Cancellation: the approval request is withdrawn.
    """
    try:
        held = gate.approval_for(call.name, arguments)
        if held is None:
            return ToolDecision(approved=True)
        approvals, policy = held
        approved = await gate.hold(approvals, policy, call, dict(arguments), [])
    except ToolRefusedError as exc:
        return _refusal(call.name, str(exc), str(exc))
    if canonical_arguments(approved) != canonical_arguments(arguments):
        return _failed(call.name, f"the yes for tool {call.name!r} was for other arguments")
    return ToolDecision(approved=True)
