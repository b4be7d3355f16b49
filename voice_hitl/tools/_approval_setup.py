"""Setups that could not satisfy an approval policy, refused when they are built.

A gated tool never runs without the yes its policy asks for. Whatever the gate cannot check
when a call comes is refused earlier, where the setup is made, with an error naming the missing
step (:class:`~voice_hitl.ApprovalSetupError`):

- a gate that serves host tools but knows no policies at all: not registered with a
  :class:`~voice_hitl.VoiceKit` (``kit.register_channel(channel)``) and without its own
  ``gate.approvals``; its sessions do not start and its calls are refused;
- a policy over a host tool of a gate with no human-input handler to ask through;
- a policy naming approvers (with a quorum) on a gate whose human-input handler cannot tell
  who is speaking (one caller on a line, a text chat): only a conference counts named
  approvers; elsewhere use ``operator=`` (asked on the board, not on the call);
- a policy over a human-input tool (the asking itself is never held).

The kit checks every gate bound to it when the gate is bound and when a policy is declared
later; a gate checks its own ``approvals`` when they are set. A door with rules of its own
(a runtime that runs tools itself) adds them to ``gate.setup_checks``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._exceptions import ApprovalSetupError
from ._approval_policy import ApprovalPolicy

if TYPE_CHECKING:
    from ._approvals import ToolApprovals
    from ._gate import ToolGate

__all__ = ["check_gate", "host_tools", "unbound_message"]


def host_tools(gate: ToolGate) -> list[str]:
    """The gate's tools its host handler serves (the ones a policy may hold)."""
    human = gate.human_input
    return [name for name in gate.toolset if human is None or not human.serves(name)]


def unbound_message(gate: ToolGate) -> str:
    """Why a gate that knows no policies may not serve host tools, and what to do."""
    return (
        f"channel {gate.channel_id!r} serves host tools but is not registered with a "
        "VoiceKit, so no approval policy reaches it: call kit.register_channel(channel) "
        "before it serves calls (for a channel that needs no approvals, register it with a "
        "kit that declares none, or set channel.gate.approvals = ToolApprovals())"
    )


def check_gate(gate: ToolGate, approvals: ToolApprovals) -> None:
    """Refuse a gate that could not ask for what ``approvals`` require of its tools.

    Raises:
        ApprovalSetupError: A policy over a human-input tool; a policy over a host tool of a
            gate without a human-input handler; named approvers where the gate's
            human-input handler cannot tell who is speaking.
    """
    human = gate.human_input
    hosted = host_tools(gate)
    for tool, policy in _policies_over(gate, approvals, hosted):
        if human is not None and tool is not None and human.serves(tool):
            raise ApprovalSetupError(
                f"tool {tool!r} is a human-input tool on channel {gate.channel_id!r}: it is the "
                "asking itself and cannot need approval; drop kit.require_approval for it"
            )
        what = f"tool {tool!r}" if tool is not None else "a when= rule over every tool"
        if human is None:
            raise ApprovalSetupError(
                f"{what} needs a person's yes but channel {gate.channel_id!r} has no "
                "human_input_handler= to ask through: give the channel a "
                "HumanInputToolHandler (the responder or the board answers it)"
            )
        if policy.approvers and not human.names_approvers:
            raise ApprovalSetupError(
                f"{what} needs {policy.quorum or 1} of the approvers "
                f"{list(policy.approvers)!r}, but channel {gate.channel_id!r} cannot tell who "
                "is speaking (one caller, or one chat user), so it cannot count them: serve "
                "the tool from a conference channel, or ask a role on the board with "
                "operator='<role>'"
            )
    for check in gate.setup_checks:
        check(approvals)


def _policies_over(
    gate: ToolGate, approvals: ToolApprovals, hosted: Iterable[str]
) -> Iterable[tuple[str | None, ApprovalPolicy]]:
    """The policies that may hold a call on this gate: per tool for the tools it offers,
    and every rule when it serves any host tool."""
    hosted = list(hosted)
    for tool, policy in approvals.by_tool.items():
        if tool in gate.toolset:
            yield tool, policy
    if hosted:
        for rule in approvals.rules:
            yield None, rule
