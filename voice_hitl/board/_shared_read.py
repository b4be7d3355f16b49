""":class:`SharedRead`: concurrent callers of one idempotent read share a single round trip.

Under load the operator service lists the open requests for hundreds of callers at once; each
listing read every open request from Redis (2,000 of them: ~1 MB to parse), so the parsing
starved the event loop and other calls' replies waited past their read timeout (HTTP 503).
A shared read keeps the answers as fresh as before: a caller never gets a result read before
it called. A caller that arrives while a read is in flight waits for the *next* read, which
starts once the current one ends and serves everyone who arrived meanwhile: at most one read
in flight and one gathering, whatever the number of callers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["SharedRead"]

T = TypeVar("T")


class SharedRead(Generic[T]):
    """Share ``read`` between concurrent callers (module docstring).

    Args:
        read: The idempotent read (no arguments).
    """

    def __init__(self, read: Callable[[], Awaitable[T]]) -> None:
        self._read = read
        self._lock = asyncio.Lock()
        self._gathering: asyncio.Future[T] | None = None  # the next read, not started yet

    async def __call__(self) -> T:
        """The read's result, from a read that started after this call did.

        Raises:
            Whatever the read raised (every caller that shared it gets the error).

        Cancellation: safe. A caller's cancellation does not cancel the read others share;
        when the caller that runs it is cancelled, the others run it again.
        """
        while True:
            gathering = self._gathering
            if gathering is None:
                return await self._lead()
            try:
                return await asyncio.shield(gathering)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if gathering.cancelled() and task is not None and not task.cancelling():
                    continue  # the caller running it was cancelled, not us: read again
                raise

    async def _lead(self) -> T:
        gathering: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._gathering = gathering
        try:
            async with self._lock:  # the read in flight ends first
                if self._gathering is gathering:
                    self._gathering = None  # later callers gather for the next read
                result = await self._read()
        except BaseException as exc:
            if self._gathering is gathering:
                self._gathering = None
            if isinstance(exc, asyncio.CancelledError):
                gathering.cancel()
            else:
                gathering.set_exception(exc)
                gathering.exception()  # retrieved: nobody else may be waiting for it
            raise
        gathering.set_result(result)
        return result
