"""Helpers for testing code built on voice-hitl."""

from __future__ import annotations

import asyncio

from .human._human_input import HumanInputHandler
from .human._pending import PendingInputEvent

__all__ = ["RequestQueue"]


class RequestQueue:
    """Receives a handler's requests for one channel as they are announced.

    Installs itself as the handler's notifier for ``channel_id`` (replacing any other), so a
    test can wait for a request instead of polling::

        requests = RequestQueue(human.handler, "voice")
        event = await requests.next()
        human.handler.resolve(event.pending_id, "yes")
    """

    def __init__(self, handler: HumanInputHandler, channel_id: str = "") -> None:
        self._queue: asyncio.Queue[PendingInputEvent] = asyncio.Queue()
        handler.set_notifier(channel_id, self._announce)

    async def _announce(self, event: PendingInputEvent) -> None:
        self._queue.put_nowait(event)

    async def next(self) -> PendingInputEvent:
        """The next announced request.

        Cancellation: safe; no request is lost.
        """
        return await self._queue.get()
