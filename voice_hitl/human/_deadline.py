"""Deadline policies: what a human-input tool does when nobody answers in time.

Declared per tool on :class:`~voice_hitl.HumanInputToolHandler`:

- ``default={"AskUserQuestion": "savings"}``: at the deadline the request is answered with
  that value, ``via="default"``; the model reads that nobody answered and the default was taken.
- ``escalate_to={"ConfirmAction": Escalation("supervisor", after=20)}``: after ``after``
  seconds the request is re-addressed (another participant in a conference, an operator queue,
  a named role) for the time that is left; observers (the journal) see an ``escalated`` note.
- ``vetoable={"ShipDeploy": "proceed"}``: notify, then proceed at the deadline unless somebody
  vetoed (rejected) first; the model reads ``via="no_veto"``.

A policy's timers run beside the request's wait, on its loop, and are cancelled however the
call ends, so a request settled in any other way is never answered by a policy.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._checks import positive_seconds
from ._human_input import HumanInputHandler
from ._pending import PendingInput, PendingInputStatus

__all__ = ["DeadlinePolicy", "DeadlineTimers", "Escalation", "build_policies"]

logger = logging.getLogger("voice_hitl.deadline")

_UNSET: Any = object()

DEFAULT_VIA = "default"
"""The ``via`` of an answer a ``default=`` policy gave."""
NO_VETO_VIA = "no_veto"
"""The ``via`` of an answer a ``vetoable=`` policy gave."""


@dataclass(frozen=True, slots=True)
class Escalation:
    """Re-address an unanswered request to ``to`` after ``after`` seconds.

    Args:
        to: Who takes the request over: a participant's name or id in a conference, several
            of them, or the name of a queue or role (``"operator"``, ``"supervisor"``).
        after: Seconds after the request opened; must be less than the tool's timeout.
    """

    to: str | Sequence[str]
    after: float

    def __post_init__(self) -> None:
        targets = (self.to,) if isinstance(self.to, str) else tuple(self.to)
        if not targets or not all(isinstance(t, str) and t.strip() for t in targets):
            raise ValueError(f"Escalation.to must name someone, got {self.to!r}")
        object.__setattr__(self, "to", targets)
        object.__setattr__(self, "after", positive_seconds("Escalation.after", self.after))

    @property
    def targets(self) -> tuple[str, ...]:
        """The names the request is re-addressed to."""
        return tuple(self.to)


@dataclass(frozen=True, slots=True)
class DeadlinePolicy:
    """One tool's deadline policy (built by :func:`build_policies`)."""

    default: Any = _UNSET
    """The answer taken at the deadline (``default=`` or the proceed answer of ``vetoable=``)."""
    vetoable: bool = False
    escalation: Escalation | None = None

    @property
    def answers_at_deadline(self) -> bool:
        """True when the deadline gives an answer instead of a timeout."""
        return self.default is not _UNSET

    def describe(self, timeout: float) -> dict[str, Any]:
        """What a person (or the board) is told about the deadline."""
        described: dict[str, Any] = {}
        if self.vetoable:
            described["on_deadline"] = "proceed unless vetoed"
            described["proceeds_with"] = self.default
        elif self.answers_at_deadline:
            described["on_deadline"] = "default answer"
            described["default"] = self.default
        if self.escalation is not None:
            described["escalate_to"] = list(self.escalation.targets)
            described["escalate_after"] = self.escalation.after
        described["timeout"] = timeout
        return described

    def deadline_answer(self, timeout: float) -> tuple[str, str]:
        """The text the model reads when the deadline passes, and its ``via``."""
        if self.vetoable:
            note = f"Nobody vetoed within {timeout:g}s; proceeding."
            body = {"answer": self.default, "via": NO_VETO_VIA, "vetoed": False, "note": note}
            return json.dumps(body), NO_VETO_VIA
        note = f"Nobody answered within {timeout:g}s; the default answer was taken."
        return json.dumps({"answer": self.default, "via": DEFAULT_VIA, "note": note}), DEFAULT_VIA


def _per_tool(name: str, value: Mapping[str, Any] | Iterable[str] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        raise TypeError(f"{name} must map tool names to values, not be one string")
    if isinstance(value, Mapping):
        return dict(value)
    return {tool: _UNSET for tool in value}


def _json_value(option: str, tool: str, value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{option}[{tool!r}] must be a JSON value the model can read: {exc}"
        ) from None
    return value


def build_policies(
    tool_names: frozenset[str],
    timeout: float,
    *,
    default: Mapping[str, Any] | None = None,
    escalate_to: Mapping[str, Escalation | str | Sequence[str]] | None = None,
    vetoable: Mapping[str, Any] | Iterable[str] | None = None,
) -> dict[str, DeadlinePolicy]:
    """Check the per-tool options of a handler and combine them into policies.

    ``vetoable`` may list tool names (they proceed with ``"proceed"``) or map them to the
    answer taken when nobody vetoed. An ``escalate_to`` value that is a name (or names)
    escalates at half the timeout.

    Raises:
        ValueError: An option names a tool the handler does not serve, a tool is both
            ``default`` and ``vetoable``, an escalation is not before the timeout, or a
            default is not a JSON value.
        TypeError: An option is one string instead of a mapping.
    """
    defaults = _per_tool("default", default)
    escalations = _per_tool("escalate_to", escalate_to)
    vetoes = _per_tool("vetoable", vetoable)
    options = (("default", defaults), ("escalate_to", escalations), ("vetoable", vetoes))
    for option, tools in options:
        unknown = sorted(set(tools) - tool_names)
        if unknown:
            raise ValueError(
                f"{option} names tools this handler does not serve: {unknown} "
                f"(it serves {sorted(tool_names)})"
            )
    both = sorted(set(defaults) & set(vetoes))
    if both:
        raise ValueError(f"a tool takes either default or vetoable, not both: {both}")
    policies: dict[str, DeadlinePolicy] = {}
    for tool in sorted(set(defaults) | set(escalations) | set(vetoes)):
        escalation = escalations.get(tool)
        if escalation is not None and not isinstance(escalation, Escalation):
            escalation = Escalation(escalation, after=timeout / 2)
        if escalation is not None and not escalation.after < timeout:
            raise ValueError(
                f"escalate_to[{tool!r}] after {escalation.after:g}s is not before the "
                f"timeout of {timeout:g}s"
            )
        if tool in vetoes:
            answer = vetoes[tool]
            answer = "proceed" if answer is _UNSET else _json_value("vetoable", tool, answer)
            policies[tool] = DeadlinePolicy(answer, vetoable=True, escalation=escalation)
        elif tool in defaults:
            answer = _json_value("default", tool, defaults[tool])
            policies[tool] = DeadlinePolicy(answer, escalation=escalation)
        else:
            policies[tool] = DeadlinePolicy(escalation=escalation)
    return policies


Escalate = Callable[[PendingInput, Escalation, float], None]
"""Re-addresses a request: ``escalate(pending, escalation, seconds_left)``."""


class DeadlineTimers:
    """A request's policy timers, armed on the running loop; :meth:`cancel` disarms them."""

    def __init__(
        self,
        handler: HumanInputHandler,
        pending: PendingInput,
        policy: DeadlinePolicy,
        timeout: float,
        escalate: Escalate,
    ) -> None:
        loop = asyncio.get_running_loop()
        self._handler = handler
        self._pending = pending
        self._policy = policy
        self._timeout = timeout
        self._handles: list[asyncio.TimerHandle] = []
        escalation = policy.escalation
        if escalation is not None:
            remaining = timeout - escalation.after
            self._handles.append(
                loop.call_later(escalation.after, self._escalate, escalate, escalation, remaining)
            )
        if policy.answers_at_deadline:
            self._handles.append(loop.call_later(timeout, self._answer))

    @property
    def wait_timeout(self) -> float | None:
        """The timeout the request's wait keeps: none when the deadline gives an answer."""
        return None if self._policy.answers_at_deadline else self._timeout

    def _escalate(self, escalate: Escalate, escalation: Escalation, remaining: float) -> None:
        if self._pending.status is not PendingInputStatus.PENDING:
            return
        try:
            escalate(self._pending, escalation, remaining)
        except Exception:
            logger.exception("escalating request %s failed", self._pending.pending_id)

    def _answer(self) -> None:
        text, via = self._policy.deadline_answer(self._timeout)
        if self._handler.resolve(self._pending.pending_id, text, via=via):
            logger.info(
                "request %s (%s): nobody answered in %gs; %s taken",
                self._pending.pending_id,
                self._pending.tool_name,
                self._timeout,
                "the proceed answer" if self._policy.vetoable else "the default",
            )

    def cancel(self) -> None:
        """Disarm every timer (idempotent)."""
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
