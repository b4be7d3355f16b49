"""The records of one tool call as it passes the gate: where it came from (:class:`Door`),
the call a door hands in (:class:`ToolCall`), what ``BEFORE_TOOL_USE`` hooks see
(:class:`ToolUseEvent`), how it ended (:class:`ToolResult`) and what ``ON_TOOL_CALL``
observers get (:class:`ToolCallReport`)."""

from __future__ import annotations

import enum
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .._types import ChannelType
from ..human._pending import NO_CONTEXT

__all__ = [
    "Deliver",
    "Door",
    "ToolCall",
    "ToolCallReport",
    "ToolOutcome",
    "ToolResult",
    "ToolUseEvent",
]

ToolOutcome = Literal["ok", "failed", "refused", "cancelled"]


class Door(enum.StrEnum):
    """Where a tool call came from."""

    PROVIDER = "provider"
    """The realtime provider's function call."""
    RECOVERED = "recovered"
    """A call recovered from the model's speech."""
    REASONING = "reasoning"
    """A reasoning backend's call."""
    CONFERENCE = "conference"
    """A conference's realtime provider session."""
    DIRECT = "direct"
    """Called by the application itself."""
    AI = "ai"
    """A text agent's tool loop (``AIChannel``)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as a door hands it to the gate; ``arguments`` may be raw JSON text."""

    name: str
    arguments: str | Mapping[str, Any]
    call_id: str = ""
    room_id: str = ""
    actor_id: str | None = None
    door: Door = Door.DIRECT
    details: Mapping[str, Any] = field(default_factory=lambda: NO_CONTEXT)
    """What the door knows about the call (e.g. ``transcript``); kept on its request."""


@dataclass(frozen=True, slots=True)
class ToolUseEvent:
    """What ``BEFORE_TOOL_USE`` hooks receive: the validated call about to be served.

    ``risk`` is this call's risk tier when a hook set one (``HookResult.modify(risk="high")``;
    see ``voice_hitl.responder._risk``); the request then carries it in its context.
    """

    tool_name: str
    arguments: Mapping[str, Any]
    tool_call_id: str
    room_id: str
    channel_id: str
    channel_type: ChannelType
    actor_id: str | None
    door: Door
    risk: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """How a call ended and the text the model reads (``{"error": ...}`` unless ok)."""

    outcome: ToolOutcome
    text: str
    error_detail: str = ""

    @property
    def is_error(self) -> bool:
        """True unless the call succeeded."""
        return self.outcome != "ok"

    @classmethod
    def error(cls, outcome: ToolOutcome, message: str, detail: str = "") -> ToolResult:
        """A non-ok result whose text is ``{"error": message}``."""
        return cls(outcome, json.dumps({"error": message}), detail)


@dataclass(frozen=True, slots=True)
class ToolCallReport:
    """What ``ON_TOOL_CALL`` observers receive, once per call."""

    tool_name: str
    arguments: Mapping[str, Any]
    tool_call_id: str
    room_id: str
    channel_id: str
    channel_type: ChannelType
    actor_id: str | None
    outcome: ToolOutcome
    result: str
    error_detail: str
    door: Door
    delivered: bool = True
    """False when the result could not be handed to the model (see ``delivery``)."""
    delivery: str = ""
    """How the result reached the model when not the ordinary way (e.g. "delivered as context
    after reconnect"), or why it did not ("not delivered: ..."); empty otherwise."""
    served: bool = False
    """True when the provider ran the call itself and only reported it (never run here)."""


Deliver = Callable[[ToolResult], Awaitable[str | None]]
"""Hands a call's result to the model; returns a note when it went another way than usual
(e.g. "delivered as context after reconnect"); raises when it could not be delivered."""
