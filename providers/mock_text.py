"""``MockAIProvider``: a scripted text provider for tests and examples.

It answers an ``AIChannel``'s rounds from a script, in order, and records every context it was
given, so a test can check what the model would have read (tool results included)::

    provider = MockAIProvider([
        AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Which colour?"})]),
        lambda context: AIResponse(text=f"You chose {context.messages[-1].content}"),
    ])

A step may also be an ``async`` function of the context (a model that takes its time, or
never answers); ``timeout=`` bounds it as a vendor provider's ``timeout=`` bounds its request.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from voice_hitl import AIContext, AIResponse, AIToolCall, ProviderError, ServedCall
from voice_hitl._checks import optional_seconds

__all__ = ["MockAIProvider", "tool_call"]

_ids = itertools.count(1)

Step = AIResponse | Callable[[AIContext], AIResponse | Awaitable[AIResponse]]
"""A scripted answer, or a function (plain or ``async``) of the context that returns one."""


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    call_id: str | None = None,
    served: ServedCall | None = None,
) -> AIToolCall:
    """A tool call for a script (a fresh ``call_N`` id unless given)."""
    return AIToolCall(
        call_id or f"call_{next(_ids)}",
        name,
        {} if arguments is None else arguments,
        served,
    )


class MockAIProvider:
    """Plays scripted :class:`~voice_hitl.AIResponse` values, one per round.

    Rounds past the end of the script get an empty answer (no text, no calls), which ends the
    turn. :attr:`contexts` holds every context received.

    Args:
        script: The answers, in order.
        timeout: Seconds an ``async`` step may take (None: no bound).

    Raises:
        ValueError: ``timeout`` is not None nor a finite number of seconds above zero.
    """

    def __init__(self, script: Sequence[Step] = (), *, timeout: float | None = None) -> None:
        self.timeout = optional_seconds("timeout", timeout)
        self.script = list(script)
        self.contexts: list[AIContext] = []
        self._arrived = asyncio.Condition()

    async def generate(self, context: AIContext) -> AIResponse:
        """Answer the next round from the script.

        Raises:
            ProviderError: An ``async`` step overran ``timeout`` (``code="timeout"``).

        Cancellation: safe; the round is still recorded, an ``async`` step is cancelled.
        """
        index = len(self.contexts)
        self.contexts.append(context)
        async with self._arrived:
            self._arrived.notify_all()
        if index >= len(self.script):
            return AIResponse()
        step = self.script[index]
        if not callable(step):
            return step
        answer = step(context)
        if not inspect.isawaitable(answer):
            return answer
        try:
            async with asyncio.timeout(self.timeout) as scope:
                return await answer
        except TimeoutError as exc:
            if not scope.expired():
                raise
            message = f"the scripted model did not answer within {self.timeout:g}s"
            raise ProviderError(message, code="timeout", recoverable=True) from exc

    async def wait_for_requests(self, count: int) -> list[AIContext]:
        """Wait until ``count`` rounds have been asked for; returns the contexts so far.

        Cancellation: safe.
        """
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.contexts) >= count)
        return list(self.contexts)
