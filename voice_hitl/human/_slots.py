"""The records behind :class:`~voice_hitl.HumanInputHandler`: an active request's slot, and
the shared timers that time out waits (one loop timer per timeout value, not one per wait)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from ._pending import OutcomeKind, PendingInput

__all__ = ["Deadlines", "Slot"]


class Slot:
    """An active request with its outcome (once settled) and its waiter (while waited on)."""

    __slots__ = ("kind", "loop", "pending", "text", "waiter", "watchers")

    def __init__(self, pending: PendingInput, loop: asyncio.AbstractEventLoop) -> None:
        self.pending = pending
        self.loop = loop  # the loop that created it: settling happens there
        self.kind: OutcomeKind | None = None  # None until settled
        self.text = ""
        self.waiter: asyncio.Future[None] | None = None
        self.watchers: list[Callable[[PendingInput], None]] | None = None


class Deadlines:
    """The waits of one loop that share one timeout value, served by a single loop timer.

    Their deadlines arrive in order (the loop clock is monotonic), so a FIFO holds them sorted
    and one timer, armed for the oldest live deadline, replaces a timer per wait. A wait that
    ends marks its entry dead; dead entries are dropped when they reach the head, or all at
    once when they outnumber the live ones (as asyncio does with cancelled timers).
    """

    __slots__ = ("dead", "entries", "expire", "forget", "handle", "loop", "timeout")

    _COMPACT_AT = 64  # dead entries tolerated before a compaction is considered

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        timeout: float,
        expire: Callable[[Slot, float], None],
        forget: Callable[[Deadlines], None],
    ) -> None:
        self.expire = expire  # times out one slot
        self.forget = forget  # unregisters these deadlines from their handler
        self.loop = loop
        self.timeout = timeout
        # Each entry is [deadline, slot]; the slot is None once the entry is dead.
        self.entries: deque[list[Any]] = deque()
        self.dead = 0
        self.handle: asyncio.TimerHandle | None = None

    def add(self, slot: Slot) -> list[Any]:
        loop = self.loop
        deadline = loop.time() + self.timeout
        entry: list[Any] = [deadline, slot]
        self.entries.append(entry)
        if self.handle is None:
            self.handle = loop.call_at(deadline, self._expire)
        return entry

    @property
    def idle(self) -> bool:
        """True when no live wait is left (only dead entries, if any)."""
        return self.dead == len(self.entries)

    def discard(self, entry: list[Any]) -> None:
        """The wait of ``entry`` ended; it no longer needs its deadline."""
        if entry[1] is None:
            return  # already taken off by _expire
        entry[1] = None
        self.dead = dead = self.dead + 1
        if dead > self._COMPACT_AT and dead * 2 > len(self.entries):
            self.entries = deque(e for e in self.entries if e[1] is not None)
            self.dead = 0
            if not self.entries:
                self.drop()

    def _expire(self) -> None:
        # The loop judged the armed deadline reached: what is due by then is due now.
        now = self.loop.time()
        if self.handle is not None:
            now = max(now, self.handle.when())
            self.handle = None
        entries = self.entries
        due: list[Slot] = []
        while entries:
            entry = entries[0]
            slot = entry[1]
            if slot is None:
                entries.popleft()
                self.dead -= 1
            elif entry[0] <= now:
                entries.popleft()
                entry[1] = None
                due.append(slot)
            else:
                self.handle = self.loop.call_at(entry[0], self._expire)
                break
        else:
            self.drop()
        for slot in due:
            self.expire(slot, self.timeout)

    def drop(self) -> None:
        """Stop the timer and unregister from the handler."""
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.forget(self)
