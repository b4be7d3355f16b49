"""Issue 11, items 7-10: a shared handler lets closed channels go; durations and bounds are
checked; resolve/reject/release work from other threads; closing thousands of requests keeps
the loop serving."""

from __future__ import annotations

import asyncio
import gc
import itertools
import math
import threading
import time
import weakref
from typing import Any

import numpy as np
import pytest
from doors import LOOKUP, Host

from conference import ConferenceChannel, ConferenceRealtimeConfig, InMemoryConferenceBackend
from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ASK_USER_QUESTION,
    AITool,
    ChannelType,
    HookContext,
    HookTrigger,
    HumanInputHandler,
    HumanInputRejectedError,
    HumanInputToolHandler,
    LocalTransport,
    PendingInputEvent,
    RealtimeVoiceChannel,
    ScriptedCallerTransport,
    ToolCall,
    ToolGate,
    VoiceKit,
)

# -- item 7: a shared handler keeps no closed channel alive -------------------------------------


_ids = itertools.count()


def _human(shared: HumanInputHandler) -> HumanInputToolHandler:
    return HumanInputToolHandler(
        {"AskUserQuestion"}, handler=shared, tool_definitions=[ASK_USER_QUESTION]
    )


async def _voice_round(shared: HumanInputHandler) -> list[weakref.ref[Any]]:
    kit = VoiceKit()
    provider = MockRealtimeProvider()
    transport = LocalTransport()
    voice = RealtimeVoiceChannel(
        f"phone-{next(_ids)}",  # a closed channel's id stays closed on the shared handler
        provider=provider,
        transport=transport,
        tools=[LOOKUP],
        tool_handler=Host(),
        human_input_handler=_human(shared),
    )
    asked = asyncio.Event()

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
    async def notify(event: PendingInputEvent, ctx: HookContext) -> None:
        asked.set()

    kit.register_channel(voice)
    session = await voice.start_session("room")
    transport.push_caller_audio(session.session_id, np.zeros(16_000, dtype=np.int16))
    await provider.wait_for("send_audio")
    call_id = provider.simulate_tool_call(session, "AskUserQuestion", {"question": "Colour?"})
    await asked.wait()
    await kit.aclose()
    assert call_id not in [r.call_id for r in provider.tool_results]
    return [weakref.ref(o) for o in (kit, voice, provider, transport, session)]


async def _conference_round(shared: HumanInputHandler) -> list[weakref.ref[Any]]:
    kit = VoiceKit()
    provider = MockRealtimeProvider()
    backend = InMemoryConferenceBackend()
    backend.join("alice", "Alice")
    conf = ConferenceChannel(
        f"meeting-{next(_ids)}",
        backend=backend,
        realtime=ConferenceRealtimeConfig(provider, human_input_handler=_human(shared)),
    )
    kit.register_channel(conf)
    await conf.plug_realtime()
    await kit.aclose()
    return [weakref.ref(o) for o in (kit, conf, provider, backend)]


async def test_a_shared_kit_and_handler_keep_no_closed_channel_alive() -> None:
    kit = VoiceKit()
    shared = HumanInputHandler()
    refs = []
    for i in range(3):
        provider = MockRealtimeProvider()
        voice = RealtimeVoiceChannel(
            f"phone-{i}", provider=provider, human_input_handler=_human(shared)
        )
        kit.register_channel(voice)
        session = await voice.start_session("room")
        await voice.close()
        refs += [weakref.ref(voice), weakref.ref(provider), weakref.ref(session)]
        del voice, provider, session
    gc.collect()
    assert [r() for r in refs if r() is not None] == []
    assert kit.channels == {}
    await kit.aclose()


@pytest.mark.parametrize("make", [_voice_round, _conference_round])
async def test_a_closed_channel_is_collectable_though_its_handler_lives_on(make: Any) -> None:
    shared = HumanInputHandler()
    refs = [ref for _ in range(3) for ref in await make(shared)]
    for _ in range(3):  # let done-callbacks of the tasks that just finished run
        await asyncio.sleep(0)
    gc.collect()
    alive = [ref() for ref in refs if ref() is not None]
    assert alive == [], f"kept alive by the shared handler: {[type(o).__name__ for o in alive]}"
    assert shared._notifiers == {} and shared._notify_tasks == {}
    await shared.close()


# -- item 8: every duration and bound is checked -----------------------------------------------

BAD_SECONDS = [0, -1, -0.5, math.nan, math.inf, -math.inf, 1e12]  # 1e12: overflowed every call


@pytest.mark.parametrize("value", BAD_SECONDS)
@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("hook_timeout", lambda v: VoiceKit(hook_timeout=v)),
        ("timeout", lambda v: HumanInputToolHandler({"Ask"}, timeout=v)),
        (
            "tool_timeout_seconds",
            lambda v: ToolGate("c", ChannelType.AI, tool_timeout_seconds=v),
        ),
        (
            "tool_timeout_seconds",
            lambda v: RealtimeVoiceChannel(
                "c", provider=MockRealtimeProvider(), tool_timeout_seconds=v
            ),
        ),
        (
            "tool_timeout_seconds",
            lambda v: ConferenceRealtimeConfig(MockRealtimeProvider(), tool_timeout_seconds=v),
        ),
    ],
)
def test_bad_durations_are_refused_by_name(name: str, build: Any, value: float) -> None:
    with pytest.raises(ValueError, match=name):
        build(value)


@pytest.mark.parametrize("value", [*BAD_SECONDS[1:], math.nan])
def test_the_demo_caller_refuses_a_bad_pace(value: float) -> None:
    with pytest.raises(ValueError, match="speed"):
        ScriptedCallerTransport([], speed=value)


@pytest.mark.parametrize("value", BAD_SECONDS)
async def test_wait_refuses_a_bad_timeout_and_the_request_stays_answerable(value: float) -> None:
    handler = HumanInputHandler()
    pending = await handler.create("Ask", {})
    with pytest.raises(ValueError, match="timeout"):
        await handler.wait(pending.pending_id, timeout=value)
    assert handler.resolve(pending.pending_id, "ok")
    assert await handler.wait(pending.pending_id) == "ok"


@pytest.mark.parametrize("value", BAD_SECONDS)
async def test_create_refuses_a_bad_timeout_by_name(value: float) -> None:
    handler = HumanInputHandler()
    with pytest.raises(ValueError, match="timeout"):
        await handler.create("Ask", {}, timeout=value)
    with pytest.raises(ValueError, match="timeout"):
        await handler.create_detached("Ask", {}, timeout=value)
    assert handler.pending == {}


@pytest.mark.parametrize("value", [-1, math.nan, math.inf, 2.5])
def test_retention_must_be_a_count(value: Any) -> None:
    with pytest.raises(ValueError, match="retention"):
        HumanInputHandler(retention=value)


@pytest.mark.parametrize("value", [-1, math.nan])
def test_reprompts_must_be_a_count(value: Any) -> None:
    from voice_hitl import VoiceResponder

    with pytest.raises(ValueError, match="reprompts"):
        VoiceResponder(VoiceKit(), reprompts=value)


@pytest.mark.parametrize("value", BAD_SECONDS)
async def test_an_approval_deadline_must_be_a_real_time(value: float) -> None:
    backend = InMemoryConferenceBackend()
    backend.join("alice", "Alice")
    conf = ConferenceChannel("meeting", backend=backend)
    with pytest.raises(ValueError, match="timeout"):
        conf.open_approval("spend", approvers=["alice"], timeout=value)
    await conf.close()


async def test_a_zero_hook_budget_can_no_longer_switch_blocking_hooks_off() -> None:
    # hook_timeout=0 used to fail every blocking hook open: blocked tools ran.
    with pytest.raises(ValueError, match="hook_timeout"):
        VoiceKit(hook_timeout=0)


# -- item 9: resolve/reject/release from another thread ----------------------------------------


def _in_thread(fn: Any, *args: Any) -> Any:
    """Run ``fn(*args)`` in a real thread; return what it returned or raised."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn(*args))
        except BaseException as exc:
            out.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


@pytest.mark.parametrize("how", ["resolve", "reject", "release"])
async def test_settling_from_another_thread_wakes_the_waiter_at_once(how: str) -> None:
    loop = asyncio.get_running_loop()
    assert loop.get_debug()  # the mode in which it used to hang forever
    handler = HumanInputHandler()
    pending = await handler.create("Ask", {})
    waiting = asyncio.create_task(handler.wait(pending.pending_id, timeout=None))
    await asyncio.sleep(0)
    fn = {
        "resolve": lambda: handler.resolve(pending.pending_id, "blue"),
        "reject": lambda: handler.reject(pending.pending_id, "no"),
        "release": lambda: handler.release(pending.pending_id),
    }[how]
    started = time.monotonic()
    thread, out = _in_thread(fn)
    outcome = await asyncio.gather(waiting, return_exceptions=True)
    await asyncio.to_thread(thread.join)
    assert out == [True]  # the same boolean as on the loop
    assert time.monotonic() - started < 5  # at once, not when the loop next wakes
    expected = {"resolve": str, "reject": HumanInputRejectedError, "release": RuntimeError}[how]
    assert isinstance(outcome[0], expected)
    # The second settle, from a thread too, is refused like on the loop.
    thread, out = _in_thread(handler.resolve, pending.pending_id, "again")
    await asyncio.to_thread(thread.join)
    assert out == [False]


async def test_many_threads_race_and_exactly_one_settle_wins() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("Ask", {})
    waiting = asyncio.create_task(handler.wait(pending.pending_id, timeout=None))
    runs = [_in_thread(handler.resolve, pending.pending_id, f"a{i}") for i in range(8)]
    answer = await waiting
    results = []
    for thread, out in runs:
        await asyncio.to_thread(thread.join)
        results.extend(out)
    assert results.count(True) == 1 and results.count(False) == 7
    assert answer == f"a{[r for r in results].index(True)}" or answer.startswith("a")


def test_settling_while_the_loop_is_idle_takes_effect_on_its_next_run() -> None:
    loop = asyncio.new_event_loop()
    try:
        handler = HumanInputHandler()
        pending = loop.run_until_complete(handler.create("Ask", {}))
        # Not running: nothing to hand over to; settled at once, from this thread or another.
        thread, out = _in_thread(handler.resolve, pending.pending_id, "blue")
        thread.join()
        assert out == [True]
        assert loop.run_until_complete(handler.wait(pending.pending_id)) == "blue"
    finally:
        loop.close()


async def test_a_non_text_answer_is_refused_where_it_is_given() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("Ask", {})
    with pytest.raises(TypeError, match="must be str"):
        handler.resolve(pending.pending_id, {"answer": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        handler.reject(pending.pending_id, None)  # type: ignore[arg-type]
    assert handler.resolve(pending.pending_id, '{"answer": 1}')


# -- item 10: closing 10,000 requests keeps the loop serving ------------------------------------


async def test_closing_thousands_of_requests_settles_each_once_and_serves_others() -> None:
    # 2,000 here (debug mode makes every wake-up slow); bench/bench_close_stall.py measures
    # the loop stall at 10,000.
    n = 2_000
    handler = HumanInputHandler()
    tool = AITool(name="Ask", parameters={"type": "object", "properties": {}})
    human = HumanInputToolHandler({"Ask"}, handler=handler, tool_definitions=[tool])
    gate = ToolGate("c", ChannelType.REALTIME_VOICE, human_input=human)
    calls = [asyncio.create_task(gate.call(ToolCall("Ask", {}, f"c{i}"))) for i in range(n)]
    while len(handler.pending) < n:  # noqa: ASYNC110 - every call reaches its wait
        await asyncio.sleep(0)
    ids = list(handler.pending)
    # Another conversation on the same loop keeps being served while the close winds down.
    other = HumanInputHandler()
    served_while_closing = 0

    async def other_calls() -> None:
        nonlocal served_while_closing
        while not all(call.done() for call in calls):
            pending = await other.create("Ask", {})
            asyncio.get_running_loop().call_soon(other.resolve, pending.pending_id, "ok")
            assert await other.wait(pending.pending_id) == "ok"
            served_while_closing += 1

    serving = asyncio.create_task(other_calls())
    await handler.close()
    assert not any(handler.resolve(pid, "late") for pid in ids)  # all settled at once
    results = await asyncio.gather(*calls)
    await serving
    assert served_while_closing >= 2  # served between the slices, not after all of them
    assert [r.outcome for r in results] == ["failed"] * n  # each settled exactly once
    assert {r.text for r in results} == {'{"error": "Tool \'Ask\' failed (RuntimeError)"}'}
    assert handler.pending == {}
