"""Approval policies: which regular tools may not run without a person's yes, and who says it.

A tool is declared as needing approval per tool (``ApprovalPolicy`` under its name) or by a rule
on the call (``when``: a callable that sees the tool's name and arguments, e.g. "only transfers
over 100"). The policy says the risk tier of the spoken yes, who approves (the caller by
default; named participants with a quorum; or an operator role, asked on the board and not on
the call), how long the person has, what the deadline does (deny by default) and how the
question reads the action back.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._checks import positive_seconds
from .._edge import MAX_ARGUMENT_NUMBER, EdgeError, check_value
from .._exceptions import ToolArgumentsError
from ..human._deadline import DeadlinePolicy, Escalation, build_policies
from ..responder._risk import Risk

__all__ = [
    "ALWAYS_HINT",
    "ApprovalPolicy",
    "ApprovalRule",
    "asks_always",
    "canonical_arguments",
    "phrase_action",
    "read_back",
]

ApprovalRule = Callable[[str, Mapping[str, Any]], bool]
"""``rule(tool_name, arguments) -> bool``: True when this call needs a person's yes."""

OnDeadline = Literal["deny", "proceed"]

_CONFIRM = "ConfirmAction"
ALWAYS_HINT = " (say confirm always to allow it for the rest of the call)"
"""What an approval question adds after the action when "always" is allowed."""
_LIMITS = frozenset({"not", "no", "never", "once", "time", "only", "just", "but", "except"})
"""Words that make an "always" ambiguous ("not always", "just this once", "only this time")."""
_EXACT = MAX_ARGUMENT_NUMBER


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """How a tool call is approved before its handler runs.

    Args:
        risk: The tier of the spoken yes (``"high"``: the challenge word or keypad 1); a
            ``BEFORE_TOOL_USE`` hook's ``HookResult.modify(risk=...)`` sets one call's tier.
        approvers: Named participants who approve (a conference); empty: the caller.
        quorum: How many distinct ``approvers`` must say yes (1 .. len(approvers)).
        operator: An operator role (a board queue) that approves instead of the caller: the
            request is not asked on the call; the board lists it for that role.
        when: A rule on the call; the call needs approval only when it returns True (a rule
            that raises asks, failing closed).
        timeout: Seconds the approver has.
        on_deadline: ``"deny"`` (the default: the tool does not run) or ``"proceed"`` (it
            runs unless somebody said no first).
        escalate_to: Who takes the question over when nobody answered (see
            :class:`~voice_hitl.Escalation`).
        phrasing: How the question reads the action: a template with ``{argument}`` fields
            (``"move {amount} pounds to {to}"``) or a callable of the arguments; by default the
            tool's description (or name) and its arguments are read back.
        allow_always: The person may approve the tool for the rest of the call ("confirm
            always"); each grant is journaled and can be revoked.

    Raises:
        ValueError: An inconsistent policy (a quorum without approvers or out of range,
            approvers and an operator together, a bad timeout or deadline action).
    """

    risk: Risk = "high"
    approvers: Sequence[str] = ()
    quorum: int | None = None
    operator: str | None = None
    when: ApprovalRule | None = None
    timeout: float = 60.0
    on_deadline: OnDeadline = "deny"
    escalate_to: Escalation | str | None = None
    phrasing: str | Callable[[Mapping[str, Any]], str] | None = None
    allow_always: bool = True

    def __post_init__(self) -> None:
        if self.risk not in ("low", "high"):
            raise ValueError(f"ApprovalPolicy.risk must be 'low' or 'high', got {self.risk!r}")
        approvers = (self.approvers,) if isinstance(self.approvers, str) else self.approvers
        approvers = tuple(approvers)
        if not all(isinstance(a, str) and a.strip() for a in approvers):
            raise ValueError(f"ApprovalPolicy.approvers must name people, got {approvers!r}")
        object.__setattr__(self, "approvers", approvers)
        if self.quorum is not None:
            if not approvers:
                raise ValueError("ApprovalPolicy.quorum needs approvers")
            if isinstance(self.quorum, bool) or not 1 <= self.quorum <= len(set(approvers)):
                raise ValueError(
                    f"ApprovalPolicy.quorum must be between 1 and {len(set(approvers))}, "
                    f"got {self.quorum!r}"
                )
        if self.operator is not None and (not isinstance(self.operator, str) or not self.operator):
            raise ValueError(f"ApprovalPolicy.operator must name a role, got {self.operator!r}")
        if self.operator is not None and approvers:
            raise ValueError("ApprovalPolicy: approvers and operator cannot both approve")
        if self.on_deadline not in ("deny", "proceed"):
            raise ValueError(
                f"ApprovalPolicy.on_deadline must be 'deny' or 'proceed', got {self.on_deadline!r}"
            )
        object.__setattr__(self, "timeout", positive_seconds("timeout", self.timeout))
        if self.when is not None and not callable(self.when):
            raise TypeError("ApprovalPolicy.when must be callable(tool_name, arguments)")
        self.deadline_policies()  # raises now, naming what is wrong, not at the first call

    def deadline_policies(self) -> dict[str, DeadlinePolicy]:
        """The deadline policy of the ``ConfirmAction`` request this policy opens."""
        vetoable = {_CONFIRM: True} if self.on_deadline == "proceed" else None
        escalate = {_CONFIRM: self.escalate_to} if self.escalate_to is not None else None
        return build_policies(
            frozenset({_CONFIRM}), self.timeout, escalate_to=escalate, vetoable=vetoable
        )

    def applies(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """True when this call needs approval (a rule that raises says yes: fail closed)."""
        rule = self.when
        if rule is None:
            return True
        try:
            return bool(rule(name, arguments))
        except Exception:
            return True

    def confirm_arguments(self, action: str) -> dict[str, Any]:
        """The ``ConfirmAction`` arguments that ask this policy's approvers about ``action``."""
        arguments: dict[str, Any] = {"action": action}
        if self.approvers:
            arguments["approvers"] = list(self.approvers)
            arguments["quorum"] = self.quorum or 1
        return arguments


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """The one text form of a call's arguments an approval is bound to (sorted keys, no
    spaces, a whole number written as an integer): equal arguments give equal text whatever
    their key order or number form (``10``, ``10.0`` and ``1e1`` all read ``10``).

    Raises:
        ToolArgumentsError: A number that is not finite (``NaN``, ``Infinity``) or beyond
            ±2**53, naming where it is.
    """
    try:
        check_value(arguments, what="the arguments", max_number=_EXACT)
    except EdgeError as exc:
        raise ToolArgumentsError(f"Invalid arguments: {exc.message}") from None
    whole = _whole(arguments)
    return json.dumps(whole, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _whole(value: Any) -> Any:
    """``value`` with every float that is a whole number (within 2**53) as an int."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) <= _EXACT:
            return int(value)
        return value
    if isinstance(value, Mapping):
        return {key: _whole(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_whole(item) for item in value]
    return value


def _spoken(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ", ".join(_spoken(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k.replace('_', ' ')} {_spoken(v)}" for k, v in value.items())
    return json.dumps(value)


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def read_back(
    name: str,
    description: str,
    arguments: Mapping[str, Any],
    phrasing: str | Callable[[Mapping[str, Any]], str] | None,
) -> str:
    """The action as the question reads it back, from the arguments.

    A template's fields are filled from the arguments (a field the call lacks falls back to
    the default phrasing); a callable gets the arguments; by default the tool's description
    (else its name) is followed by every argument: "Transfer money: amount 250, to savings".

    Raises:
        TypeError: A callable phrasing returned something other than text.
    """
    if callable(phrasing):
        text = phrasing(arguments)
        if not isinstance(text, str):
            raise TypeError(f"the phrasing of tool {name!r} returned {type(text).__name__}")
        return text
    if isinstance(phrasing, str) and _fields(phrasing) <= arguments.keys():
        return phrasing.format_map({k: _spoken(v) for k, v in arguments.items()})
    head = description.strip().rstrip(".") or name.replace("_", " ")
    if not arguments:
        return head
    return f"{head}: {_spoken(arguments)}"


def phrase_action(
    name: str, description: str, arguments: Mapping[str, Any], policy: ApprovalPolicy
) -> str:
    """The ``action`` of the approval question (with the "always" hint when allowed)."""
    action = read_back(name, description, arguments, policy.phrasing)
    if policy.allow_always:
        action += ALWAYS_HINT
    return action


def asks_always(words: Sequence[str]) -> bool:
    """True when the words of a yes ask for "always" unambiguously: "always" is among them
    and nothing limits or negates it ("not always", "just this once", "only this time")."""
    return "always" in words and not _LIMITS.intersection(words)
