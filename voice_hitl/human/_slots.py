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
    construction; a :class:`Deadlines` queue sets ``_due`` when it starts timing a wait.
    """

    __slots__ = ("_due", "_loop", "_outcome", "_waiter", "_watchers")

    _due: float  # its wait's deadline on the loop clock
    _loop: asyncio.AbstractEventLoop  # the loop that created it: settling happens there
    _outcome: tuple[OutcomeKind, str] | None  # None until settled
    _waiter: asyncio.Future[None] | None  # while a wait() is blocked on it
    _watchers: list[Callable[[PendingInput], None]] | None

    def __repr__(self) -> str:
        # The public record's repr: this class and the state it adds are the handler's own.
        return "PendingInput(" + PendingInput.__repr__(self).partition("(")[2]


class Deadlines:
    """The waits of one loop that share one timeout value, served by a single loop timer.

    Their deadlines arrive in order (the loop clock is monotonic), so a FIFO of the waiting
    requests holds them sorted, and one timer, armed for the oldest deadline still due, replaces
    a timer per wait. A request whose wait ended is settled (a wait ends only once its request
    is), and a settled request has no deadline left: nothing is done when a wait ends. Settled
    requests are dropped when they reach the head, or all at once when the queue has doubled
    since it was last compacted (amortised O(1) a wait); a queue with nothing due stops its timer
    when the timer fires. A request is queued at most once (a settled one is never waited on).
    """

    __slots__ = ("clock", "entries", "expire", "forget", "handle", "limit", "loop", "timeout")

    _MIN_LIMIT = 64  # the queue's length that starts a compaction, at the least

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
        self.limit = self._MIN_LIMIT
        self.handle: asyncio.TimerHandle | None = None

    def add(self, request: Request) -> None:
        """Time a wait on ``request``, open: it times out ``timeout`` seconds from now."""
        deadline = request._due = self.clock() + self.timeout
        entries = self.entries
        entries.append(request)
        if self.handle is None:
            self.handle = self.loop.call_at(deadline, self._expire)
        elif len(entries) > self.limit:
            self.entries = entries = deque(r for r in entries if r._outcome is None)
            self.limit = max(self._MIN_LIMIT, 2 * len(entries))

    @property
    def idle(self) -> bool:
        """True when no wait is left to time out."""
        return all(request._outcome is not None for request in self.entries)

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
            if request._outcome is not None:
                entries.popleft()  # its wait ended
            elif request._due <= now:
                due.append(entries.popleft())
            else:
                self.handle = self.loop.call_at(request._due, self._expire)
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
