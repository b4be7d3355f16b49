"""``MockAIProvider``: a scripted text provider for tests and examples.

It answers an ``AIChannel``'s rounds from a script, in order, and records every context it was
given, so a test can check what the model would have read (tool results included)::

    provider = MockAIProvider([
        AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Which colour?"})]),
        lambda context: AIResponse(text=f"You chose {context.messages[-1].content}"),
    ])
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from voice_hitl import AIContext, AIResponse, AIToolCall, ServedCall

__all__ = ["MockAIProvider", "tool_call"]

_ids = itertools.count(1)

Step = AIResponse | Callable[[AIContext], AIResponse]
"""A scripted answer, or a function of the context that returns one."""


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
    """

    def __init__(self, script: Sequence[Step] = ()) -> None:
        self.script = list(script)
        self.contexts: list[AIContext] = []
        self._arrived = asyncio.Condition()

    async def generate(self, context: AIContext) -> AIResponse:
        """Answer the next round from the script.

        Cancellation: safe; the round is still recorded.
        """
        index = len(self.contexts)
        self.contexts.append(context)
        async with self._arrived:
            self._arrived.notify_all()
        if index >= len(self.script):
            return AIResponse()
        step = self.script[index]
        return step(context) if callable(step) else step

    async def wait_for_requests(self, count: int) -> list[AIContext]:
        """Wait until ``count`` rounds have been asked for; returns the contexts so far.

        Cancellation: safe.
        """
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.contexts) >= count)
        return list(self.contexts)
