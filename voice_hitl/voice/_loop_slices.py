"""Spreading work over event-loop turns, so settling thousands of calls never holds the loop.

Cancelling a task is cheap; what its cancellation runs (withdrawing a request, reporting the
call) is not, and every task cancelled in one pass runs in the next loop turn. Closing a session
with 10,000 open calls that way held the loop for one to four seconds.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from typing import Any

__all__ = ["CANCEL_SLICE", "all_done", "cancel_in_slices"]

CANCEL_SLICE = 64
"""How many tasks :func:`cancel_in_slices` cancels per loop turn."""


def cancel_in_slices(tasks: Iterable[asyncio.Task[Any]], reason: str) -> None:
    """Cancel ``tasks`` with ``reason``: :data:`CANCEL_SLICE` now, the next slices on later
    loop turns, so each turn runs at most one slice of cancellations. Must be called on the
    tasks' loop."""
    _cancel_next(asyncio.get_running_loop(), deque(tasks), reason)


def _cancel_next(
    loop: asyncio.AbstractEventLoop, tasks: deque[asyncio.Task[Any]], reason: str
) -> None:
    for _ in range(min(CANCEL_SLICE, len(tasks))):
        tasks.popleft().cancel(reason)
    if tasks:
        loop.call_soon(_cancel_next, loop, tasks, reason)


async def all_done(tasks: list[asyncio.Task[Any]]) -> None:
    """Wait until every task in ``tasks`` is done, holding none of them meanwhile: the list is
    emptied, so a finished task (its frames, its exception) is freed when it ends rather than
    when the last one does (thousands of them kept alive made the garbage collector's full
    passes cost hundreds of milliseconds).

    Cancellation: safe; the tasks go on.
    """
    left = len(tasks)
    if not left:
        return
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def count(_: asyncio.Task[Any]) -> None:
        nonlocal left
        left -= 1
        if not left and not done.done():
            done.set_result(None)

    for task in tasks:
        task.add_done_callback(count)
    del tasks[:]
    await done
