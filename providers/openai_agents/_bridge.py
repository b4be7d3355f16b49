"""``AgentsRealtimeBridge``: voice-hitl answering an OpenAI Agents SDK realtime session.

The SDK pauses a function tool declared ``needs_approval`` and emits ``tool_approval_required``;
the bridge passes that call through its own :class:`~voice_hitl.ToolGate` (schema,
``BEFORE_TOOL_USE`` hooks, then the approval step of ``voice_hitl.tools._approvals``: the caller
aloud by risk tier or keypad through a :class:`~voice_hitl.VoiceResponder`, an operator on the
board, a quorum) and answers the SDK with ``approve_tool_call`` or ``reject_tool_call`` (the
model reads the refusal). An approval is bound to the SDK call's exact arguments: a hook that
rewrites them gets the call rejected, since the SDK runs the call as the model made it. "Always"
is kept by voice-hitl (revocable), never handed to the SDK, which could not take it back.

voice-hitl's human-input tools become the SDK's function tools (:meth:`function_tools`), served
through the same gate first, under the human-input handler's own timeout; :meth:`aclose` (or the
kit's close) settles what is still open.

The SDK runs a tool without ``needs_approval=True`` without asking anyone, so the bridge checks
every tool it is given (and the attached session's agent's) against its own policies and the
kit's: one that a policy may gate and the SDK would run unasked is refused with
:class:`~voice_hitl.ApprovalSetupError` at construction, registration, a later
``kit.require_approval`` or :meth:`AgentsRealtimeBridge.attach`. The kit's per-tool policies win
over the bridge's ``default`` for the calls the SDK pauses.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from agents import FunctionTool
from agents.realtime import RealtimeSession
from agents.realtime.events import RealtimeSessionEvent
from agents.tool_context import ToolContext

from voice_hitl import (
    AITool,
    ApprovalPolicy,
    ApprovalSetupError,
    ChannelType,
    Door,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolApprovals,
    ToolCall,
    ToolGate,
    ToolRefusedError,
    VoiceKit,
    canonical_arguments,
    current_tool_context,
)

from ._line import AgentsLine

__all__ = ["AgentsRealtimeBridge"]

logger = logging.getLogger("providers.openai_agents")


def _always(name: str, arguments: Mapping[str, Any]) -> bool:
    return True


class AgentsRealtimeBridge:
    """Answers one Agents SDK realtime session's approvals and serves its human-input tools.

    Give the agent :meth:`function_tools` beside its own, register the bridge on a kit
    (``kit.register_channel(bridge)``), let a :class:`~voice_hitl.VoiceResponder` serve it to
    ask the caller aloud, :meth:`attach` the session once the runner made it, and hand it every
    session event: ``async for event in session: await bridge.on_event(event)``.

    Args:
        human: The human-input tools (and the request handler approvals are asked through).
        tools: The agent's function tools whose approvals the bridge answers.
        channel_id: The channel id of its requests.
        room_id: The room of its requests.
        caller: The caller's id (the requests' actor, and who answers are attributed to).
        approvals: Per tool, how it is approved; any other tool the SDK pauses takes
            ``default``.
        default: The policy of a tool the SDK pauses that neither ``approvals`` nor the kit
            names (the caller, high risk, 60 s, denied at the deadline).
        tool_timeout_seconds: The bound on answering the SDK once approved (the SDK runs the
            tool inside ``approve_tool_call`` unless its tool calls are asynchronous).

    Raises:
        ApprovalSetupError: A tool ``approvals`` names is not declared
            ``@function_tool(needs_approval=True)`` (the SDK would run it unasked), or a
            policy names approvers (one caller cannot make a quorum).
    """

    channel_type = ChannelType.REALTIME_VOICE

    def __init__(
        self,
        *,
        human: HumanInputToolHandler,
        tools: Iterable[FunctionTool] = (),
        channel_id: str = "agents",
        room_id: str = "agents",
        caller: str | None = "caller",
        approvals: Mapping[str, ApprovalPolicy] | None = None,
        default: ApprovalPolicy | None = None,
        tool_timeout_seconds: float = 30.0,
    ) -> None:
        self._session: RealtimeSession | None = None
        self.room_id = room_id
        self.caller = caller
        tools = list(tools)
        self._sdk_tools = {t.name: t for t in tools}
        definitions = [
            AITool(name=t.name, description=t.description, parameters=t.params_json_schema)
            for t in tools
        ]
        self.gate = ToolGate(
            channel_id,
            ChannelType.REALTIME_VOICE,
            tools=definitions,
            tool_handler=self._approved,
            human_input=human,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        self.gate.setup_checks.append(self._check_sdk_tools)
        rules = ToolApprovals()
        for name, policy in (approvals or {}).items():
            rules.require(name, policy)
        self._default = rules.require(None, replace(default or ApprovalPolicy(), when=_always))
        self.gate.approvals = rules
        self.line = AgentsLine(human, caller)
        self._sdk_arguments: dict[str, str] = {}  # call id -> the SDK's arguments, canonical
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def session(self) -> RealtimeSession:
        """The attached session.

        Raises:
            RuntimeError: No session was attached yet.
        """
        if self._session is None:
            raise RuntimeError("attach(session) the Agents SDK realtime session first")
        return self._session

    def attach(self, session: RealtimeSession) -> None:
        """Answer this session's approvals and speak to its caller.

        Raises:
            RuntimeError: Another session is attached already.
            ApprovalSetupError: A tool of the session's agent that a policy may gate is not
                declared ``needs_approval=True``: the SDK would run it unasked.
        """
        if self._session is not None and self._session is not session:
            raise RuntimeError("this bridge already serves another session")
        agent = getattr(session, "_current_agent", None)  # the SDK's starting agent (0.24)
        agent_tools = [t for t in getattr(agent, "tools", ()) if isinstance(t, FunctionTool)]
        for source in self._sources():
            self._refuse_unasked(agent_tools, source, "the session's agent")
        self._session = session
        self.line.session = session

    # -- the channel a kit and a responder see -------------------------------------------

    @property
    def channel_id(self) -> str:
        """The channel id of the bridge's requests."""
        return self.gate.channel_id

    @property
    def approvals(self) -> ToolApprovals:
        """The approval policies and "always" grants of this session."""
        rules = self.gate.approvals
        assert rules is not None
        return rules

    @property
    def human_input_handler(self) -> HumanInputToolHandler:
        """The human-input tools served first."""
        human = self.gate.human_input
        assert human is not None
        return human

    def bind_kit(self, kit: VoiceKit) -> None:
        """Wire the kit's hooks into the gate and the human-input notifications."""
        self.gate.kit = kit
        kit.attach_human_input(self.channel_id, self.human_input_handler.handler)

    # -- what the SDK would run unasked ---------------------------------------------------

    def _sources(self) -> list[ToolApprovals]:
        kit = self.gate.kit
        own = self.gate.approvals
        return [a for a in (own, None if kit is None else kit.approvals) if a is not None]

    def _check_sdk_tools(self, approvals: ToolApprovals) -> None:
        """A gate setup check: the policies ``approvals`` holds against the bridge's tools."""
        self._refuse_unasked(self._sdk_tools.values(), approvals, "the bridge's tools=")

    def _refuse_unasked(
        self, tools: Iterable[FunctionTool], approvals: ToolApprovals, where: str
    ) -> None:
        """Refuse a tool a policy may gate that the SDK would run without pausing: one
        named, or any under a ``when=`` rule (the bridge's own ``default`` covers only the
        calls the SDK pauses)."""
        rules = [r for r in approvals.rules if r is not getattr(self, "_default", None)]
        for tool in tools:
            if tool.needs_approval is True:
                continue
            if tool.name in approvals.by_tool:
                why = "a policy names it"
            elif rules:
                why = "a when= rule may pick its calls"
            else:
                continue
            raise ApprovalSetupError(
                f"tool {tool.name!r} ({where}) needs a person's yes ({why}), but the Agents "
                "SDK runs it without asking: declare it @function_tool(needs_approval=True) "
                "so the SDK pauses it for the bridge"
            )

    def find_line(self, event: PendingInputEvent) -> AgentsLine | None:
        """The session's caller, for this bridge's requests."""
        return self.line if event.channel_id == self.channel_id else None

    # -- events --------------------------------------------------------------------------

    async def on_event(self, event: RealtimeSessionEvent) -> None:
        """Take one session event: an approval to answer, or what the caller said or keyed.

        An approval is answered in a task the bridge owns (:meth:`aclose` settles it).

        Cancellation: safe; a started approval goes on.
        """
        if event.type == "raw_model_event":
            self.line.hear(event.data)
        elif event.type == "tool_approval_required" and not self._closed:
            task = asyncio.create_task(
                self._answer(event.tool.name, event.call_id, event.arguments),
                name=f"agents-approval-{event.call_id}",
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, name: str, call_id: str, arguments: str) -> None:
        if call_id in self._sdk_arguments:
            logger.error(
                "tool %r: the SDK asked again about call id %r while its approval is open; "
                "the repeat is not answered (the first question stands)",
                name,
                call_id,
            )
            return
        try:
            self._sdk_arguments[call_id] = canonical_arguments(json.loads(arguments or "{}"))
        except (ValueError, TypeError):
            self._sdk_arguments[call_id] = ""  # never equal to approved arguments: refused
        call = ToolCall(name, arguments, call_id, self.room_id, self.caller, door=Door.PROVIDER)
        try:
            result = await self.gate.call(call)
        finally:
            self._sdk_arguments.pop(call_id, None)
        if result.outcome != "ok":
            message = _error_text(result.text)
            logger.info("tool %r (%s) not approved: %s", name, call_id, message)
            await self.session.reject_tool_call(call_id, rejection_message=message)

    async def _approved(self, name: str, arguments: dict[str, Any]) -> str:
        """The gate's handler: runs once approved, and lets the SDK run the call."""
        call_id = current_tool_context().tool_call_id
        if self._sdk_arguments.get(call_id) != canonical_arguments(arguments):
            raise ToolRefusedError(
                f"Tool {name!r} was not approved: its arguments were changed before the "
                "approval, and the SDK runs the call as the model made it"
            )
        await self.session.approve_tool_call(call_id)
        return "approved"

    # -- human-input tools as the SDK's function tools ------------------------------------

    def function_tools(self) -> list[FunctionTool]:
        """The human-input tools as the SDK's function tools, served through the gate."""
        human = self.human_input_handler
        return [
            FunctionTool(
                name=definition.name,
                description=definition.description,
                params_json_schema=definition.parameters,
                on_invoke_tool=self._invoker(definition.name),
                strict_json_schema=False,
            )
            for definition in human.tool_definitions
        ]

    def _invoker(self, name: str) -> Any:
        async def invoke(context: ToolContext[Any], arguments: str) -> str:
            call = ToolCall(
                name,
                arguments,
                context.tool_call_id,
                self.room_id,
                self.caller,
                door=Door.PROVIDER,
            )
            result = await self.gate.call(call)
            return result.text

        return invoke

    # -- closing -------------------------------------------------------------------------

    async def close(self) -> None:
        """Settle what is open: approvals and human-input requests are withdrawn (the SDK's
        paused calls are rejected as withdrawn), and the session's "always" grants end.
        Idempotent.

        Cancellation: the requests are withdrawn before the first await.
        """
        if self._closed:
            return
        self._closed = True
        self.gate.forget_approvals(self.room_id)  # its own grants and the kit's
        handler = self.human_input_handler.handler
        handler.set_notifier(self.channel_id, None)
        await handler.close(channel_id=self.channel_id)
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.gate.kit = None

    async def aclose(self) -> None:
        """Same as :meth:`close`.

        Cancellation: see :meth:`close`.
        """
        await self.close()


def _error_text(text: str) -> str:
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return str(body["error"])
    return text
