"""``AIChannel``: a text agent with its own tool loop, human-input tools first.

Each turn (:meth:`AIChannel.respond`) asks the provider, serves the calls of its response
concurrently (:class:`~voice_hitl.text._ai_round.CallServer`), hands the results back and asks
again, until a response has no call left to serve. The channel's own tools go through its one
:class:`ToolGate` (door ``ai``), so the human-input tools are served before ``tool_handler``,
under the human-input handler's own timeout, with the hooks every other door runs. Cancelling a
turn or closing the channel withdraws the requests it has open, and cancels a model request in
flight (each runs in a task the channel owns, so ``close()`` reaches it and waits for it).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable

from .._exceptions import ChannelClosedError, ProviderError
from .._types import ChannelType
from ..human._human_input_tools import HumanInputToolHandler
from ..tools._gated_channel import GatedChannel
from ..tools._tools import AITool, ToolHandler
from ._ai_external import ExternalToolHandler
from ._ai_round import TURN_CANCELLED, CallServer
from ._ai_types import AIContext, AIMessage, AIProvider, AIResponse, AIToolCall

__all__ = ["AIChannel"]

logger = logging.getLogger("voice_hitl.ai")

CHANNEL_CLOSED = "the AI channel closed"


def _checked(provider: AIProvider, response: object) -> tuple[AIResponse, tuple[AIToolCall, ...]]:
    """The response and its calls, once it is known to be an AIResponse of AIToolCalls."""
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
    return response, calls


async def _settle(task: asyncio.Future[object]) -> None:
    """Wait until ``task`` is done, whatever cancels the wait meanwhile."""
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:  # cancelled again: the request is ending anyway
            continue


def _cut(call: AIToolCall) -> AIMessage:
    text = json.dumps({"error": f"Tool {call.name!r} was cut: its turn ended first"})
    return AIMessage("tool", text, tool_call_id=call.id, tool_name=call.name, is_error=True)


class AIChannel(GatedChannel):
    """A text agent channel serving human-input tools first in its tool loop.

    Args:
        channel_id: The channel's id (the human-input handler's scope).
        provider: The text model.
        system_prompt: The model's instructions.
        tool_handler: Serves host tools (bounded by ``tool_timeout_seconds``); an
            :class:`ExternalToolHandler` instead decides on the calls a runtime runs itself.
        human_input_handler: Serves the human-input tools, first, under its own timeout.
        tools: Tools offered to the model: host tools, and human-input tools the handler
            serves (each offered once).
        tool_timeout_seconds: The bound on each host tool call.
        max_rounds: The most provider requests one turn makes.

    Raises:
        ValueError: A tool in ``tools`` names a human-input tool with another definition than
            the handler's ``tool_definitions`` (one it lacks is offered once and served by
            the handler), a bound is not a finite number above zero, or ``max_rounds`` is
            below 1.
        TypeError: ``provider``, ``system_prompt``, ``tool_handler`` or
            ``human_input_handler`` is not of a kind the channel takes.
    """

    channel_type = ChannelType.AI
    kind = "AI channel"

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
        if not isinstance(provider, AIProvider):
            raise TypeError(
                f"provider must be an AIProvider (an object with async generate(context)), "
                f"got {type(provider).__name__}"
            )
        if not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt must be str, got {type(system_prompt).__name__}")
        if not (
            tool_handler is None
            or callable(tool_handler)
            or isinstance(tool_handler, ExternalToolHandler)
        ):
            raise TypeError(
                "tool_handler must be an async (name, arguments) -> str function or an "
                f"ExternalToolHandler, got {type(tool_handler).__name__}"
            )
        if human_input_handler is not None and not isinstance(
            human_input_handler, HumanInputToolHandler
        ):
            raise TypeError(
                "human_input_handler must be a HumanInputToolHandler, got "
                f"{type(human_input_handler).__name__}"
            )
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
            raise ValueError(f"max_rounds must be a whole number of at least 1, got {max_rounds!r}")
        external = tool_handler if isinstance(tool_handler, ExternalToolHandler) else None
        host = None if isinstance(tool_handler, ExternalToolHandler) else tool_handler
        self.provider = provider
        self.system_prompt = system_prompt
        self.max_rounds = max_rounds
        gate = self._open(
            channel_id,
            tools=tools,
            tool_handler=host,
            human_input=human_input_handler,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        self._calls = CallServer(gate, external)
        self._conversations: dict[str, list[AIMessage]] = {}
        self._room_locks: dict[str, asyncio.Lock] = {}
        self._requests: set[asyncio.Future[object]] = set()

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

    def conversation(self, room_id: str = "") -> list[AIMessage]:
        """The messages of a room's conversation so far (a copy)."""
        return list(self._conversations.get(room_id, ()))

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
            ChannelClosedError: The channel is closed, or closed during the turn (a model
                request in flight is cancelled: the message says so).
            ProviderError: The provider failed (an exception that is not a
                ``ProviderError`` is wrapped, ``code="provider_failed"``), or returned
                something that is not an ``AIResponse`` of ``AIToolCall`` values
                (``code="bad_response"``).
            TypeError: ``text``, ``room_id`` or ``author_id`` is not a string.

        Cancellation: a model request in flight is cancelled and awaited (its connection
        closed); the calls in flight are cancelled and awaited: their requests are withdrawn
        (a late answer is not taken) and each is reported ``cancelled``.
        """
        for name, value in (("text", text), ("room_id", room_id)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string, got {type(value).__name__}")
        if author_id is not None and not isinstance(author_id, str):
            raise TypeError(f"author_id must be a string or None, got {type(author_id).__name__}")
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
                answer, cut = await self._ask_model(context)
                if cut is not None:  # cancelled as the answer came: its calls are cut
                    await self._cut_round(answer, cut, conversation, room_id, author_id)
                self._check_open()
                response, calls = _checked(self.provider, answer)
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

    async def _ask_model(self, context: AIContext) -> tuple[object, asyncio.CancelledError | None]:
        """One provider request, in a task the channel owns (so ``close()`` can cancel it).

        Returns:
            The answer, and the turn's cancellation when it came after the answer did (the
            caller cuts the answer's calls, then raises it).
        """

        async def ask() -> object:  # a generate() that raises at once, or returns no awaitable
            return await self.provider.generate(context)  # fails inside the task, like others

        request: asyncio.Future[object] = asyncio.ensure_future(ask())
        self._requests.add(request)
        cut: asyncio.CancelledError | None = None
        try:
            try:
                # Shielded: the turn's cancellation is handed on below, once; close() cancels
                # the request itself (it is in _requests).
                answer = await asyncio.shield(request)
            except asyncio.CancelledError as cancelled:
                if not request.done() or request.cancelled():
                    turn = asyncio.current_task()
                    if turn is None or not turn.cancelling():  # close(), or the provider
                        await _settle(request)
                        self._check_open()
                        raise ProviderError(
                            f"provider {self.provider!r} cancelled its own request",
                            code="provider_failed",
                        ) from cancelled
                request.cancel(str(cancelled.args[0]) if cancelled.args else TURN_CANCELLED)
                await _settle(request)  # the request settles (its connection closes) first
                if request.cancelled() or request.exception() is not None:
                    raise
                answer, cut = request.result(), cancelled  # it came just before: cut its calls
        except ChannelClosedError as closed:
            raise ChannelClosedError(
                f"{closed} (closed while its model request was in flight; the request was "
                "cancelled)"
            ) from None
        except (ProviderError, asyncio.CancelledError):
            raise
        except Exception as failure:
            raise ProviderError(
                f"provider {self.provider!r} failed: {type(failure).__name__}: {failure}",
                code="provider_failed",
            ) from failure
        finally:
            self._requests.discard(request)
        return answer, cut

    async def _cut_round(
        self,
        answer: object,
        cut: asyncio.CancelledError,
        conversation: list[AIMessage],
        room_id: str,
        author_id: str | None,
    ) -> None:
        """Raise the turn's cancellation ``cut`` after cutting the calls of ``answer``: each
        is reported (served ones as served), an external one reaches ``on_tool_cancelled``,
        and each keeps an error result in the history."""
        try:
            response, calls = _checked(self.provider, answer)
        except ProviderError:
            raise cut from None
        conversation.append(AIMessage("assistant", response.text, tool_calls=calls))
        pending = [call for call in calls if call.served is None]
        conversation.extend(_cut(call) for call in pending)
        reason = str(cut.args[0]) if cut.args else TURN_CANCELLED
        for call in calls:
            if call.served is not None:
                await self._calls.report_served(call, room_id, author_id)
        await self._calls.withdraw(pending, room_id, author_id, reason)
        raise cut

    async def close(self) -> None:
        """Cancel the model requests in flight, withdraw the calls in flight, close this
        channel's human-input scope and leave the kit. Idempotent; a turn in flight raises
        ``ChannelClosedError`` and later turns too.

        Cancellation: don't cancel; call it again to finish.
        """
        self._mark_closed()
        requests = list(self._requests)
        for request in requests:
            request.cancel(CHANNEL_CLOSED)
        if requests:
            await asyncio.wait(requests)
        await self._calls.cancel_all(CHANNEL_CLOSED)
        await self._leave()
