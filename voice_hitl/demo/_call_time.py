"""Call time for a speed-0 demo: deadlines that count the call's seconds, not the machine's.

At ``speed=0`` the scripted caller sends audio as fast as the machine allows, so a wall-clock
deadline measures the CPU (recognition and synthesis run in worker threads, slower under load)
instead of the people. Here a request's deadline counts the call's own clock (the samples the
caller sent); while the caller waits, the clock jumps to the next deadline only once no
executor work (thread or process) is in flight and the event loop has run dry, so a deadline
never fires while the recognition or synthesis it waits on is still running. The verdict is
then the same loaded or idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import Any

from ..voice._caller_transport import ScriptedCallerTransport

__all__ = ["CallClock", "WorkGauge"]

_SETTLE_ROUNDS = 200
"""Loop rounds with no worker busy before the call counts as idle: a result handed back from
a thread takes a few rounds (future, task wake-up, listeners, the next ``to_thread``) to
become new work, far fewer than this."""


class WorkGauge:
    """Counts the work a loop has in flight in executors (threads or processes): every
    ``loop.run_in_executor`` (so every ``asyncio.to_thread``) while the gauge is installed."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._run_in_executor = loop.run_in_executor
        self.busy = 0
        self._users = 0
        self._quiet = asyncio.Event()
        self._quiet.set()

    def _counted(self, executor: Executor | None, func: Callable[..., Any], *args: Any) -> Any:
        future = self._run_in_executor(executor, func, *args)
        self.busy += 1
        self._quiet.clear()
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _: object) -> None:
        self.busy -= 1
        if self.busy == 0:
            self._quiet.set()

    async def quiet(self) -> None:
        """Return once no work is in flight and the loop has run dry of what it started.

        Cancellation: safe.
        """
        rounds = 0
        while rounds < _SETTLE_ROUNDS:
            if self.busy:
                rounds = 0
                await self._quiet.wait()
            else:
                rounds += 1
                await asyncio.sleep(0)

    @classmethod
    @contextlib.contextmanager
    def installed(cls) -> Iterator[WorkGauge]:
        """Count the running loop's executor work while inside (nested uses share a gauge)."""
        loop = asyncio.get_running_loop()
        gauge = _GAUGES.get(loop)
        if gauge is None:
            gauge = _GAUGES[loop] = cls(loop)
            loop.run_in_executor = gauge._counted  # type: ignore[method-assign,assignment]
        gauge._users += 1
        try:
            yield gauge
        finally:
            gauge._users -= 1
            if gauge._users == 0:
                del loop.run_in_executor  # the loop's own method again
                del _GAUGES[loop]


_GAUGES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WorkGauge] = (
    weakref.WeakKeyDictionary()
)


class CallClock:
    """Timers on a scripted call's clock (samples the caller sent), for a speed-0 call.

    While the caller waits for the agent and nothing is in flight (:meth:`WorkGauge.quiet`),
    the clock jumps to the earliest timer; otherwise it moves only with the caller's audio.
    """

    def __init__(self, transport: ScriptedCallerTransport, gauge: WorkGauge) -> None:
        self._transport = transport
        self._gauge = gauge
        self._timers: list[tuple[int, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._ids = itertools.count()
        self._added = asyncio.Event()
        self._remove = transport.add_clock_listener(self._fire_due)
        transport.on_idle = self._idle

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` after ``seconds`` of call time; returns a canceller."""
        when = self._transport.clock + round(seconds * self._transport.sample_rate)
        timer = next(self._ids)
        heapq.heappush(self._timers, (when, timer, callback))
        self._added.set()
        return lambda: self._cancelled.add(timer)

    def close(self) -> None:
        """Stop driving the transport's clock; pending timers never fire."""
        self._remove()
        self._transport.on_idle = None
        self._timers.clear()

    def _fire_due(self) -> None:
        while self._timers and self._timers[0][0] <= self._transport.clock:
            _, timer, callback = heapq.heappop(self._timers)
            if timer in self._cancelled:
                self._cancelled.discard(timer)
                continue
            callback()

    def _next(self) -> int | None:
        while self._timers and self._timers[0][1] in self._cancelled:
            self._cancelled.discard(heapq.heappop(self._timers)[1])
        return self._timers[0][0] if self._timers else None

    async def _idle(self) -> None:
        while True:
            await self._gauge.quiet()
            when = self._next()
            if when is not None:
                self._transport.advance(when)
                return
            self._added.clear()
            await self._added.wait()
