"""HumanInputHandler timeouts: every wait keeps its own deadline, whatever timer serves it.

Waits that share a timeout value share one loop timer (``voice_hitl.human._slots.Deadlines``);
these tests pin what a caller sees: when each wait times out, that an ended wait is never timed
out later, that cancelling or closing leaves the others' deadlines alone, and that a late answer
is refused. Times are the loop's (``looptime``), so they are exact and nothing sleeps for real.
"""

from __future__ import annotations

import asyncio
import random
import threading

import pytest

from voice_hitl import HumanInputHandler, PendingInputStatus


async def _open(handler: HumanInputHandler, count: int) -> tuple[list[str], float]:
    """Create ``count`` requests; return their ids and the loop time they were created at."""
    ids = [(await handler.create("AskUserQuestion", {"i": i})).pending_id for i in range(count)]
    return ids, asyncio.get_running_loop().time()


async def _timed_wait(handler: HumanInputHandler, pending_id: str, timeout: float) -> float:
    """Wait on a request that nobody answers; return the loop time it timed out at."""
    with pytest.raises(TimeoutError):
        await handler.wait(pending_id, timeout=timeout)
    return asyncio.get_running_loop().time()


@pytest.mark.looptime
async def test_waits_sharing_a_timeout_each_time_out_at_their_own_deadline() -> None:
    handler = HumanInputHandler()
    ids, start = await _open(handler, 4)
    first = asyncio.create_task(_timed_wait(handler, ids[0], 10))
    await asyncio.sleep(4)
    second = asyncio.create_task(_timed_wait(handler, ids[1], 10))
    shorter = asyncio.create_task(_timed_wait(handler, ids[2], 3))  # another timeout value
    answered = asyncio.create_task(handler.wait(ids[3], timeout=10))
    await asyncio.sleep(1)
    assert handler.resolve(ids[3], "yes")
    assert await answered == "yes"
    assert await first - start == pytest.approx(10)
    assert await shorter - start == pytest.approx(7)
    assert await second - start == pytest.approx(14)
    assert [handler.resolve(pid, "late") for pid in ids] == [False] * 4


@pytest.mark.looptime
async def test_an_ended_wait_is_never_timed_out_and_the_timer_stops() -> None:
    handler = HumanInputHandler()
    loop = asyncio.get_running_loop()
    pendings = [await handler.create("AskUserQuestion", {"i": i}) for i in range(300)]
    waits = [asyncio.create_task(handler.wait(p.pending_id, timeout=30)) for p in pendings]
    await asyncio.sleep(1)
    order = list(range(300))
    random.Random(3).shuffle(order)
    for i in order:  # ends more waits than the shared timer tolerates before compacting
        handler.resolve(pendings[i].pending_id, f"answer {i}")
    assert await asyncio.gather(*waits) == [f"answer {i}" for i in range(300)]
    await asyncio.sleep(60)  # past every deadline: nothing is timed out after the fact
    assert all(p.status is PendingInputStatus.RESOLVED for p in pendings)
    assert not [h for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
    late = await handler.create("AskUserQuestion", {})
    start = loop.time()
    assert await _timed_wait(handler, late.pending_id, 30) - start == pytest.approx(30)


@pytest.mark.looptime
async def test_cancelling_one_wait_leaves_the_others_deadlines() -> None:
    handler = HumanInputHandler()
    ids, start = await _open(handler, 3)
    cancelled = asyncio.create_task(handler.wait(ids[0], timeout=5))
    await asyncio.sleep(1)
    later = asyncio.create_task(_timed_wait(handler, ids[1], 5))
    await asyncio.sleep(1)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert handler.resolve(ids[0], "late") is False  # withdrawn
    latest = asyncio.create_task(_timed_wait(handler, ids[2], 5))
    assert await later - start == pytest.approx(6)
    assert await latest - start == pytest.approx(7)


@pytest.mark.looptime
async def test_close_settles_waits_sharing_a_timer_and_nothing_times_out_after() -> None:
    handler = HumanInputHandler()
    pendings = [await handler.create("AskUserQuestion", {"i": i}) for i in range(3)]
    waits = [asyncio.create_task(handler.wait(p.pending_id, timeout=5)) for p in pendings]
    await asyncio.sleep(1)
    await handler.close()
    outcomes = await asyncio.gather(*waits, return_exceptions=True)
    assert [type(o) for o in outcomes] == [RuntimeError] * 3
    await asyncio.sleep(10)
    assert all(p.status is PendingInputStatus.REJECTED for p in pendings)
    assert [handler.resolve(p.pending_id, "late") for p in pendings] == [False] * 3


async def test_waits_on_two_loops_with_the_same_timeout_each_time_out() -> None:
    """A second loop (another thread) with live waits of the same timeout gets its own timer."""
    handler = HumanInputHandler()
    other_blocked = threading.Event()
    results: list[BaseException] = []

    async def other_thread() -> None:
        pending = await handler.create("AskUserQuestion", {"thread": "other"})
        waiting = asyncio.create_task(handler.wait(pending.pending_id, timeout=0.3))
        await asyncio.sleep(0)  # a checkpoint: the wait is blocked
        other_blocked.set()
        try:
            await waiting
        except TimeoutError as exc:
            results.append(exc)

    mine = await handler.create("AskUserQuestion", {"thread": "main"})
    mine_waits = asyncio.create_task(handler.wait(mine.pending_id, timeout=0.3))
    await asyncio.sleep(0)
    thread = threading.Thread(target=asyncio.run, args=(other_thread(),))
    thread.start()
    try:
        await asyncio.to_thread(other_blocked.wait, 10)
        with pytest.raises(TimeoutError):
            await mine_waits
    finally:
        await asyncio.to_thread(thread.join, 10)
    assert len(results) == 1 and "timed out after 0.3s" in str(results[0])
