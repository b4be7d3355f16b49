"""A speed-0 call's deadlines count call time: they never fire while the work they wait on
(recognition, synthesis: executor threads or processes) is in flight, whatever the load."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from voice_hitl import HumanInputHandler
from voice_hitl.demo._call_time import CallClock, WorkGauge
from voice_hitl.voice._caller_transport import CallerTurn, ScriptedCallerTransport

RATE = 16_000


def _caller(seconds: float) -> ScriptedCallerTransport:
    quiet = np.zeros(round(seconds * RATE), dtype=np.int16)
    return ScriptedCallerTransport([CallerTurn(quiet, "words", after="now")], speed=0)


async def _drain(caller: ScriptedCallerTransport) -> asyncio.Task[None]:
    """Feed the caller's audio in a task (it waits for the agent after its turn)."""

    async def feed() -> None:
        async for _ in caller.caller_audio("call"):
            pass

    return asyncio.create_task(feed())


async def test_a_deadline_waits_for_work_in_flight_then_fires_on_call_time() -> None:
    caller = _caller(0.5)
    release = threading.Event()
    fired: list[float] = []
    rang = asyncio.Event()
    with WorkGauge.installed() as gauge:
        clock = CallClock(caller, gauge)
        clock.call_later(5.0, lambda: (fired.append(caller.clock / RATE), rang.set()))
        work = asyncio.create_task(asyncio.to_thread(release.wait))  # "recognition" in flight
        feeding = await _drain(caller)
        for _ in range(1_000):  # the caller is done and waits: only the work is in flight
            await asyncio.sleep(0)
        assert gauge.busy == 1 and fired == []  # the deadline holds while the work runs
        assert caller.clock == round(1.4 * RATE)  # its turn and trailing silence, no more
        release.set()
        await work
        await rang.wait()
        assert fired == [5.0]  # exactly at the deadline, in call time
        await caller.close_session("call")
        await feeding
        clock.close()
    assert "run_in_executor" not in vars(asyncio.get_running_loop())  # uninstalled


async def test_a_wait_times_out_on_call_time_with_the_handlers_message() -> None:
    caller = _caller(0.2)
    with WorkGauge.installed() as gauge:
        clock = CallClock(caller, gauge)
        handler = HumanInputHandler(clock=clock)
        pending = await handler.create("ConfirmAction", {"action": "go"})
        feeding = await _drain(caller)
        with pytest.raises(TimeoutError, match="Human input timed out after 3s"):
            await handler.wait(pending.pending_id, timeout=3.0)
        assert caller.clock == 3 * RATE  # opened at 0: its audio (1.1 s), then idle to 3 s
        await caller.close_session("call")
        await feeding
        clock.close()


async def test_an_answer_in_time_cancels_the_deadline() -> None:
    caller = _caller(0.2)
    with WorkGauge.installed() as gauge:
        clock = CallClock(caller, gauge)
        handler = HumanInputHandler(clock=clock)
        pending = await handler.create("ConfirmAction", {"action": "go"})
        waiting = asyncio.create_task(handler.wait(pending.pending_id, timeout=3.0))
        await asyncio.sleep(0)
        assert handler.resolve(pending.pending_id, "yes")
        assert await waiting == "yes"
        feeding = await _drain(caller)
        for _ in range(1_000):
            await asyncio.sleep(0)
        assert caller.clock == round(1.1 * RATE)  # no deadline left to jump to
        await caller.close_session("call")
        await feeding
        clock.close()
