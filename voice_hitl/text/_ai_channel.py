"""``AIChannel``: a text agent with its own tool loop, human-input tools first.

Each turn (:meth:`AIChannel.respond`) asks the provider, serves the calls of its response
concurrently (:class:`~voice_hitl.text._ai_round.CallServer`), hands the results back and asks
again, until a response has no call left to serve. The channel's own tools go through its one
:class:`ToolGate` (door ``ai``), so the human-input tools are served before ``tool_handler``,
under the human-input handler's own timeout, with the hooks every other door runs. Cancelling a
turn or closing the channel withdraws the requests it has open.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from collections.abc import Iterable

from .._exceptions import ChannelClosedError, ProviderError
from .._types import ChannelType
from ..human._human_input_tools import HumanInputToolHandler
from ..tools._gate import ToolGate
from ..tools._kit import VoiceKit
from ..tools._tools import AITool, ToolHandler
from ._ai_external import ExternalToolHandler
from ._ai_round import CallServer
from ._ai_types import AIContext, AIMessage, AIProvider, AIResponse, AIToolCall

__all__ = ["AIChannel"]

logger = logging.getLogger("voice_hitl.ai")

CHANNEL_CLOSED = "the AI channel closed"


def _checked(provider: AIProvider, response: object) -> tuple[AIToolCall, ...]:
    """The response's calls, once it is known to be an AIResponse of AIToolCalls."""
    if not isinstance(response, AIResponse):
        raise ProviderError(
            f"provider {provider!r} returned {type(response).__name__}, not an AIResponse",
            code="bad_response",
        )
    calls = tuple(response.tool_calls)
    for call in calls:
        if not isinstance(call, AIToolCall):
            raise ProviderError(
                f"provider {provider!r} returned a tool call of type {type(call).__name__}, "
                "not an AIToolCall",
                code="bad_response",
            )
    return calls


def _cut(call: AIToolCall) -> AIMessage:
    text = json.dumps({"error": f"Tool {call.name!r} was cut: its turn ended first"})
    return AIMessage("tool", text, tool_call_id=call.id, tool_name=call.name, is_error=True)


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class AIChannel:
    """A text agent channel serving human-input tools first in its tool loop.

    Args:
        channel_id: The channel's id (the human-input handler's scope).
        provider: The text model.
        system_prompt: The model's instructions.
        tool_handler: Serves host tools (bounded by ``tool_timeout_seconds``); an
            :class:`ExternalToolHandler` instead decides on the calls a runtime runs itself.
        human_input_handler: Serves the human-input tools, first, under its own timeout.
        tools: Host tools offered to the model.
        tool_timeout_seconds: The bound on each host tool call.
        max_rounds: The most provider requests one turn makes.

    Raises:
        ValueError: A host tool reuses a name the human-input handler serves, a bound is not
            a finite number above zero, or ``max_rounds`` is below 1.
    """

    channel_type = ChannelType.AI

    def __init__(
        self,
        channel_id: str,
        *,
        provider: AIProvider,
        system_prompt: str = "",
        tool_handler: ToolHandler | ExternalToolHandler | None = None,
        human_input_handler: HumanInputToolHandler | None = None,
        tools: Iterable[AITool] = (),
        tool_timeout_seconds: float = 30.0,
        max_rounds: int = 16,
    ) -> None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
            raise ValueError(f"max_rounds must be a whole number of at least 1, got {max_rounds!r}")
        external = tool_handler if isinstance(tool_handler, ExternalToolHandler) else None
        host = None if isinstance(tool_handler, ExternalToolHandler) else tool_handler
        self._channel_id = channel_id
        self.provider = provider
        self.system_prompt = system_prompt
        self.max_rounds = max_rounds
        self._gate = ToolGate(
            channel_id,
            ChannelType.AI,
            tools=tools,
            tool_handler=host,
            human_input=human_input_handler,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        self._calls = CallServer(self._gate, external)
        self._conversations: dict[str, list[AIMessage]] = {}
        self._room_locks: dict[str, asyncio.Lock] = {}
        self._state = _State.OPEN
        self._kit: VoiceKit | None = None

    @property
    def channel_id(self) -> str:
        """The channel's id."""
        return self._channel_id

    @property
    def gate(self) -> ToolGate:
        """The gate the channel's own tool calls go through."""
        return self._gate

    @property
    def tool_handler(self) -> ToolHandler | ExternalToolHandler | None:
        """The host handler (or the external one); the human-input tools stay served."""
        return self._calls.external or self._gate.tool_handler

    @tool_handler.setter
    def tool_handler(self, handler: ToolHandler | ExternalToolHandler | None) -> None:
        if isinstance(handler, ExternalToolHandler):
            self._calls.external, self._gate.tool_handler = handler, None
        else:
            self._calls.external, self._gate.tool_handler = None, handler

    @property
    def human_input_handler(self) -> HumanInputToolHandler | None:
        """The human-input tools this channel serves first."""
        return self._gate.human_input

    @property
    def tools(self) -> list[AITool]:
        """The turn's toolset: host tools plus the human-input definitions."""
        return list(self._gate.toolset.values())

    def conversation(self, room_id: str = "") -> list[AIMessage]:
        """The messages of a room's conversation so far (a copy)."""
        return list(self._conversations.get(room_id, ()))

    def bind_kit(self, kit: VoiceKit) -> None:
        """Wire the kit's hooks into the gate and the human-input notifications."""
        self._kit = kit
        self._gate.kit = kit
        human = self._gate.human_input
        if human is not None:
            kit.attach_human_input(self._channel_id, human.handler)

    async def respond(self, text: str, *, room_id: str = "", author_id: str | None = None) -> str:
        """Take a user message and run the tool loop until the model answers without calls.

        Turns of one room run one after the other; turns of different rooms concurrently.

        Args:
            text: The user's message.
            room_id: The conversation it belongs to.
            author_id: Who wrote it: the ``actor_id`` of the requests its turn raises.

        Returns:
            The model's final text.

        Raises:
            ChannelClosedError: The channel is closed, or closed during the turn.
            ProviderError: The provider failed, or returned something that is not an
                ``AIResponse`` of ``AIToolCall`` values (``code="bad_response"``).

        Cancellation: the calls in flight are cancelled and awaited first: their requests are
        withdrawn (a late answer is not taken) and each is reported ``cancelled``.
        """
        self._check_open()
        lock = self._room_locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            self._check_open()
            conversation = self._conversations.setdefault(room_id, [])
            conversation.append(AIMessage("user", text, author_id=author_id))
            response = AIResponse()
            for _ in range(self.max_rounds):
                tools = tuple(self._gate.toolset.values())
                context = AIContext(self.system_prompt, tuple(conversation), tools, room_id)
                response = await self.provider.generate(context)
                self._check_open()
                calls = _checked(self.provider, response)
                conversation.append(AIMessage("assistant", response.text, tool_calls=calls))
                for call in calls:
                    if call.served is not None:
                        await self._calls.report_served(call, room_id, author_id)
                pending = [call for call in calls if call.served is None]
                if not pending:
                    return response.text
                try:
                    results = await self._calls.run(pending, room_id, author_id)
                except BaseException:
                    # Every call keeps its result in the history, so the next turn's request
                    # stays valid (providers refuse a tool call without its result).
                    conversation.extend(_cut(call) for call in pending)
                    raise
                conversation.extend(results)
                self._check_open()
            logger.warning(
                "channel %r: the turn in room %r still had tool calls after %d rounds; "
                "returning the last text",
                self._channel_id,
                room_id,
                self.max_rounds,
            )
            return response.text

    def _check_open(self) -> None:
        if self._state is _State.CLOSED:
            raise ChannelClosedError(f"AI channel {self._channel_id!r} is closed")

    async def close(self) -> None:
        """Withdraw the calls in flight, close this channel's human-input scope and leave the
        kit. Idempotent; later turns raise ``ChannelClosedError``.

        Cancellation: don't cancel; call it again to finish.
        """
        self._state = _State.CLOSED
        await self._calls.cancel_all(CHANNEL_CLOSED)
        human = self._gate.human_input
        if human is not None:
            await human.handler.close(channel_id=self._channel_id)
        if self._kit is not None:
            self._kit.unregister_channel(self)

    async def __aenter__(self) -> AIChannel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
