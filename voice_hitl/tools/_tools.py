"""The tool model: definitions, the handler protocol, the call context and composition."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .._exceptions import UnservedToolCallError
from .._types import ChannelType
from ..human._pending import NO_CONTEXT

__all__ = [
    "AITool",
    "ToolCallContext",
    "ToolHandler",
    "compose_tool_handlers",
    "current_tool_context",
    "tool_context",
]


class AITool(BaseModel):
    """A tool the model may call: a name, a description and a JSON Schema for its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    risk: Literal["low", "high"] | None = None
    """How much a spoken yes to this tool must prove (``voice_hitl.responder._risk``); ``None``: the
    default for the tool (high for ``ConfirmAction`` and quorum approvals, else low). Never
    sent to the model."""


@dataclass(frozen=True, slots=True)
class ToolCallContext:
    """Where a tool call comes from; readable inside a handler via ``current_tool_context()``."""

    room_id: str = ""
    tool_call_id: str = ""
    channel_id: str = ""
    channel_type: ChannelType = ChannelType.AI
    actor_id: str | None = None
    details: Mapping[str, Any] = field(default_factory=lambda: NO_CONTEXT)
    """What the door knew about the call (e.g. ``transcript``: the call's last lines)."""


_CONTEXT: contextvars.ContextVar[ToolCallContext | None] = contextvars.ContextVar(
    "voice_hitl_tool_context", default=None
)


def current_tool_context() -> ToolCallContext:
    """The context of the tool call being served (an empty AI context outside any call)."""
    return _CONTEXT.get() or ToolCallContext()


@contextlib.contextmanager
def tool_context(context: ToolCallContext) -> Iterator[ToolCallContext]:
    """Make ``context`` the current tool call context for the block."""
    token = _CONTEXT.set(context)
    try:
        yield context
    finally:
        _CONTEXT.reset(token)


@runtime_checkable
class ToolHandler(Protocol):
    """Serves tool calls: ``await handler(name, arguments)`` returns the text the model reads.

    Raise :class:`UnservedToolCallError` for a name it does not serve, ``ToolRefusedError`` or
    ``ToolFailedError`` for an outcome the model should read as such.
    """

    async def __call__(self, name: str, arguments: dict[str, Any], /) -> str: ...


class _ComposedToolHandler:
    __slots__ = ("handlers",)

    def __init__(self, handlers: tuple[ToolHandler, ...]) -> None:
        self.handlers = handlers

    async def __call__(self, name: str, arguments: dict[str, Any], /) -> str:
        for handler in self.handlers:
            try:
                return await handler(name, arguments)
            except UnservedToolCallError:
                continue
        raise UnservedToolCallError(name)

    def __repr__(self) -> str:
        return f"compose_tool_handlers{self.handlers!r}"


def compose_tool_handlers(*handlers: ToolHandler) -> ToolHandler:
    """Chain handlers: the first that serves the name wins.

    A handler that raises :class:`UnservedToolCallError` passes the call to the next one.

    Raises:
        ValueError: Fewer than two handlers were given.
    """
    if len(handlers) < 2:
        raise ValueError(f"compose_tool_handlers needs at least two handlers, got {len(handlers)}")
    return _ComposedToolHandler(handlers)
