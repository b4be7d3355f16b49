"""One round of a text agent's tool loop: every call of a model response, served at once.

Who serves a call: one the provider already ran (:attr:`AIToolCall.served`) is only reported;
a pending call to a tool the channel does not offer goes to the channel's
:class:`ExternalToolHandler`, when it has one; every other call is the channel's own and goes
through its :class:`ToolGate` (door ``ai``), so ``BEFORE_TOOL_USE`` can refuse it even on a
channel without a ``tool_handler``.

The calls of a round run concurrently, each in a task the round owns: a human-input call waits
for its person while the others complete. Cancelling the round (the turn was cancelled, the
channel closed) cancels the calls and waits for their teardown; a call cut before it started is
still reported (``cancelled``), and an external one still reaches ``on_tool_cancelled``.

A call the external handler approves is then held by the gate's approval rules (a tool that
needs a person's yes: the runtime gets the approval only after it, for exactly those
arguments; a no or nobody to ask is a refusal, reaching ``on_tool_refused``).

While the external handler decides, a ``HumanInputHandler`` it asks through (with no
notifier of its own for the request's channel) is notified through the kit's
``ON_USER_INPUT_REQUIRED`` hooks, and its requests carry the turn's author as ``actor_id``:
the runtime needs no ``kit.attach_human_input(...)`` step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from .._exceptions import ChannelClosedError, ToolArgumentsError
from .._types import ChannelType
from ..human._human_input import ambient_input
from ..tools._calls import Door, ToolCall, ToolCallReport, ToolOutcome, ToolResult
from ..tools._gate import ToolGate
from ..tools._hooks import HookTrigger
from ..tools._schema import parse_arguments
from ..tools._tools import ToolCallContext, current_tool_context, tool_context
from ._ai_external import (
    ExternalToolHandler,
    Reporter,
    ToolDecision,
    call_accepting,
    external_report,
)
from ._ai_policy import approval_step
from ._ai_types import AIMessage, AIToolCall

__all__ = ["CallServer", "current_tool_actor_id"]

logger = logging.getLogger("voice_hitl.ai")

TURN_CANCELLED = "the turn was cancelled"


def current_tool_actor_id() -> str | None:
    """Who raised the tool call being served: the author of its turn (None without one)."""
    return current_tool_context().actor_id


class CallServer:
    """Serves the calls of a channel's rounds (see the module docstring).

    Args:
        gate: The channel's gate (its own tools, human-input tools first).
        external: Decides on pending calls to tools the channel does not offer.
    """

    def __init__(self, gate: ToolGate, external: ExternalToolHandler | None) -> None:
        self.gate = gate
        self.external = external
        self._tasks: set[asyncio.Task[AIMessage | None]] = set()

    # -- reports ---------------------------------------------------------------------------

    async def _observe(
        self,
        call: AIToolCall,
        arguments: Mapping[str, Any],
        room_id: str,
        actor_id: str | None,
        result: ToolResult,
    ) -> None:
        kit = self.gate.kit
        if kit is None:
            return
        report = ToolCallReport(
            call.name,
            MappingProxyType(dict(arguments)),
            call.id,
            room_id,
            self.gate.channel_id,
            ChannelType.AI,
            actor_id,
            result.outcome,
            result.text,
            result.error_detail,
            Door.AI,
        )
        ctx = kit.context(room_id, self.gate.channel_id, ChannelType.AI)
        await kit.hooks.observe(HookTrigger.ON_TOOL_CALL, report, ctx)

    async def report_served(self, call: AIToolCall, room_id: str, actor_id: str | None) -> None:
        """Report a call the provider ran itself; it is never run here.

        Cancellation: safe; observers not yet run do not run.
        """
        served = call.served
        assert served is not None
        gate_call = self._gate_call(call, room_id, actor_id)
        await self.gate.report_served(gate_call, served.result, served.is_error)

    # -- a round ---------------------------------------------------------------------------

    async def run(
        self, calls: Iterable[AIToolCall], room_id: str, actor_id: str | None
    ) -> list[AIMessage]:
        """Serve pending calls concurrently; one ``tool`` message per call, in call order.

        Cancellation: every call is cancelled (human-input requests withdrawn, external
        handlers told through ``on_tool_cancelled``) and awaited before this raises.
        """
        calls = list(calls)
        try:
            await asyncio.sleep(0)  # a turn cancelled as the round starts cuts every call
        except asyncio.CancelledError as cancelled:
            reason = str(cancelled.args[0]) if cancelled.args else TURN_CANCELLED
            await self.withdraw(calls, room_id, actor_id, reason)
            raise
        started: set[int] = set()  # by position: a model may repeat or omit call ids
        tasks = [
            asyncio.create_task(
                self._serve(call, room_id, actor_id, started, index), name=f"ai-call-{call.id}"
            )
            for index, call in enumerate(calls)
        ]
        self._tasks.update(tasks)
        try:
            await asyncio.wait(tasks)
        finally:
            for task in tasks:
                task.cancel(TURN_CANCELLED)
            while not all(task.done() for task in tasks):
                try:
                    await asyncio.wait(tasks)
                except asyncio.CancelledError:  # cancelled again: the calls are ending anyway
                    continue
            self._tasks.difference_update(tasks)
            for index, (call, task) in enumerate(zip(calls, tasks, strict=True)):
                if index not in started:  # cut before it started: report it all the same
                    await self._withdraw_unstarted(call, room_id, actor_id, _reason(task))
        messages: list[AIMessage] = []
        for task in tasks:
            if task.cancelled():  # cancelled from outside the turn: the channel closed
                raise ChannelClosedError(_reason(task))
            message = task.result()
            if message is not None:
                messages.append(message)
        return messages

    async def cancel_all(self, reason: str) -> None:
        """Cancel every call still running and wait for its teardown.

        Cancellation: the calls are cancelled first; cancelling stops only the wait.
        """
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel(reason)
        if tasks:
            await asyncio.wait(tasks)

    async def withdraw(
        self, calls: Iterable[AIToolCall], room_id: str, actor_id: str | None, reason: str
    ) -> None:
        """Report calls the turn cut before they started (``cancelled`` with ``reason``); an
        external one reaches ``on_tool_cancelled``.

        Cancellation: the calls not yet reported are left unreported.
        """
        for call in calls:
            await self._withdraw_unstarted(call, room_id, actor_id, reason)

    async def _withdraw_unstarted(
        self, call: AIToolCall, room_id: str, actor_id: str | None, reason: str
    ) -> None:
        if self._is_external(call):
            try:
                arguments = parse_arguments(call.name, call.arguments)
            except ToolArgumentsError:
                arguments = {}
            await self._tell_cancelled(call, arguments, room_id, actor_id, reason)
        else:
            self.gate.report_withdrawn(self._gate_call(call, room_id, actor_id), reason)

    def _is_external(self, call: AIToolCall) -> bool:
        return self.external is not None and call.name not in self.gate.toolset

    def _gate_call(self, call: AIToolCall, room_id: str, actor_id: str | None) -> ToolCall:
        return ToolCall(call.name, call.arguments, call.id, room_id, actor_id, Door.AI)

    async def _serve(
        self, call: AIToolCall, room_id: str, actor_id: str | None, started: set[int], index: int
    ) -> AIMessage | None:
        started.add(index)
        if self._is_external(call):
            return await self._serve_external(call, room_id, actor_id)
        result = await self.gate.call(self._gate_call(call, room_id, actor_id))
        return AIMessage(
            "tool", result.text, tool_call_id=call.id, tool_name=call.name, is_error=result.is_error
        )

    # -- the external handler --------------------------------------------------------------

    def _reporter(
        self, call: AIToolCall, arguments: Mapping[str, Any], room_id: str, actor_id: str | None
    ) -> Reporter:
        reported = False

        async def report(outcome: ToolOutcome, text: str, detail: str) -> None:
            nonlocal reported
            if reported:
                return
            reported = True
            result = ToolResult(outcome, text, detail)
            await self._observe(call, arguments, room_id, actor_id, result)

        return report

    async def _tell_cancelled(
        self,
        call: AIToolCall,
        arguments: dict[str, Any],
        room_id: str,
        actor_id: str | None,
        reason: str,
    ) -> None:
        handler = self.external
        assert handler is not None
        with external_report(self._reporter(call, arguments, room_id, actor_id), self.gate):
            try:
                await call_accepting(
                    handler.on_tool_cancelled,
                    call.name,
                    arguments,
                    tool_call_id=call.id,
                    room_id=room_id,
                    reason=reason,
                )
            except Exception:
                logger.exception("on_tool_cancelled failed for %r (%s)", call.name, call.id)

    async def _serve_external(
        self, call: AIToolCall, room_id: str, actor_id: str | None
    ) -> AIMessage:
        handler = self.external
        assert handler is not None
        try:
            arguments = parse_arguments(call.name, call.arguments)
        except ToolArgumentsError as exc:  # cut arguments: the channel refuses it itself
            result = ToolResult.error("refused", str(exc), str(exc))
            await self._observe(call, {}, room_id, actor_id, result)
            return _tool_message(call, result.text, True)
        reporter = self._reporter(call, arguments, room_id, actor_id)
        context = ToolCallContext(room_id, call.id, self.gate.channel_id, ChannelType.AI, actor_id)
        failure: BaseException | None = None
        decision: object = None
        kit = self.gate.kit
        ambient = (
            contextlib.nullcontext()
            if kit is None
            else ambient_input(kit.notify_input_required, actor_id)
        )
        with tool_context(context), external_report(reporter, self.gate), ambient:
            try:
                decision = await call_accepting(
                    handler.process_tool_call,
                    call.name,
                    dict(arguments),
                    room_id=room_id,
                    tool_call_id=call.id,
                    channel_id=self.gate.channel_id,
                    actor_id=actor_id,
                )
                if isinstance(decision, ToolDecision) and decision.approved:
                    # The one rule on this door too: a tool that needs a person's yes is not
                    # run by the runtime until that yes (for exactly these arguments).
                    gate_call = self._gate_call(call, room_id, actor_id)
                    decision = await approval_step(self.gate, gate_call, arguments)
            except asyncio.CancelledError as cancelled:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    reason = str(cancelled.args[0]) if cancelled.args else TURN_CANCELLED
                    await self._tell_cancelled(call, arguments, room_id, actor_id, reason)
                    raise
                failure = cancelled  # raised inside the handler, not a cancellation of it
            except Exception as exc:
                failure = exc
            if failure is None and not isinstance(decision, ToolDecision):
                failure = TypeError(
                    f"process_tool_call returned {type(decision).__name__}, not a ToolDecision"
                )
            if failure is not None or not isinstance(decision, ToolDecision):
                logger.error(
                    "deciding on external call %r (%s) failed",
                    call.name,
                    call.id,
                    exc_info=failure,
                )
                message = f"Tool {call.name!r} failed ({type(failure).__name__})"
                result = ToolResult.error("failed", message, repr(failure))
                await self._observe(call, arguments, room_id, actor_id, result)
                return _tool_message(call, result.text, True)
            if decision.approved:
                return AIMessage("tool", tool_call_id=call.id, tool_name=call.name, approved=True)
            try:
                await call_accepting(
                    handler.on_tool_refused,
                    call.name,
                    dict(arguments),
                    decision.reason,
                    tool_call_id=call.id,
                    room_id=room_id,
                    detail=decision.detail,
                )
            except Exception:
                logger.exception("on_tool_refused failed for tool call %r (%s)", call.name, call.id)
        return _tool_message(call, decision.reason, True, approved=False)


def _tool_message(
    call: AIToolCall, text: str, is_error: bool, *, approved: bool | None = None
) -> AIMessage:
    return AIMessage(
        "tool",
        text,
        tool_call_id=call.id,
        tool_name=call.name,
        is_error=is_error,
        approved=approved,
    )


def _reason(task: asyncio.Task[Any]) -> str:
    if not task.cancelled():
        return TURN_CANCELLED
    try:
        task.result()
    except asyncio.CancelledError as cancelled:
        return str(cancelled.args[0]) if cancelled.args else TURN_CANCELLED
    return TURN_CANCELLED
