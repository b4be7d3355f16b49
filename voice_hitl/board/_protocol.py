"""The request board interface every backend implements (:class:`RequestBoard`).

Backends: :class:`~voice_hitl.board.MemoryBoard` (one process, no server: the embedded
default) and :class:`~voice_hitl.board.RedisBoard` (many workers on many machines). One test
suite runs against both.

Rules every backend keeps:

- **First settle wins, atomically.** :meth:`RequestBoard.settle` changes an open request's
  status once; every later attempt gets ``won=False`` and the settled record (status, when,
  by whom). A settle never overwrites another.
- **Owners heartbeat.** A worker calls :meth:`RequestBoard.heartbeat` with a time to live;
  when it lapses, its open requests are ``abandoned`` (by :meth:`RequestBoard.reap`, or at the
  latest when somebody tries to answer one).
- **Publishing is idempotent.** Re-publishing an open request changes nothing; re-publishing a
  settled one returns the settled record (so a reconnecting worker learns what it missed);
  ``revive=True`` reopens a request that was only ``abandoned``, for an owner that is back.
- **Events.** :meth:`RequestBoard.subscribe` yields :class:`BoardOpened` and
  :class:`BoardSettled` (all of them, or those of one worker's requests) from the moment its
  ``async with`` block is entered. A subscription may lose events while the server is
  unreachable: it then raises :class:`BoardUnavailableError`, and the subscriber re-reads what
  it needs after subscribing again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

from ._model import BoardEvent, BoardRequest, BoardStatus, SettleResult

__all__ = ["RequestBoard"]


@runtime_checkable
class RequestBoard(Protocol):
    """Where open requests are published and settled from any process (module docstring)."""

    async def publish(self, request: BoardRequest, *, revive: bool = False) -> BoardRequest:
        """Put an open request on the board; returns the board's record of it afterwards.

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: the request may or may not be on the board; publishing again is safe.
        """
        ...

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
        """Settle an open request, if nobody did first.

        ``worker`` names the caller when it is the request's owner (its own settles skip the
        liveness check); an answer for a request whose owner's heartbeat lapsed abandons it
        instead and loses.

        Raises:
            BoardUnavailableError: The server cannot be reached.
            ValueError: ``status`` is ``open``.

        Cancellation: the settle may or may not have happened; :meth:`get` tells.
        """
        ...

    async def get(self, request_id: str) -> BoardRequest | None:
        """The request (open, or settled and still retained), or None.

        Cancellation: safe.
        """
        ...

    async def open_requests(self) -> list[BoardRequest]:
        """Every open request, oldest first.

        Cancellation: safe.
        """
        ...

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        """Mark ``worker`` alive for ``ttl`` seconds.

        Returns:
            True when the worker had no live heartbeat before (first beat, or it lapsed).

        Cancellation: safe.
        """
        ...

    async def reap(self) -> list[BoardRequest]:
        """Abandon the open requests of workers whose heartbeat lapsed; returns them.

        Cancellation: the reap may be partial; reaping again finishes it.
        """
        ...

    def subscribe(
        self, worker: str | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[BoardEvent]]:
        """Events of every request, or only of ``worker``'s requests (see the module
        docstring); subscribed when the ``async with`` block is entered."""
        ...

    async def aclose(self) -> None:
        """Release the connections (idempotent).

        Cancellation: safe; the connections are released anyway.
        """
        ...
