"""Reasoning backends: a separate model that takes the agent's turns and may call tools.

The channel hands the backend a ``call_tool`` callback that goes through the channel's gate,
so the human-input tools are served there with the same rules as on every other door.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..tools._calls import ToolResult

__all__ = [
    "ReasoningBackend",
    "ReasoningReply",
    "ReasoningTurn",
    "ScriptedReasoningBackend",
    "ScriptedTurn",
    "ToolCaller",
    "TranscriptEntry",
]

ToolCaller = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""``await call_tool(name, arguments)``: a tool call through the channel's gate."""


@dataclass(frozen=True, slots=True)
class TranscriptEntry:
    """One final utterance: who said it (``user`` or ``assistant``) and what."""

    role: Literal["user", "assistant"]
    text: str
    speaker_id: str | None = None


@dataclass(frozen=True, slots=True)
class ReasoningTurn:
    """What the backend is given: the transcript since its last turn."""

    session_id: str
    room_id: str
    transcript: tuple[TranscriptEntry, ...]


@dataclass(frozen=True, slots=True)
class ReasoningReply:
    """The backend's reply: text to speak, or (``speak=False``) silent context."""

    text: str
    speak: bool = True


@runtime_checkable
class ReasoningBackend(Protocol):
    """Takes the agent's turns; may call tools through ``call_tool``."""

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        """Produce the agent's reply to ``turn`` (None: say nothing).

        Cancellation: the turn is abandoned; tool calls in flight are withdrawn.
        """
        ...


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One scripted turn: tools to call in order, then a reply.

    ``reply`` may be a function of the tool results, e.g. to speak the answer back.
    """

    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()
    reply: str | Callable[[list[ToolResult]], str] | None = None
    speak: bool = True


@dataclass
class ScriptedReasoningBackend:
    """A backend that plays :class:`ScriptedTurn` values in order, one per turn.

    Records every turn it was given (``turns``) and every tool result (``results``). Turns past
    the end of the script get no reply.
    """

    script: Sequence[ScriptedTurn]
    turns: list[ReasoningTurn] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        """Play the next scripted turn.

        Cancellation: the turn is abandoned; tool calls in flight are withdrawn.
        """
        index = len(self.turns)
        self.turns.append(turn)
        if index >= len(self.script):
            return None
        step = self.script[index]
        results: list[ToolResult] = []
        for name, arguments in step.tool_calls:
            result = await call_tool(name, arguments)
            results.append(result)
            self.results.append(result)
        if step.reply is None:
            return None
        text = step.reply if isinstance(step.reply, str) else step.reply(results)
        return ReasoningReply(text, step.speak)
