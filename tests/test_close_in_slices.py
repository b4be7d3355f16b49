"""Closing a busy channel or kit shares the loop (issue 31, item 13).

Thousands of open calls used to wake in one loop pass, each spawning its own observer task,
so closing 10,000 of them held the loop for seconds (``bench/bench_close_stall.py`` measures
it). These tests pin the mechanism, not a duration: withdrawals happen a slice per loop turn,
the reports go through a bounded pool of tasks, and every call is still reported once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

import pytest
from doors import Observed, human_tools

from providers.mock import MockRealtimeProvider
from voice_hitl import RealtimeVoiceChannel, RequestSettled, VoiceKit
from voice_hitl.tools._hooks import OBSERVER_TASKS
from voice_hitl.voice._loop_slices import CANCEL_SLICE

CALLS = 3 * CANCEL_SLICE + 5


class Turns:
    """Counts loop turns: a callback that re-arms itself with ``call_soon``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.turn = 0
        self.running = True
        loop.call_soon(self.tick)

    def tick(self) -> None:
        self.turn += 1
        if self.running:
            self.loop.call_soon(self.tick)


class TaskCount:
    """Counts the tasks created on the loop while installed (a task factory)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.created = 0

    def factory(
        self,
        loop: asyncio.AbstractEventLoop,
        coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        **kwargs: Any,
    ) -> asyncio.Task[Any]:
        self.created += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def during(self, action: Callable[[], Awaitable[None]]) -> None:
        previous = self.loop.get_task_factory()
        self.loop.set_task_factory(self.factory)  # type: ignore[arg-type]
        try:
            await action()
        finally:
            self.loop.set_task_factory(previous)


@pytest.mark.parametrize("closer", ["channel", "kit"])
async def test_closing_many_open_calls_withdraws_them_a_slice_per_turn(closer: str) -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    human = human_tools()
    settled_at: Counter[int] = Counter()
    voice = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human)
    kit.register_channel(voice)
    session = await voice.start_session("room-1")
    for i in range(CALLS):
        provider.simulate_tool_call(session, "AskUserQuestion", {"question": f"q{i}"})
    for _ in range(CALLS):
        await observed.requests.get()
    loop = asyncio.get_running_loop()
    turns = Turns(loop)
    human.handler.add_observer(
        lambda event: settled_at.update([turns.turn]) if isinstance(event, RequestSettled) else None
    )
    tasks = TaskCount(loop)
    await tasks.during(kit.aclose if closer == "kit" else voice.close)
    turns.running = False
    assert sum(settled_at.values()) == CALLS
    # One slice of withdrawals per loop turn, never every call in one pass.
    assert max(settled_at.values()) <= CANCEL_SLICE
    assert len(settled_at) >= CALLS // CANCEL_SLICE
    # The reports go through a bounded pool, not a task per withdrawn call.
    assert tasks.created <= OBSERVER_TASKS + 4
    await kit.aclose()
    reports = [observed.reports.get_nowait() for _ in range(CALLS)]
    assert observed.reports.empty()
    assert {r.outcome for r in reports} == {"cancelled"}
    assert len({r.tool_call_id for r in reports}) == CALLS


async def test_a_withdrawn_call_is_reported_not_delivered() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human_tools())
    kit.register_channel(voice)
    session = await voice.start_session("room-1")
    provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await observed.requests.get()
    await voice.end_session(session, reason="the caller hung up")
    await kit.aclose()
    report = observed.reports.get_nowait()
    assert (report.outcome, report.delivered) == ("cancelled", False)
    assert report.delivery == "not delivered: the caller hung up"
    assert provider.tool_results == []
