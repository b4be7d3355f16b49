"""The text agent's model: messages, tool calls, what a provider is given and returns.

A text provider (:class:`AIProvider`) is stateless towards the channel: each round it gets the
whole conversation (:class:`AIContext`) and answers with text and tool calls
(:class:`AIResponse`). A call the provider already ran itself carries :class:`ServedCall`
on :attr:`AIToolCall.served`; the channel reports it and never runs it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..tools._tools import AITool

__all__ = [
    "AIContext",
    "AIMessage",
    "AIProvider",
    "AIResponse",
    "AIToolCall",
    "ServedCall",
]


@dataclass(frozen=True, slots=True)
class ServedCall:
    """The outcome of a call the provider ran itself (a sandbox, a server-side tool).

    Only the provider sets it, on the call; never read from the call's arguments.
    """

    result: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class AIToolCall:
    """One tool call in a model response; ``arguments`` may be raw JSON text."""

    id: str
    name: str
    arguments: str | Mapping[str, Any] = field(default_factory=dict)
    served: ServedCall | None = None
    """Set when the provider already ran the call: it is reported, never run again."""


@dataclass(frozen=True, slots=True)
class AIMessage:
    """One message of the conversation.

    ``role`` is ``user`` (``author_id`` says who), ``assistant`` (text and ``tool_calls``) or
    ``tool`` (the result of the call ``tool_call_id``; ``is_error`` when it did not succeed).
    A ``tool`` message for a call an :class:`~voice_hitl.ExternalToolHandler` approved has
    ``approved=True`` and no content: the runtime runs that call itself.
    """

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    author_id: str | None = None
    tool_calls: tuple[AIToolCall, ...] = ()
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False
    approved: bool | None = None


@dataclass(frozen=True, slots=True)
class AIContext:
    """What a provider is given for one round: instructions, the conversation, the tools."""

    system_prompt: str
    messages: tuple[AIMessage, ...]
    tools: tuple[AITool, ...]
    room_id: str = ""


@dataclass(frozen=True, slots=True)
class AIResponse:
    """A provider's answer to one round: text, and the tool calls to serve before the next."""

    text: str = ""
    tool_calls: Sequence[AIToolCall] = ()


@runtime_checkable
class AIProvider(Protocol):
    """A text model: one request per round of the tool loop."""

    async def generate(self, context: AIContext) -> AIResponse:
        """Answer one round.

        Raises:
            ProviderError: The model could not answer (``recoverable`` says if a retry may).

        Cancellation: safe; the request is abandoned.
        """
        ...
