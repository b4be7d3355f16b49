""":class:`MemoryBoard`: the embedded request board (one process, no server to run)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from ._model import (
    BoardEvent,
    BoardOpened,
    BoardRequest,
    BoardSettled,
    BoardStatus,
    SettleResult,
)

__all__ = ["MemoryBoard", "abandon_reason"]


def abandon_reason(worker: str) -> str:
    """The reason an abandoned request carries."""
    return f"abandoned: worker {worker!r} stopped sending heartbeats"


class MemoryBoard:
    """A :class:`~voice_hitl.board.RequestBoard` held in this process's memory.

    For one machine: the workers' bridges and ``voice-hitl serve``'s app share one instance in
    one event loop (``voice-hitl demo --operator`` runs that way). Settled requests stay
    readable (for "already answered" replies) up to ``retention`` of them.

    Args:
        retention: How many settled requests stay readable.
        clock: Seconds, for heartbeats (``time.monotonic`` by default).
    """

    def __init__(
        self, retention: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._open: dict[str, BoardRequest] = {}
        self._settled: OrderedDict[str, BoardRequest] = OrderedDict()
        self._retention = retention
        self._alive_until: dict[str, float] = {}
        self._clock = clock
        self._subscribers: list[tuple[str | None, asyncio.Queue[BoardEvent]]] = []
        self._closed = False

    def _emit(self, event: BoardEvent) -> None:
        worker = event.request.worker
        for wanted, queue in self._subscribers:
            if wanted is None or wanted == worker:
                queue.put_nowait(event)

    def _alive(self, worker: str) -> bool:
        return self._alive_until.get(worker, float("-inf")) > self._clock()

    def _record(self, request: BoardRequest) -> None:
        self._settled[request.id] = request
        while len(self._settled) > self._retention:
            self._settled.popitem(last=False)

    def _settle_now(
        self,
        current: BoardRequest,
        status: BoardStatus,
        text: str,
        by: str | None,
        via: str | None,
        detail: str,
    ) -> BoardRequest:
        settled = current.settled(status, text, time.time(), by, via, detail)
        del self._open[current.id]
        self._record(settled)
        self._emit(BoardSettled(settled))
        return settled

    async def publish(self, request: BoardRequest, *, revive: bool = False) -> BoardRequest:
        """See :meth:`RequestBoard.publish`. Cancellation: safe."""
        current = self._open.get(request.id)
        if current is not None:
            return current
        earlier = self._settled.get(request.id)
        if earlier is not None and not (revive and earlier.status is BoardStatus.ABANDONED):
            return earlier
        if earlier is not None:
            del self._settled[request.id]
        self._open[request.id] = request
        self._emit(BoardOpened(request))
        return request

    async def settle(
        self,
        request_id: str,
        status: BoardStatus,
        text: str = "",
        *,
        by: str | None = None,
        via: str | None = None,
        detail: str = "",
        worker: str | None = None,
    ) -> SettleResult:
        """See :meth:`RequestBoard.settle`. Cancellation: safe (no await before the settle)."""
        if status is BoardStatus.OPEN:
            raise ValueError("cannot settle a request as 'open'")
        current = self._open.get(request_id)
        if current is None:
            return SettleResult(False, self._settled.get(request_id))
        if worker != current.worker and not self._alive(current.worker):
            reason = abandon_reason(current.worker)
            return SettleResult(
                False, self._settle_now(current, BoardStatus.ABANDONED, reason, None, None, "")
            )
        return SettleResult(True, self._settle_now(current, status, text, by, via, detail))

    async def get(self, request_id: str) -> BoardRequest | None:
        """See :meth:`RequestBoard.get`. Cancellation: safe."""
        return self._open.get(request_id) or self._settled.get(request_id)

    async def open_requests(self) -> list[BoardRequest]:
        """See :meth:`RequestBoard.open_requests`. Cancellation: safe."""
        return sorted(self._open.values(), key=lambda r: r.created_at)

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        """See :meth:`RequestBoard.heartbeat`. Cancellation: safe."""
        lapsed = not self._alive(worker)
        self._alive_until[worker] = self._clock() + ttl
        return lapsed

    async def reap(self) -> list[BoardRequest]:
        """See :meth:`RequestBoard.reap`. Cancellation: safe."""
        gone = [r for r in self._open.values() if not self._alive(r.worker)]
        return [
            self._settle_now(r, BoardStatus.ABANDONED, abandon_reason(r.worker), None, None, "")
            for r in gone
        ]

    @asynccontextmanager
    async def subscribe(
        self, worker: str | None = None
    ) -> AsyncIterator[AsyncIterator[BoardEvent]]:
        """See :meth:`RequestBoard.subscribe`."""
        queue: asyncio.Queue[BoardEvent] = asyncio.Queue()
        entry = (worker, queue)
        self._subscribers.append(entry)

        async def events() -> AsyncIterator[BoardEvent]:
            while True:
                yield await queue.get()

        stream = events()
        try:
            yield stream
        finally:
            self._subscribers.remove(entry)
            await stream.aclose()  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        """Forget the subscribers (idempotent). Cancellation: safe."""
        self._closed = True
