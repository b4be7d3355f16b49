"""``HumanInputToolHandler``: the tools that ask a person, served by create + wait."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from .._checks import positive_seconds
from .._exceptions import (
    HumanInputRejectedError,
    ToolFailedError,
    ToolRefusedError,
    UnservedToolCallError,
)
from .._types import ChannelType
from ..responder._risk import Risk, risk_of
from ..tools._tools import AITool, current_tool_context
from ._deadline import DeadlinePolicy, DeadlineTimers, Escalation, build_policies
from ._human_input import HumanInputHandler
from ._pending import PendingInput, PendingInputEvent

__all__ = ["HumanInputToolHandler"]

logger = logging.getLogger("voice_hitl.human_input")


class HumanInputToolHandler:
    """Serves the human-input tools (e.g. ``AskUserQuestion``) by asking a person.

    Give it to a channel as ``human_input_handler=``: the channel offers ``tool_definitions``
    to the model and serves ``tool_names`` itself, before its ``tool_handler``, under this
    handler's ``timeout``. Called directly as a tool handler it asks on an AI door.

    Args:
        tool_names: The tools it serves.
        timeout: Seconds to wait for a person before the call fails.
        handler: A shared :class:`HumanInputHandler`; a new one by default.
        tool_definitions: Definitions that put these tools in the model's turn.
        default: Per tool, the answer taken when nobody answers by the deadline (the model
            reads ``"via": "default"`` and that nobody answered).
        escalate_to: Per tool, an :class:`Escalation` (or a name: escalates at half the
            timeout): who takes the request over when nobody answered after ``after`` seconds.
        vetoable: Tools that proceed at the deadline unless somebody vetoed (rejected) first;
            a mapping gives the answer taken when nobody did (``"proceed"`` by default).

    Raises:
        ValueError: ``tool_names`` is empty, a definition or a policy names a tool it does
            not serve, ``timeout`` is not a finite number of seconds above zero, or a policy
            is inconsistent (see :func:`~voice_hitl.human._deadline.build_policies`).
    """

    names_approvers: ClassVar[bool] = False
    """True when this handler tells who is speaking and counts named approvers with a quorum
    (a conference's); an approval policy naming approvers needs one."""

    def __init__(
        self,
        tool_names: Iterable[str],
        *,
        timeout: float = 300.0,
        handler: HumanInputHandler | None = None,
        tool_definitions: Iterable[AITool] = (),
        default: Mapping[str, Any] | None = None,
        escalate_to: Mapping[str, Escalation | str | Sequence[str]] | None = None,
        vetoable: Mapping[str, Any] | Iterable[str] | None = None,
    ) -> None:
        names = frozenset(tool_names)
        if not names:
            raise ValueError("HumanInputToolHandler needs at least one tool name")
        timeout = positive_seconds("timeout", timeout)
        definitions = tuple(tool_definitions)
        for definition in definitions:
            if definition.name not in names:
                raise ValueError(
                    f"tool definition {definition.name!r} is not among tool_names {sorted(names)}"
                )
        self.tool_names = names
        self.timeout = timeout
        self.handler = handler if handler is not None else HumanInputHandler()
        self.tool_definitions = definitions
        self.policies: Mapping[str, DeadlinePolicy] = build_policies(
            names, timeout, default=default, escalate_to=escalate_to, vetoable=vetoable
        )

    def risk_of(self, event: PendingInputEvent) -> Risk:
        """The request's risk tier (`voice_hitl.responder._risk.risk_of`): the call's own, else its
        tool definition's, else the tool's default.

        Raises:
            ValueError: the call carries a risk that is neither "low" nor "high".
        """
        declared = next(
            (d.risk for d in self.tool_definitions if d.name == event.tool_name), None
        )
        return risk_of(event.tool_name, event.arguments, event.context, declared)

    def serves(self, name: str) -> bool:
        """True when this handler serves the tool ``name``."""
        return name in self.tool_names

    async def __call__(self, name: str, arguments: dict[str, Any], /) -> str:
        """Serve a call as a plain tool handler, on an AI channel's door.

        Cancellation: withdraws the request (see :meth:`ask`).
        """
        return await self.ask(name, arguments, channel_type=ChannelType.AI)

    async def ask(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        channel_type: ChannelType | None = None,
        on_created: Callable[[PendingInput], None] | None = None,
    ) -> str:
        """Ask a person and return the answer.

        Room, call id, channel and actor come from :func:`current_tool_context`;
        ``channel_type`` names the door (the context's by default). ``on_created`` is called
        with the request as soon as it exists (already answerable, not yet waited on), so a
        channel can route answers to it.

        A tool with a deadline policy answers, escalates or proceeds as declared (see
        :mod:`voice_hitl.human._deadline`); the request's ``context`` says what its deadline does.

        Raises:
            UnservedToolCallError: ``name`` is not one of ``tool_names``.
            ToolFailedError: Nobody answered within ``timeout`` (and no policy answered).
            ToolRefusedError: The request was rejected; the message says why.
            RuntimeError: The handler gave the request up (closed, released).

        Cancellation: withdraws the request; a later answer is not taken.
        """
        if name not in self.tool_names:
            raise UnservedToolCallError(name)
        context = current_tool_context()
        if channel_type is not None and channel_type is not context.channel_type:
            context = replace(context, channel_type=channel_type)
        policy = self.policies.get(name)
        details = context.details
        if policy is not None:
            details = {**details, "deadline_policy": policy.describe(self.timeout)}
        pending = await self.handler.create(
            name,
            arguments,
            room_id=context.room_id,
            tool_call_id=context.tool_call_id,
            channel_id=context.channel_id,
            channel_type=context.channel_type,
            actor_id=context.actor_id,
            timeout=self.timeout,
            context=details,
        )
        if on_created is not None:
            try:
                on_created(pending)
            except BaseException:
                self.handler.release(pending.pending_id)
                raise
        timers = None
        if policy is not None:
            timers = DeadlineTimers(self.handler, pending, policy, self.timeout, self.escalate)
        try:
            wait_timeout = self.timeout if timers is None else timers.wait_timeout
            return await self.handler.wait(pending.pending_id, timeout=wait_timeout)
        except TimeoutError:
            raise ToolFailedError(
                f"Human input timed out after {self.timeout:g}s for tool {name!r}"
            ) from None
        except HumanInputRejectedError as rejected:
            raise ToolRefusedError(f"Human input rejected: {rejected.reason}") from rejected
        finally:
            if timers is not None:
                timers.cancel()

    def escalate(self, pending: PendingInput, escalation: Escalation, remaining: float) -> None:
        """Re-address an unanswered request (called by its ``escalate_to`` policy).

        Here the request stays open to whoever can answer it (the operator board shows it)
        and observers get an ``escalated`` note naming the targets and the time left; a
        conference re-addresses it to the named participants.
        """
        self.note_escalation(pending, escalation, remaining, readdressed=())

    def note_escalation(
        self,
        pending: PendingInput,
        escalation: Escalation,
        remaining: float,
        *,
        readdressed: Sequence[str],
        problem: str = "",
    ) -> None:
        """Tell observers (the journal, the board) that a request was escalated."""
        data: dict[str, Any] = {
            "to": list(escalation.targets),
            "after": escalation.after,
            "remaining": round(remaining, 3),
            "readdressed": list(readdressed),
        }
        if problem:
            data["problem"] = problem
        self.handler.note(pending.pending_id, "escalated", data)
        logger.info(
            "request %s (%s) escalated to %s with %gs left%s",
            pending.pending_id,
            pending.tool_name,
            ", ".join(escalation.targets),
            remaining,
            f" ({problem})" if problem else "",
        )

    def __repr__(self) -> str:
        return f"HumanInputToolHandler({sorted(self.tool_names)!r}, timeout={self.timeout:g})"
