""":class:`MemoryBoard`: the embedded request board (one process, no server to run)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from ._model import (
    BoardClaim,
    BoardClaimed,
    BoardEscalated,
    BoardEvent,
    BoardOpened,
    BoardRequest,
    BoardSettled,
    BoardStatus,
    ClaimResult,
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
            if isinstance(event, BoardEscalated):
                if wanted is None:
                    queue.put_nowait(event)
            elif wanted == worker or (wanted is None and not isinstance(event, BoardClaimed)):
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

    async def publish_many(
        self, requests: Sequence[BoardRequest], *, revive: bool = False
    ) -> list[BoardRequest]:
        """See :meth:`RequestBoard.publish_many`. Cancellation: safe."""
        return [await self.publish(request, revive=revive) for request in requests]

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
            return SettleResult(False, self._abandon(current))
        if worker != current.worker and self._claim_waits(current):
            return SettleResult(False, current)
        return SettleResult(True, self._settle_now(current, status, text, by, via, detail))

    def _abandon(self, current: BoardRequest) -> BoardRequest:
        reason = abandon_reason(current.worker)
        return self._settle_now(current, BoardStatus.ABANDONED, reason, None, None, "")

    def _claim_waits(self, request: BoardRequest) -> bool:
        claim = request.claim
        return claim is not None and (claim.taken or claim.until > time.time())

    async def claim(
        self,
        request_id: str,
        status: BoardStatus,
        text: str,
        *,
        token: str,
        window: float,
        by: str | None = None,
        via: str | None = None,
    ) -> ClaimResult:
        """See :meth:`RequestBoard.claim`. Cancellation: safe (no await)."""
        if status not in (BoardStatus.ANSWERED, BoardStatus.REJECTED):
            raise ValueError("a claim answers or rejects")
        current = self._open.get(request_id)
        if current is None:
            earlier = self._settled.get(request_id)
            return ClaimResult("missing" if earlier is None else "settled", earlier)
        if not self._alive(current.worker):
            return ClaimResult("settled", self._abandon(current))
        if self._claim_waits(current):
            same = current.claim is not None and current.claim.token == token
            return ClaimResult("claimed" if same else "busy", current)
        claim = BoardClaim(token, status, text, by, via, time.time() + window)
        claimed = replace(current, claim=claim)
        self._open[request_id] = claimed
        self._emit(BoardClaimed(claimed))
        return ClaimResult("claimed", claimed)

    async def take(self, request_id: str, token: str, worker: str) -> bool:
        """See :meth:`RequestBoard.take`. Cancellation: safe (no await)."""
        current = self._open.get(request_id)
        if current is None or current.worker != worker or current.claim is None:
            return False
        claim = current.claim
        if claim.token != token:
            return False
        if claim.taken:
            return True
        if claim.until <= time.time():
            return False
        self._open[request_id] = replace(current, claim=replace(claim, taken=True))
        return True

    async def release(self, request_id: str, token: str) -> BoardRequest | None:
        """See :meth:`RequestBoard.release`. Cancellation: safe (no await)."""
        current = self._open.get(request_id)
        if current is None:
            return self._settled.get(request_id)
        claim = current.claim
        if claim is None or claim.token != token or claim.taken:
            return current
        released = replace(current, claim=None)
        self._open[request_id] = released
        if not self._alive(current.worker):
            return self._abandon(released)
        return released

    async def escalate(self, request_id: str, escalation: Mapping[str, Any]) -> bool:
        """See :meth:`RequestBoard.escalate`. Cancellation: safe (no await)."""
        current = self._open.get(request_id)
        if current is None:
            return False
        self._emit(BoardEscalated(current, dict(escalation)))
        return True

    async def restore(self, requests: Sequence[BoardRequest]) -> int:
        """See :meth:`RequestBoard.restore`. Cancellation: safe (no await)."""
        if any(request.is_open for request in requests):
            raise ValueError("only a settled record can be restored")
        restored = 0
        for request in requests:
            current = self._open.get(request.id)
            if current is not None and current.worker == request.worker:
                del self._open[request.id]  # its owner settled it; the board lost the settle
                self._record(request)
                self._emit(BoardSettled(request))
                restored += 1
            elif current is None and request.id not in self._settled:
                self._record(request)
                restored += 1
        return restored

    async def lost_state(self) -> float | None:
        """See :meth:`RequestBoard.lost_state`: None (this process's memory is the board).

        Cancellation: safe.
        """
        return None

    async def confirm(self) -> None:
        """See :meth:`RequestBoard.confirm`: returns (no replicas). Cancellation: safe."""

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
        return [self._abandon(r) for r in gone]

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
