"""``ToolGate``: the one code path every tool call takes, whatever door it came through.

In order: the tool must be in the turn's toolset; its arguments must match the schema;
``BEFORE_TOOL_USE`` hooks may block or rewrite; a regular tool that needs approval waits for a
person's yes to exactly these arguments (``voice_hitl.tools._approvals``), and a gate that no
policy can reach (no kit, no approvals of its own) refuses every host tool rather than run it
unasked (``voice_hitl.tools._approval_setup``); human-input tools are
served first, under the human-input handler's own timeout, anything else by the host handler
under the channel's per-call bound; ``ON_TOOL_CALL`` observers get one report per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._checks import positive_seconds
from .._exceptions import (
    ApprovalSetupError,
    ChannelClosedError,
    ProviderError,
    ToolArgumentsError,
    ToolFailedError,
    ToolRefusedError,
    ToolTimeoutError,
    UnservedToolCallError,
)
from .._types import ChannelType
from ..human._human_input_tools import HumanInputToolHandler
from ..human._pending import PendingInput
from ._approval_setup import host_tools, unbound_message
from ._calls import Deliver, ToolCall, ToolCallReport, ToolResult, ToolUseEvent
from ._hooks import HookContext, HookResult, HookTrigger
from ._schema import ArgumentValidator, parse_arguments
from ._tools import AITool, ToolCallContext, ToolHandler, tool_context

if TYPE_CHECKING:
    from ._approval_policy import ApprovalPolicy
    from ._approvals import ToolApprovals
    from ._kit import VoiceKit

__all__ = ["ToolGate"]

logger = logging.getLogger("voice_hitl.gate")

_NOT_DELIVERED = (ChannelClosedError, ProviderError)


class ToolGate:
    """Serves tool calls for one channel, every door through :meth:`call`.

    Args:
        channel_id: The channel the calls belong to.
        channel_type: The kind of door (what hooks and requests are told).
        tools: Host tool definitions offered to the model.
        tool_handler: Serves host tools; replaceable later via :attr:`tool_handler`.
        human_input: Serves the human-input tools, first, under its own timeout.
        tool_timeout_seconds: The bound on each host tool call.

    Raises:
        ValueError: A tool in ``tools`` has a name the human-input handler serves but
            another definition than its ``tool_definitions`` (the same definition, or one
            the handler lacks, is offered once and served by the handler), or
            ``tool_timeout_seconds`` is not a finite number above zero.
    """

    def __init__(
        self,
        channel_id: str,
        channel_type: ChannelType,
        *,
        tools: Iterable[AITool] = (),
        tool_handler: ToolHandler | None = None,
        human_input: HumanInputToolHandler | None = None,
        tool_timeout_seconds: float = 10.0,
    ) -> None:
        self.channel_id = channel_id
        self.channel_type = channel_type
        self.human_input = human_input
        self.tool_timeout_seconds = positive_seconds("tool_timeout_seconds", tool_timeout_seconds)
        self._kit: VoiceKit | None = None
        self._approvals: ToolApprovals | None = None
        self._held: set[tuple[str, str]] = set()  # (room, call id) of calls awaiting a yes
        self.setup_checks: list[Callable[[ToolApprovals], None]] = []
        """More checks of a policy set against this gate, run wherever the generic ones run
        (a runtime that runs its own tools refuses one it would run unasked); each raises
        :class:`~voice_hitl.ApprovalSetupError`."""
        toolset: dict[str, AITool] = {}
        for tool in tools:  # a human-input tool may be declared here: the handler serves it
            toolset[tool.name] = tool
        if human_input is not None:
            for tool in human_input.tool_definitions:
                declared = toolset.get(tool.name)
                if declared is not None and declared != tool:
                    raise ValueError(
                        f"tool {tool.name!r} on channel {channel_id!r}: tools= reuses a name "
                        "the human-input handler serves, with another definition than its "
                        "tool_definitions; declare it in one place (or the same in both)"
                    )
                toolset[tool.name] = tool
            for name in sorted(human_input.tool_names - toolset.keys()):
                logger.warning(
                    "channel %r intercepts human-input tool %r but never offers it to the "
                    "model; add it to tool_definitions= or tools=",
                    channel_id,
                    name,
                )
        self.toolset: Mapping[str, AITool] = MappingProxyType(toolset)
        self._validators = {name: ArgumentValidator(tool) for name, tool in toolset.items()}
        self._warned_handler = False
        self._tool_handler: ToolHandler | None = None
        self.tool_handler = tool_handler

    @property
    def kit(self) -> VoiceKit | None:
        """The kit whose hooks and approval policies this gate runs (set on registration).

        Setting it checks the kit's policies against this gate's tools (see
        :func:`~voice_hitl.tools._approval_setup.check_gate`).

        Raises:
            ApprovalSetupError: On set, a policy this gate could not ask for.
        """
        return self._kit

    @kit.setter
    def kit(self, kit: VoiceKit | None) -> None:
        if kit is not None:
            kit.approvals.attach(self)
        if self._kit is not None and self._kit is not kit:
            self._kit.approvals.detach(self)
        self._kit = kit

    @property
    def approvals(self) -> ToolApprovals | None:
        """Tools that need a person's yes on this gate, beside the kit's (``kit.approvals``).

        A tool's own policy here wins over the kit's for that tool, and the kit's per-tool
        policies win over rules (``when=``) here: a gate's rules never hide a kit's policy.
        Setting it (an empty ``ToolApprovals()`` included) also lets a gate serve host tools
        without a kit.

        Raises:
            ApprovalSetupError: On set, a policy this gate could not ask for.
        """
        return self._approvals

    @approvals.setter
    def approvals(self, approvals: ToolApprovals | None) -> None:
        if approvals is not None:
            approvals.attach(self)
        if self._approvals is not None and self._approvals is not approvals:
            self._approvals.detach(self)
        self._approvals = approvals

    def check_reachable(self) -> None:
        """Refuse to open a door to host tools while no approval policy can reach them.

        Raises:
            ApprovalSetupError: The gate serves host tools and is neither bound to a kit
                (``kit.register_channel``) nor given its own ``approvals``.
        """
        if self._kit is None and self._approvals is None and host_tools(self):
            raise ApprovalSetupError(unbound_message(self))

    @property
    def tool_handler(self) -> ToolHandler | None:
        """The host handler; the human-input tools stay served whatever is set here."""
        return self._tool_handler

    @tool_handler.setter
    def tool_handler(self, handler: ToolHandler | None) -> None:
        if isinstance(handler, HumanInputToolHandler) and not self._warned_handler:
            self._warned_handler = True
            logger.warning(
                "channel %r got a HumanInputToolHandler as tool_handler=; it is served as a "
                "plain host tool under the %gs call bound. Pass it as human_input_handler= so "
                "its tools are offered, served first and bounded by its own timeout",
                self.channel_id,
                self.tool_timeout_seconds,
            )
        self._tool_handler = handler

    def _hook_context(self, room_id: str) -> HookContext:
        return HookContext(self.kit, room_id, self.channel_id, self.channel_type)

    async def call(self, call: ToolCall, deliver: Deliver | None = None) -> ToolResult:
        """Serve one call through the gate and report it to ``ON_TOOL_CALL`` observers.

        ``deliver`` (the door's way of handing the result to the model) runs before the
        report, so the report says what the model actually got: ``delivered`` is False, with
        the reason in ``delivery``, when it raised.

        Returns:
            The outcome and the text the model reads. It never raises for a failure inside
            the call: whatever goes wrong while serving it (a hook or a handler raising any
            exception, ``CancelledError`` of its own included, or returning the wrong type)
            ends in a ``failed`` result naming the exception type, logged with its traceback.

        Cancellation: the call is withdrawn (a human-input request with it) and reported
        ``cancelled``, ``delivered=False``, with the cancel message as ``error_detail``.
        Cancelled while ``deliver`` runs, it is reported with its outcome and
        ``delivered=False``.
        """
        seen: list[Mapping[str, Any]] = [
            call.arguments if isinstance(call.arguments, Mapping) else MappingProxyType({})
        ]
        asked: list[PendingInput] = []
        try:
            result = await self._serve_guarded(call, seen, asked)
        except asyncio.CancelledError as cancelled:
            hint = str(cancelled.args[0]) if cancelled.args else "the call was cancelled"
            cancelled_result = ToolResult.error("cancelled", hint, hint)
            self._record_delivery(call, asked, cancelled_result)
            if self.kit is not None:  # a withdrawn call's result goes nowhere
                note = f"not delivered: {hint}"
                report, ctx = self._report(call, seen[-1], cancelled_result, False, note)
                self.kit.hooks.observe_nowait(HookTrigger.ON_TOOL_CALL, report, ctx)
            raise
        delivered, note = True, ""
        if deliver is not None:
            try:
                note = await deliver(result) or ""
            except asyncio.CancelledError as cancelled:
                hint = str(cancelled.args[0]) if cancelled.args else "the call was cancelled"
                note = f"not delivered: {hint}"
                self._record_delivery(call, asked, result, False, note)
                if self.kit is not None:
                    report, ctx = self._report(call, seen[-1], result, False, note)
                    self.kit.hooks.observe_nowait(HookTrigger.ON_TOOL_CALL, report, ctx)
                raise
            except Exception as exc:
                delivered, note = False, f"not delivered: {exc}"
                log = logger.warning if isinstance(exc, _NOT_DELIVERED) else logger.error
                log(
                    "result of tool call %r (%s) on channel %r %s",
                    call.name,
                    call.call_id,
                    self.channel_id,
                    note,
                    exc_info=not isinstance(exc, _NOT_DELIVERED),
                )
        self._record_delivery(call, asked, result, delivered, note)
        if self.kit is not None:
            report, ctx = self._report(call, seen[-1], result, delivered, note)
            await self.kit.hooks.observe(HookTrigger.ON_TOOL_CALL, report, ctx)
        return result

    def report_withdrawn(self, call: ToolCall, reason: str) -> None:
        """Report a call withdrawn before it could be served (its task never ran), so every
        call still gets its one ``ON_TOOL_CALL`` report, ``cancelled`` with ``reason``."""
        if self.kit is None:
            return
        arguments = call.arguments if isinstance(call.arguments, Mapping) else MappingProxyType({})
        result = ToolResult.error("cancelled", reason, reason)
        report, ctx = self._report(call, arguments, result, False, f"not delivered: {reason}")
        self.kit.hooks.observe_nowait(HookTrigger.ON_TOOL_CALL, report, ctx)

    async def report_served(self, call: ToolCall, result: str, is_error: bool = False) -> None:
        """Report a call the provider ran itself (never run here): ``served=True``, ``ok``
        or ``failed`` with the provider's ``result``.

        Cancellation: safe; observers not yet run do not run.
        """
        if self.kit is None:
            return
        arguments: Mapping[str, Any] = MappingProxyType({})
        with contextlib.suppress(ToolArgumentsError):
            arguments = parse_arguments(call.name, call.arguments)
        served = ToolResult("failed", result, result) if is_error else ToolResult("ok", result)
        report, ctx = self._report(call, arguments, served)
        report = replace(report, served=True)
        await self.kit.hooks.observe(HookTrigger.ON_TOOL_CALL, report, ctx)

    async def _serve_guarded(
        self, call: ToolCall, seen: list[Mapping[str, Any]], asked: list[PendingInput]
    ) -> ToolResult:
        """:meth:`_serve`, with anything it raises (but a cancellation of this task) turned
        into a ``failed`` result, logged with its traceback."""
        try:
            return await self._serve(call, seen, asked)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise
            failure: BaseException = exc  # raised inside the call, not a cancellation of it
        except Exception as exc:
            failure = exc
        logger.error(
            "tool call %r (%s) failed on channel %r",
            call.name,
            call.call_id,
            self.channel_id,
            exc_info=failure,
        )
        message = f"Tool {call.name!r} failed ({type(failure).__name__})"
        return ToolResult.error("failed", message, repr(failure))

    async def _serve(
        self, call: ToolCall, seen: list[Mapping[str, Any]], asked: list[PendingInput]
    ) -> ToolResult:
        """Run the gate's steps; ``seen`` ends with the arguments as last validated, ``asked``
        gets the human-input request the call made, if any."""
        name = call.name
        if name not in self.toolset:
            message = f"Tool {name!r} is not available in the current turn."
            return ToolResult.error("failed", message, message)
        validator = self._validators[name]
        try:
            parsed = parse_arguments(name, call.arguments)
            validator.validate(parsed)
        except ToolArgumentsError as exc:
            return ToolResult.error("failed", str(exc), str(exc))
        seen.append(parsed)
        risk: str | None = None
        if self.kit is not None:
            event = ToolUseEvent(
                name,
                MappingProxyType(parsed),
                call.call_id,
                call.room_id,
                self.channel_id,
                self.channel_type,
                call.actor_id,
                call.door,
            )
            try:
                decision, event = await self.kit.hooks.run_sync(
                    HookTrigger.BEFORE_TOOL_USE,
                    event,
                    self._hook_context(call.room_id),
                    rewrite=self._rewrite,
                )
            except ToolArgumentsError as exc:
                return ToolResult.error("failed", str(exc), str(exc))
            seen.append(event.arguments)
            risk = event.risk
            if decision.blocked:
                message = decision.reason or f"Tool {name!r} was blocked by a hook"
                detail = str(decision.metadata.get("detail", ""))
                return ToolResult.error("refused", message, detail)
        details = call.details
        if risk is not None:
            details = MappingProxyType({**details, "risk": risk})
        context = ToolCallContext(
            call.room_id,
            call.call_id,
            self.channel_id,
            self.channel_type,
            call.actor_id,
            details,
        )
        with tool_context(context):
            arguments = dict(seen[-1])
            human = self.human_input
            if human is None or not human.serves(name):  # the asking itself is never held
                try:
                    held = self.approval_for(name, arguments)
                    if held is not None:
                        approvals, policy = held
                        arguments = await self.hold(approvals, policy, call, arguments, asked)
                except ToolRefusedError as exc:
                    return ToolResult.error("refused", str(exc), str(exc))
            return await self._dispatch(name, arguments, asked)

    def approval_for(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[ToolApprovals, ApprovalPolicy] | None:
        """The policy a host-tool call must pass and where its "always" grants live; None
        when it needs none. Per-tool policies first (the gate's, then the kit's), then rules.
        Every door's approval step starts here (`hold` is the second half).

        Raises:
            ToolRefusedError: No policy can reach this gate: it is bound to no kit
                (``kit.register_channel``) and has no ``approvals`` of its own.
        """
        if self._kit is None and self._approvals is None:
            raise ToolRefusedError(f"Tool {name!r} was not run: {unbound_message(self)}")
        own = self._approvals
        sources = (own,) if self._kit is None else (own, self._kit.approvals)
        for source in sources:  # the hot path of every call: plain lookups, no copies
            if source is not None:
                policy = source._by_tool.get(name)
                if policy is not None and policy.applies(name, arguments):
                    return source, policy
        for source in sources:
            if source is not None:
                for rule in source._rules:
                    if rule.applies(name, arguments):
                        return source, rule
        return None

    async def hold(
        self,
        approvals: ToolApprovals,
        policy: ApprovalPolicy,
        call: ToolCall,
        arguments: dict[str, Any],
        asked: list[PendingInput],
    ) -> dict[str, Any]:
        """Hold the call for the yes ``policy`` asks for (from `approval_for`); returns the
        arguments the yes was given for.

        Raises:
            ToolRefusedError: The person refused, nobody could be asked, or a call with the
                same id is already waiting (a call id is used once).

        Cancellation: the approval request is withdrawn.
        """
        key = (call.room_id, call.call_id)
        if call.call_id and key in self._held:
            raise ToolRefusedError(
                f"Tool {call.name!r} was not approved: call id {call.call_id!r} is already "
                "waiting for approval; a call id is used once"
            )
        self._held.add(key)
        try:
            return await approvals.hold(self, call, policy, arguments, asked)
        finally:
            self._held.discard(key)

    def forget_approvals(self, room_id: str) -> None:
        """Drop the "always" grants this channel holds in ``room_id``: its call there ended."""
        kit = self._kit
        for approvals in (self._approvals, None if kit is None else kit.approvals):
            if approvals is not None:
                approvals.forget_room(room_id, channel_id=self.channel_id)

    def _rewrite(self, event: ToolUseEvent, result: HookResult) -> ToolUseEvent:
        risk = result.metadata.get("risk", event.risk)
        if risk not in (None, "low", "high"):
            raise ToolArgumentsError(
                f"A BEFORE_TOOL_USE hook set the risk of tool {event.tool_name!r} to "
                f"{risk!r}: use 'low' or 'high'"
            )
        if risk != event.risk:
            event = replace(event, risk=risk)
        replacement = result.metadata.get("arguments")
        if replacement is None:
            return event
        if not isinstance(replacement, Mapping):
            raise ToolArgumentsError(
                f"Invalid arguments for tool {event.tool_name!r}: a BEFORE_TOOL_USE hook "
                f"replaced them with {type(replacement).__name__}, not an object"
            )
        checked = parse_arguments(event.tool_name, replacement)  # finite, bounded numbers
        self._validators[event.tool_name].validate(checked)
        return ToolUseEvent(
            event.tool_name,
            MappingProxyType(checked),
            event.tool_call_id,
            event.room_id,
            event.channel_id,
            event.channel_type,
            event.actor_id,
            event.door,
            event.risk,
        )

    async def _dispatch(
        self, name: str, arguments: dict[str, Any], asked: list[PendingInput]
    ) -> ToolResult:
        human = self.human_input
        try:
            if human is not None and human.serves(name):
                text = await human.ask(
                    name, arguments, channel_type=self.channel_type, on_created=asked.append
                )
            else:
                text = await self._call_host(name, arguments)
        except ToolRefusedError as exc:
            return ToolResult.error("refused", str(exc), str(exc))
        except ToolFailedError as exc:
            return ToolResult.error("failed", str(exc), str(exc))
        except UnservedToolCallError:
            message = f"Tool {name!r} has no handler on this channel"
            return ToolResult.error("failed", message, message)
        except Exception as exc:
            if human is not None and human.serves(name) and type(exc) is RuntimeError:
                # The request was given up (handler closed, released): an outcome, not a bug.
                logger.info("tool %r on channel %r: %s", name, self.channel_id, exc)
            else:
                logger.warning("tool %r failed on channel %r", name, self.channel_id, exc_info=True)
            return ToolResult.error(
                "failed", f"Tool {name!r} failed ({type(exc).__name__})", repr(exc)
            )
        if not isinstance(text, str):
            message = f"Tool {name!r} failed (returned {type(text).__name__}, not text)"
            return ToolResult.error("failed", message, message)
        return ToolResult("ok", text)

    async def _call_host(self, name: str, arguments: dict[str, Any]) -> str:
        handler = self._tool_handler
        if handler is None:
            raise UnservedToolCallError(name)
        bound = self.tool_timeout_seconds
        try:
            async with asyncio.timeout(bound) as scope:
                return await handler(name, arguments)
        except TimeoutError:
            if scope.expired():
                raise ToolTimeoutError(f"Tool {name!r} timed out after {bound:g}s") from None
            raise

    def _record_delivery(
        self,
        call: ToolCall,
        asked: list[PendingInput],
        result: ToolResult,
        delivered: bool = True,
        note: str = "",
    ) -> None:
        if asked and self.human_input is not None:
            handler = self.human_input.handler
            outcome = result.outcome if delivered else "not_delivered"
            for request in asked:
                handler.record_delivery(
                    request.pending_id,
                    call.call_id,
                    outcome,
                    result.text,
                    note or result.error_detail,
                )

    def _report(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        result: ToolResult,
        delivered: bool = True,
        note: str = "",
    ) -> tuple[ToolCallReport, HookContext]:
        report = ToolCallReport(
            call.name,
            MappingProxyType(dict(arguments)),
            call.call_id,
            call.room_id,
            self.channel_id,
            self.channel_type,
            call.actor_id,
            result.outcome,
            result.text,
            result.error_detail,
            call.door,
            delivered,
            note,
        )
        return report, self._hook_context(call.room_id)
