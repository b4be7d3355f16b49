"""``human_input_tools``: the human-input tools as LiveKit ``function_tool``s.

A LiveKit ``AgentSession`` never cancels a running tool: ``aclose()`` and ``interrupt()`` wait
for it (on livekit-agents 1.8.9, ``aclose()`` blocks until the tool's own timeout). These tools
watch their speech handle instead: when the agent is interrupted or the session closes, the
request is withdrawn at once (a late answer is refused) and the tool returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from livekit.agents import AgentSession, RunContext, llm
from livekit.agents.llm import ToolError, function_tool

from voice_hitl import (
    ChannelType,
    Door,
    HumanInputToolHandler,
    ToolCall,
    ToolGate,
    ToolResult,
    VoiceKit,
)

from ._convert import raw_schema

__all__ = [
    "SESSION_CLOSED",
    "SPEECH_INTERRUPTED",
    "human_input_tools",
    "linked_identity",
    "room_name",
]

logger = logging.getLogger("voice_hitl.providers.livekit")

SESSION_CLOSED = "the LiveKit agent session closed"
"""Why a request is withdrawn when its ``AgentSession`` closes (the text the model reads)."""
SPEECH_INTERRUPTED = "the agent was interrupted"
"""Why a request is withdrawn when its agent turn is interrupted."""


def linked_identity(session: AgentSession[Any]) -> str | None:
    """The identity of the participant the session is linked to, or None (no room, nobody
    linked yet)."""
    try:
        participant = session.room_io.linked_participant
    except RuntimeError:  # started without a room
        return None
    return None if participant is None else participant.identity


def room_name(session: AgentSession[Any]) -> str:
    """The name of the session's room, or ``""`` when it was started without one."""
    try:
        return str(session.room_io.room.name)
    except RuntimeError:
        return ""


def _closing(session: AgentSession[Any]) -> bool:
    # LiveKit only exposes this privately; without it a close reads as an interruption.
    is_closing = getattr(session, "_is_closing", None)
    return bool(is_closing()) if callable(is_closing) else False


def human_input_tools(
    human: HumanInputToolHandler,
    *,
    settle_on_interrupt: bool = True,
    kit: VoiceKit | None = None,
    channel_id: str = "livekit",
    room_id: str | None = None,
) -> list[llm.RawFunctionTool[..., Any]]:
    """LiveKit tools for an ``Agent`` / ``AgentSession`` that ask a person through ``human``.

    One tool per definition in ``human.tool_definitions`` (its raw JSON schema). Each call goes
    through a voice-hitl :class:`~voice_hitl.ToolGate` on door ``provider``: arguments are
    validated against the schema, ``BEFORE_TOOL_USE`` hooks run, the request is created with
    channel type ``realtime_voice`` and ``actor_id`` = the session's linked participant
    (``None`` without a room), and it waits under the handler's own ``timeout``. The model reads
    what it would read from any voice-hitl channel: the answer, or ``{"error": ...}`` as a
    ``ToolError`` for a timeout, refusal or failure.

    The request is withdrawn (a late ``resolve()`` returns False, ``ON_TOOL_CALL`` reports
    ``cancelled``) when the session closes, and when the agent's turn is interrupted (by
    ``session.interrupt()`` or by the caller speaking over it) unless ``settle_on_interrupt``
    is False. With False, the tool disallows interruptions of its turn:
    caller speech leaves the request open and ``session.interrupt()`` is refused (LiveKit raises
    ``RuntimeError``); ``interrupt(force=True)`` and ``aclose()`` still withdraw it.

    Args:
        human: Serves the tools; its ``tool_definitions`` become the LiveKit tools.
        settle_on_interrupt: Withdraw the request when the agent is interrupted.
        kit: Runs the kit's hooks (``BEFORE_TOOL_USE``, ``ON_TOOL_CALL``) and routes
            ``ON_USER_INPUT_REQUIRED`` for ``channel_id`` to it. Without a kit, the handler's
            own notifier for ``channel_id`` is told (e.g. a ``RequestQueue``).
        channel_id: The channel the requests belong to.
        room_id: The requests' room; by default the session's room name (``""`` without one).

    Raises:
        ValueError: ``human`` has no tool definitions to offer.
    """
    if not human.tool_definitions:
        raise ValueError(
            f"{human!r} has no tool_definitions; LiveKit needs a schema for each tool it offers"
        )
    gate = ToolGate(channel_id, ChannelType.REALTIME_VOICE, human_input=human)
    if kit is not None:
        gate.kit = kit
        kit.attach_human_input(channel_id, human.handler)
    return [
        _make_tool(gate, definition.name, raw_schema(definition), settle_on_interrupt, room_id)
        for definition in human.tool_definitions
    ]


def _make_tool(
    gate: ToolGate,
    name: str,
    schema: dict[str, Any],
    settle_on_interrupt: bool,
    room_id: str | None,
) -> llm.RawFunctionTool[..., Any]:
    async def ask_a_person(raw_arguments: dict[str, Any], context: RunContext[Any]) -> str:
        session = context.session
        if not settle_on_interrupt:
            # Already interrupted: nothing to protect, the wait below returns at once.
            with contextlib.suppress(RuntimeError):
                context.disallow_interruptions()
        call = ToolCall(
            name,
            raw_arguments,
            context.function_call.call_id,
            room_name(session) if room_id is None else room_id,
            linked_identity(session),
            Door.PROVIDER,
        )
        serving = asyncio.create_task(gate.call(call), name=f"livekit-ask-{call.call_id}")
        try:
            await context.speech_handle.wait_if_not_interrupted([serving])
        except asyncio.CancelledError:
            serving.cancel("the LiveKit tool call was cancelled")
            await asyncio.gather(serving, return_exceptions=True)
            raise
        if not serving.done():
            reason = SESSION_CLOSED if _closing(session) else SPEECH_INTERRUPTED
            serving.cancel(reason)
            await asyncio.gather(serving, return_exceptions=True)
            logger.info("call %r: human-input request withdrawn: %s", call.call_id, reason)
            raise ToolError(ToolResult.error("cancelled", reason).text)
        result = serving.result()
        if result.is_error:
            raise ToolError(result.text)
        return result.text

    ask_a_person.__name__ = name
    return function_tool(ask_a_person, raw_schema=schema)
