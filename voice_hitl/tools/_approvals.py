"""``ToolApprovals``: the gate's approval step, which holds a regular tool call until a person
says yes.

The step runs after ``BEFORE_TOOL_USE`` hooks (a rewrite is approved as rewritten) and before
the tool's handler, on every door, because the gate runs it: the model cannot skip it, since it
is not a tool the model calls. It asks through the human-input machinery the channel already
has: a ``ConfirmAction`` request on the channel's :class:`~voice_hitl.HumanInputHandler`, so the
responder (spoken, by risk tier, keypad), a conference's quorum approvals, the board and
console, the journal and the deadline policies apply unchanged. Rules:

- the approval is bound to the call's canonical arguments and used once: the handler gets
  exactly what was approved, and another call (other arguments, or the same ones again) asks
  again;
- "always" (``"always": true`` in the answer, or "confirm always" spoken) approves the tool for
  the rest of the call in that room; each grant and revocation is told to the request's
  observers (the journal keeps them as ``always_granted`` / ``always_revoked`` notes);
- a refusal, a deadline that denies, or a request given up reaches the model as a refusal
  (``{"error": "Tool 'x' was not approved: ..."}``).
"""

from __future__ import annotations

import copy
import json
import logging
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._exceptions import ApprovalSetupError, ToolFailedError, ToolRefusedError
from .._types import ChannelType
from ..human._human_input import HumanInputHandler
from ..human._human_input_tools import HumanInputToolHandler
from ..human._pending import PendingInput, utc_now
from ..human._standard_tools import CONFIRM_ACTION
from ..speech import Answer, AnswerSpec, understand
from ..speech._text import tokens
from ._approval_policy import ApprovalPolicy, asks_always, canonical_arguments, phrase_action
from ._approval_setup import check_gate
from ._tools import current_tool_context, tool_context

if TYPE_CHECKING:
    from ._calls import ToolCall
    from ._gate import ToolGate

__all__ = ["AlwaysGrant", "ApprovalDecision", "ToolApprovals", "read_decision"]

logger = logging.getLogger("voice_hitl.approvals")

_CONFIRM = CONFIRM_ACTION.name
_YES_OR_NO = AnswerSpec.confirm("approve?", default=None)


@dataclass(frozen=True, slots=True)
class AlwaysGrant:
    """A tool approved for the rest of a call: by whom, through which request, and when."""

    tool: str
    channel_id: str
    room_id: str
    by: str | None
    request_id: str
    at: datetime


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """What an approval request's answer says: yes or no, "always", and who answered."""

    approved: bool
    always: bool = False
    by: str | None = None
    approvers: tuple[str, ...] = ()
    """Who a counted quorum approval names (a conference's ``{"approved": true, ...}``)."""


def read_decision(text: str) -> ApprovalDecision:
    """Read an approval request's answer text.

    ``{"answer": true}`` (the responder, keypad, board, console), ``{"approved": true}`` (a
    conference quorum), ``{"answer": true, "via": "no_veto"}`` (a deadline that proceeds), or
    plain words ("yes", "approve") read with the spoken-answer rules. Anything else is a no.
    "Always" is granted only when unambiguous: ``"always": true`` or "always" among the words
    of a yes, and nothing said that limits or negates it ("not always", "never", "just this
    once", "only this time": a yes to this call alone).
    """
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    if isinstance(body, Mapping):
        value = body.get("approved", body.get("answer"))
        by = body.get("actor_id")
        transcript = body.get("transcript")
        said = transcript if isinstance(transcript, str) else ""
        approved = _is_yes(value)
        words = tokens(said)
        if body.get("always") is True:
            words = ["always", *words]
        always = approved and asks_always(words)
        named = body.get("approvers") if "approved" in body else None
        approvers = tuple(a for a in named if isinstance(a, str)) if isinstance(named, list) else ()
        return ApprovalDecision(approved, always, by if isinstance(by, str) else None, approvers)
    approved = _is_yes(body)
    always = approved and isinstance(body, str) and asks_always(tokens(body))
    return ApprovalDecision(approved, always)


def _is_yes(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        understood = understand(value, _YES_OR_NO)
        return isinstance(understood, Answer) and understood.value is True
    return False


class ToolApprovals:
    """Which regular tools need a person's yes, the "always" grants, and the gate's step.

    A :class:`~voice_hitl.VoiceKit` has one (``kit.approvals``, used by every channel of the
    kit); a gate may have its own (``gate.approvals``), which then wins.
    """

    def __init__(self) -> None:
        self._by_tool: dict[str, ApprovalPolicy] = {}
        self._rules: list[ApprovalPolicy] = []
        self._always: dict[tuple[str, str, str], AlwaysGrant] = {}
        self._handlers: dict[str, HumanInputHandler] = {}  # a grant's request id -> handler
        self._gates: weakref.WeakSet[ToolGate] = weakref.WeakSet()  # checked on each require

    def attach(self, gate: ToolGate) -> None:
        """Check these policies against ``gate`` now and on every later :meth:`require`.

        Raises:
            ApprovalSetupError: A policy the gate could not ask for (see
                :mod:`voice_hitl.tools._approval_setup`).
        """
        check_gate(gate, self)
        self._gates.add(gate)

    def detach(self, gate: ToolGate) -> None:
        """Stop checking ``gate`` (it left the kit)."""
        self._gates.discard(gate)

    def require(
        self, tool: str | None = None, policy: ApprovalPolicy | None = None, **options: Any
    ) -> ApprovalPolicy:
        """Declare that ``tool`` (or, without a name, any call ``when`` picks) needs approval.

        Args:
            tool: The tool's name; None declares a rule over every regular tool (``when=``
                is then required).
            policy: The policy; else one is built from ``options`` (see
                :class:`ApprovalPolicy`: ``risk``, ``approvers``, ``quorum``, ``operator``,
                ``when``, ``timeout``, ``on_deadline``, ``escalate_to``, ``phrasing``,
                ``allow_always``).

        Returns:
            The policy in force.

        Raises:
            ValueError: Both ``policy`` and options, a rule without ``when``, a tool named
                twice, or an inconsistent policy.
            ApprovalSetupError: A channel already using these policies could not ask for it
                (see :mod:`voice_hitl.tools._approval_setup`); the policy is not kept.
        """
        if policy is not None and options:
            raise ValueError("give an ApprovalPolicy or its options, not both")
        policy = policy if policy is not None else ApprovalPolicy(**options)
        if tool is None:
            if policy.when is None:
                raise ValueError("a rule over every tool needs when=(tool_name, arguments) -> bool")
            self._rules.append(policy)
        else:
            if not isinstance(tool, str) or not tool:
                raise ValueError(f"tool must be a tool name, got {tool!r}")
            if tool in self._by_tool:
                raise ValueError(f"tool {tool!r} already needs approval; declare it once")
            self._by_tool[tool] = policy
        try:
            for gate in list(self._gates):
                check_gate(gate, self)
        except ApprovalSetupError:
            self.withdraw(policy)
            raise
        return policy

    def policy_for(self, name: str, arguments: Mapping[str, Any]) -> ApprovalPolicy | None:
        """The policy this call must pass, or None when it needs no approval."""
        return self.named(name, arguments) or self.ruled(name, arguments)

    def named(self, name: str, arguments: Mapping[str, Any]) -> ApprovalPolicy | None:
        """The policy declared for tool ``name``, if it applies to these arguments."""
        policy = self._by_tool.get(name)
        if policy is not None and policy.applies(name, arguments):
            return policy
        return None

    def ruled(self, name: str, arguments: Mapping[str, Any]) -> ApprovalPolicy | None:
        """The first rule over every tool that picks this call, if any."""
        for rule in self._rules:
            if rule.applies(name, arguments):
                return rule
        return None

    @property
    def by_tool(self) -> Mapping[str, ApprovalPolicy]:
        """The policies declared per tool name (a read-only view)."""
        return MappingProxyType(self._by_tool)

    @property
    def rules(self) -> tuple[ApprovalPolicy, ...]:
        """The rules over every tool (``when=``), in declaration order."""
        return tuple(self._rules)

    def withdraw(self, policy: ApprovalPolicy) -> None:
        """Take back a policy just declared (a setup check refused it)."""
        self._rules = [rule for rule in self._rules if rule is not policy]
        for tool in [t for t, p in self._by_tool.items() if p is policy]:
            del self._by_tool[tool]

    @property
    def empty(self) -> bool:
        """True when no tool needs approval (the gate's step costs nothing then)."""
        return not self._by_tool and not self._rules

    # -- "always" grants -------------------------------------------------------------------

    def grants(self, room_id: str | None = None) -> list[AlwaysGrant]:
        """The "always" grants in force (in one room, or all)."""
        return [g for g in self._always.values() if room_id is None or g.room_id == room_id]

    def revoke(
        self, tool: str, *, room_id: str, channel_id: str | None = None, by: str | None = None
    ) -> bool:
        """Withdraw "always" for ``tool`` in ``room_id``: its next call asks again.

        The revocation is told to the granting request's observers (``always_revoked``).

        Returns:
            False when no such grant was in force.
        """
        revoked = [
            key
            for key, grant in self._always.items()
            if grant.tool == tool
            and grant.room_id == room_id
            and (channel_id is None or grant.channel_id == channel_id)
        ]
        for key in revoked:
            grant = self._always.pop(key)
            handler = self._handlers.pop(grant.request_id, None)
            if handler is not None:
                handler.tell(grant.request_id, "always_revoked", {"tool": tool, "by": by})
            logger.info("always-approval of %r in room %r revoked by %s", tool, room_id, by)
        return bool(revoked)

    def forget_room(self, room_id: str, *, channel_id: str | None = None) -> int:
        """Drop every grant of a room whose call ended (only ``channel_id``'s, if given);
        returns how many were dropped."""
        keys = [
            key
            for key, grant in self._always.items()
            if grant.room_id == room_id and (channel_id is None or grant.channel_id == channel_id)
        ]
        for key in keys:
            self._handlers.pop(self._always.pop(key).request_id, None)
        return len(keys)

    # -- the gate's step -------------------------------------------------------------------

    async def hold(
        self,
        gate: ToolGate,
        call: ToolCall,
        policy: ApprovalPolicy,
        arguments: dict[str, Any],
        asked: list[PendingInput],
    ) -> dict[str, Any]:
        """Ask for approval of this call and return the arguments the handler gets: exactly
        those approved (a fresh copy of their canonical form).

        Runs inside the call's tool context (room, call id, actor).

        Raises:
            ToolRefusedError: Not approved: a no, a rejection, the deadline, or nobody the
                channel can ask; the model reads why.

        Cancellation: withdraws the approval request; the tool does not run.
        """
        name = call.name
        key = (gate.channel_id, call.room_id, name)
        canonical = canonical_arguments(arguments)
        if key in self._always:
            return dict(json.loads(canonical))
        human = gate.human_input
        if human is None:
            raise ToolRefusedError(
                f"Tool {name!r} was not approved: it needs a person's yes and channel "
                f"{gate.channel_id!r} has no human-input handler to ask"
            )
        if policy.approvers and not human.names_approvers:
            raise ToolRefusedError(
                f"Tool {name!r} was not approved: it needs named approvers and channel "
                f"{gate.channel_id!r} cannot tell who is speaking"
            )
        tool = gate.toolset.get(name)
        action = phrase_action(name, "" if tool is None else tool.description, arguments, policy)
        asker = _asker(human, policy)
        context = current_tool_context()
        details: dict[str, Any] = {
            **context.details,
            "risk": context.details.get("risk") or policy.risk,  # a hook's per-call tier wins
            "approval": {"tool": name, "arguments": json.loads(canonical)},
        }
        channel_type = context.channel_type
        if policy.operator is not None:
            details["addressed"] = [policy.operator]
            channel_type = ChannelType.AI  # nobody on the call is asked: the board is
        opened: list[PendingInput] = []

        def created(pending: PendingInput) -> None:
            opened.append(pending)
            asked.append(pending)

        try:
            with tool_context(replace(context, details=details, channel_type=channel_type)):
                text = await asker.ask(
                    _CONFIRM,
                    policy.confirm_arguments(action),
                    channel_type=channel_type,
                    on_created=created,
                )
        except ToolRefusedError as exc:
            raise ToolRefusedError(f"Tool {name!r} was not approved: {exc}") from exc
        except ToolFailedError as exc:
            raise ToolRefusedError(f"Tool {name!r} was not approved: {exc}") from exc
        except RuntimeError as exc:
            if type(exc) is not RuntimeError:
                raise
            raise ToolRefusedError(
                f"Tool {name!r} was not approved: the approval request was given up ({exc})"
            ) from exc
        decision = read_decision(text)
        if not decision.approved:
            raise ToolRefusedError(f"Tool {name!r} was not approved: the answer was no")
        needed = policy.quorum or 1
        if policy.approvers and len(set(decision.approvers)) < needed:
            raise ToolRefusedError(
                f"Tool {name!r} was not approved: it needs a yes from {needed} of "
                f"{list(policy.approvers)!r}, counted one per approver, and the answer was "
                "not such a quorum"
            )
        if decision.always and policy.allow_always and opened:
            self._grant(key, opened[0], human, decision.by)
        return dict(json.loads(canonical))

    def _grant(
        self,
        key: tuple[str, str, str],
        request: PendingInput,
        human: HumanInputToolHandler,
        by: str | None,
    ) -> None:
        channel_id, room_id, tool = key
        grant = AlwaysGrant(tool, channel_id, room_id, by, request.pending_id, utc_now())
        self._always[key] = grant
        self._handlers[request.pending_id] = human.handler
        human.handler.tell(
            request.pending_id, "always_granted", {"tool": tool, "room": room_id, "by": by}
        )
        logger.info("tool %r approved for the rest of the call in room %r by %s", tool, room_id, by)


def _asker(human: HumanInputToolHandler, policy: ApprovalPolicy) -> HumanInputToolHandler:
    """The handler that asks ``policy``'s approval: the channel's own (a conference's
    addresses approvers and counts a quorum) seen with ``ConfirmAction`` served under the
    policy's timeout and deadline; for an operator, a plain one on the same request handler."""
    if policy.operator is not None:
        asker = HumanInputToolHandler({_CONFIRM}, timeout=policy.timeout, handler=human.handler)
        asker.policies = policy.deadline_policies()
        return asker
    view = copy.copy(human)
    view.tool_names = human.tool_names | {_CONFIRM}
    view.timeout = policy.timeout
    policies = dict(human.policies)
    policies.pop(_CONFIRM, None)
    policies.update(policy.deadline_policies())
    view.policies = policies
    return view
