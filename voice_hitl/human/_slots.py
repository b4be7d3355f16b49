"""The records behind :class:`~voice_hitl.HumanInputHandler`: an active request, and the
shared timers that time out waits (one loop timer per timeout value, not one per wait)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from ._pending import OutcomeKind, PendingInput

__all__ = ["Deadlines", "Request"]


class Request(PendingInput):
    """A request as its handler keeps it: the :class:`PendingInput` that ``create()`` returns,
    with the handler's state of it in private slots (one object a request, not two).

    The handler sets ``_loop``, ``_outcome``, ``_waiter`` and ``_watchers`` right after
    construction; ``_due`` only while a :class:`Deadlines` queue holds the request.
    """

    __slots__ = ("_due", "_loop", "_outcome", "_waiter", "_watchers")

    _due: float | None  # its wait's deadline on the loop clock, while queued; then None
    _loop: asyncio.AbstractEventLoop  # the loop that created it: settling happens there
    _outcome: tuple[OutcomeKind, str] | None  # None until settled
    _waiter: asyncio.Future[None] | None  # while a wait() is blocked on it
    _watchers: list[Callable[[PendingInput], None]] | None


class Deadlines:
    """The waits of one loop that share one timeout value, served by a single loop timer.

    Their deadlines arrive in order (the loop clock is monotonic), so a FIFO of the waiting
    requests holds them sorted and one timer, armed for the oldest live deadline, replaces a
    timer per wait. A wait that ends marks its request dead here (``_due`` None); dead ones are
    dropped when they reach the head, or all at once when they outnumber the live ones (as
    asyncio does with cancelled timers). A request is queued at most once: after its wait it
    is settled, and a settled request is never waited on again.
    """

    __slots__ = ("clock", "dead", "entries", "expire", "forget", "handle", "loop", "timeout")

    _COMPACT_AT = 64  # dead entries tolerated before a compaction is considered

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        timeout: float,
        expire: Callable[[Request, float], None],
        forget: Callable[[Deadlines], None],
    ) -> None:
        self.expire = expire  # times out one request
        self.forget = forget  # unregisters these deadlines from their handler
        self.loop = loop
        self.clock = loop.time
        self.timeout = timeout
        self.entries: deque[Request] = deque()
        self.dead = 0
        self.handle: asyncio.TimerHandle | None = None

    def add(self, request: Request) -> None:
        """Start timing a wait on ``request``: it times out ``timeout`` seconds from now."""
        deadline = request._due = self.clock() + self.timeout
        self.entries.append(request)
        if self.handle is None:
            self.handle = self.loop.call_at(deadline, self._expire)

    @property
    def idle(self) -> bool:
        """True when no live wait is left (only dead entries, if any)."""
        return self.dead == len(self.entries)

    def discard(self, request: Request) -> None:
        """The wait on ``request`` ended; it no longer needs its deadline."""
        if request._due is None:
            return  # already taken off by _expire
        request._due = None
        self.dead = dead = self.dead + 1
        if dead > self._COMPACT_AT and dead * 2 > len(self.entries):
            self.entries = deque(r for r in self.entries if r._due is not None)
            self.dead = 0
            if not self.entries:
                self.drop()

    def _expire(self) -> None:
        # The loop judged the armed deadline reached: what is due by then is due now.
        now = self.clock()
        if self.handle is not None:
            now = max(now, self.handle.when())
            self.handle = None
        entries = self.entries
        due: list[Request] = []
        while entries:
            request = entries[0]
            deadline = request._due
            if deadline is None:
                entries.popleft()
                self.dead -= 1
            elif deadline <= now:
                entries.popleft()
                request._due = None
                due.append(request)
            else:
                self.handle = self.loop.call_at(deadline, self._expire)
                break
        else:
            self.drop()
        for request in due:
            self.expire(request, self.timeout)

    def drop(self) -> None:
        """Stop the timer and unregister from the handler."""
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.forget(self)
