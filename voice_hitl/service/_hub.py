""":class:`FeedHub`: one board subscription fanned out to every live-feed client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..board import BoardEvent, BoardUnavailableError, RequestBoard

__all__ = ["RESYNC", "FeedHub"]

logger = logging.getLogger("voice_hitl.service")

RESYNC = "resync"
"""Put on every client's queue after the hub (re)subscribed: send a fresh snapshot."""

FeedItem = BoardEvent | str


class FeedHub:
    """Follows every event of a board and hands it to each client's queue.

    A client whose queue is full (it stopped reading) is dropped: its queue gets ``None``.

    Args:
        board: The board to follow.
        reconnect_delay: Seconds between attempts when the board is unreachable.
        queue_size: Events a client may fall behind by.
    """

    def __init__(
        self, board: RequestBoard, *, reconnect_delay: float = 0.5, queue_size: int = 10_000
    ) -> None:
        self._board = board
        self._delay = reconnect_delay
        self._size = queue_size
        self._clients: set[asyncio.Queue[FeedItem | None]] = set()
        self._listeners: list[Callable[[BoardEvent], None]] = []
        self.subscribed = asyncio.Event()

    def add_listener(self, listener: Callable[[BoardEvent], None]) -> None:
        """Call ``listener(event)`` for every board event (it must not block)."""
        self._listeners.append(listener)

    def join(self) -> asyncio.Queue[FeedItem | None]:
        """A new client's queue of events (and ``RESYNC`` markers)."""
        queue: asyncio.Queue[FeedItem | None] = asyncio.Queue(self._size)
        self._clients.add(queue)
        return queue

    def leave(self, queue: asyncio.Queue[FeedItem | None]) -> None:
        """Stop feeding a client's queue."""
        self._clients.discard(queue)

    def _fan_out(self, item: FeedItem) -> None:
        for queue in list(self._clients):
            try:
                queue.put_nowait(item)
            except asyncio.QueueFull:
                self._clients.discard(queue)
                queue.get_nowait()
                queue.put_nowait(None)

    async def run(self) -> None:
        """Follow the board until cancelled, re-subscribing when it drops.

        Cancellation: the intended way to stop it.
        """
        first = True
        while True:
            try:
                async with self._board.subscribe() as events:
                    self.subscribed.set()
                    if not first:
                        self._fan_out(RESYNC)
                    first = False
                    async for event in events:
                        self._fan_out(event)
                        for listener in self._listeners:
                            try:
                                listener(event)
                            except Exception:
                                logger.exception("board event listener failed")
            except BoardUnavailableError as exc:
                if self.subscribed.is_set() or first:
                    logger.warning("operator feed lost the board: %s", exc)
                self.subscribed.clear()
            await asyncio.sleep(self._delay)
