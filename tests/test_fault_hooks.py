"""Issue 11, item 2: whatever a hook (or a handler) does, every call ends in exactly one result
the model reads and exactly one ``ON_TOOL_CALL`` report, and no task exception goes unseen.

The property drives real tool calls through a voice channel's provider door (the mock
provider records what the model is sent) with random hooks on ``BEFORE_TOOL_USE``,
``ON_USER_INPUT_REQUIRED`` and ``ON_TOOL_CALL``: return values of any type, raising (including
``CancelledError`` of their own), plain functions, and hooks that hang past their budget (in
virtual time, with looptime).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import looptime
import pytest
from doors import LOOKUP, Host, human_tools
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    HookContext,
    HookResult,
    HookTrigger,
    PendingInputEvent,
    RealtimeVoiceChannel,
    ToolCallReport,
    VoiceKit,
)

HOOK_BUDGET = 5.0  # seconds of virtual time


def _returning(value: Callable[[], object]) -> Callable[[Any, HookContext], Any]:
    async def hook(event: Any, ctx: HookContext) -> Any:
        return value()

    return hook


def _raising(exc: Callable[[], BaseException]) -> Callable[[Any, HookContext], Any]:
    async def hook(event: Any, ctx: HookContext) -> Any:
        raise exc()

    return hook


async def _hang(event: Any, ctx: HookContext) -> Any:
    await asyncio.Event().wait()


def _plain(event: Any, ctx: HookContext) -> Any:  # not async at all
    return HookResult.allow()


def _plain_raising(event: Any, ctx: HookContext) -> Any:
    raise ZeroDivisionError("plain hook")


# (name, factory, what a BEFORE_TOOL_USE hook with it decides when it does not fail)
BEHAVIOURS: dict[str, Callable[[Any, HookContext], Any]] = {
    "none": _returning(lambda: None),
    "allow": _returning(HookResult.allow),
    "block": _returning(lambda: HookResult.block("policy says no")),
    "modify-valid": _returning(lambda: HookResult.modify(arguments={"key": "rewritten"})),
    "modify-invalid": _returning(lambda: HookResult.modify(arguments={"key": 5})),
    "modify-not-a-mapping": _returning(lambda: HookResult("modify", "", {"arguments": [1]})),
    "str": _returning(lambda: "block"),
    "int": _returning(lambda: 0),
    "dict": _returning(lambda: {"action": "block"}),
    "bool": _returning(lambda: False),
    "object": _returning(object),
    "bad-action": _returning(lambda: HookResult("deny")),  # type: ignore[arg-type]
    "raise-value": _raising(lambda: ValueError("bad")),
    "raise-key": _raising(lambda: KeyError("secret")),
    "raise-cancelled": _raising(asyncio.CancelledError),
    "raise-timeout": _raising(TimeoutError),
    "hang": _hang,
    "plain": _plain,
    "plain-raising": _plain_raising,
}

HOOKS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                HookTrigger.BEFORE_TOOL_USE,
                HookTrigger.ON_USER_INPUT_REQUIRED,
                HookTrigger.ON_TOOL_CALL,
            ]
        ),
        st.sampled_from(sorted(BEHAVIOURS)),
        st.booleans(),  # fail_closed
    ),
    max_size=4,
)


async def _host_text() -> Any:
    return "host:lookup"


async def _host_dict() -> Any:
    return {"not": "text"}


async def _host_none() -> Any:
    return None


async def _host_raise() -> Any:
    raise ValueError("backend down")


async def _host_cancelled() -> Any:
    raise asyncio.CancelledError  # of its own, not a cancellation of the call


async def _host_hang() -> Any:
    await asyncio.Event().wait()  # past the channel's tool bound (virtual time)


HOST_BEHAVIOURS: dict[str, Callable[[], Any]] = {
    "text": _host_text,
    "dict": _host_dict,
    "none": _host_none,
    "raise-value": _host_raise,
    "raise-cancelled": _host_cancelled,
    "hang": _host_hang,
}


def _host(behaviour: str) -> Callable[[str, dict[str, Any]], Any]:
    async def handler(name: str, arguments: dict[str, Any]) -> Any:
        return await HOST_BEHAVIOURS[behaviour]()

    return handler


CALLS = st.lists(
    st.sampled_from(["lookup", "AskUserQuestion", "nosuchtool"]), min_size=1, max_size=3
)


async def _scenario(
    hooks: list[tuple[HookTrigger, str, bool]], calls: list[str], host: str = "text"
) -> None:
    loop = asyncio.get_running_loop()
    unseen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unseen.append(context))
    kit = VoiceKit(hook_timeout=HOOK_BUDGET)
    for index, (trigger, behaviour, fail_closed) in enumerate(hooks):
        kit.hook(trigger, priority=index, fail_closed=fail_closed)(BEHAVIOURS[behaviour])
    reports: list[ToolCallReport] = []

    @kit.hook(HookTrigger.ON_TOOL_CALL, priority=-1)
    async def record(report: ToolCallReport, ctx: HookContext) -> None:
        reports.append(report)

    human = human_tools(timeout=60.0)

    @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED, priority=1000)
    async def person(event: PendingInputEvent, ctx: HookContext) -> None:
        human.handler.resolve(event.pending_id, json.dumps({"answer": "blue"}))

    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel(
        "voice",
        provider=provider,
        tools=[LOOKUP],
        tool_handler=_host(host),
        human_input_handler=human,
    )
    kit.register_channel(voice)
    session = await voice.start_session("room")
    ids = []
    for name in calls:
        arguments = {"question": "Which colour?"} if name == "AskUserQuestion" else {"key": "k"}
        ids.append(provider.simulate_tool_call(session, name, arguments))
    async with asyncio.timeout(3600):  # virtual time: fails fast, never hangs the suite
        for call_id in ids:
            await provider.wait_for_tool_result(call_id)
    await kit.hooks.drain()
    await kit.aclose()

    for call_id in ids:
        sent = [r for r in provider.tool_results if r.call_id == call_id]
        assert len(sent) == 1, f"{call_id}: the model was sent {len(sent)} results"
        # Model-readable: the tool's text, or {"error": "<what happened>"}.
        if sent[0].is_error:
            assert json.loads(sent[0].output)["error"]
        else:
            assert sent[0].output in ("host:lookup", '{"answer": "blue"}')
        mine = [r for r in reports if r.tool_call_id == call_id]
        assert len(mine) == 1, f"{call_id}: {len(mine)} ON_TOOL_CALL reports"
        assert mine[0].result == sent[0].output
        assert (mine[0].outcome == "ok") is (not sent[0].is_error)
    assert unseen == [], f"unretrieved task exceptions: {unseen}"


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(HOOKS, CALLS, st.sampled_from(sorted(HOST_BEHAVIOURS)))
def test_any_hook_ends_every_call_in_one_result_and_one_report(
    hooks: list[tuple[HookTrigger, str, bool]], calls: list[str], host: str
) -> None:
    logging.disable(logging.CRITICAL)  # hundreds of expected hook-failure logs
    try:
        with asyncio.Runner(debug=True, loop_factory=lambda: looptime.new_event_loop(start=0)) as r:
            r.run(_scenario(hooks, calls, host))
    finally:
        logging.disable(logging.NOTSET)


# -- the reported case, and each fault point, spelled out ---------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "fail_closed", "outcome", "reads"),
    [
        ("str", False, "ok", "host:lookup"),
        ("str", True, "refused", "returned str, not a HookResult or None"),
        ("dict", True, "refused", "returned dict, not a HookResult or None"),
        ("raise-cancelled", False, "ok", "host:lookup"),
        ("raise-cancelled", True, "refused", "raised CancelledError"),
        ("bad-action", True, "refused", "HookResult action must be one of"),
        ("plain", False, "ok", "host:lookup"),
    ],
)
async def test_wrong_hook_results_follow_the_failure_policy(
    behaviour: str, fail_closed: bool, outcome: str, reads: str, caplog: pytest.LogCaptureFixture
) -> None:
    kit = VoiceKit()
    kit.hook(HookTrigger.BEFORE_TOOL_USE, fail_closed=fail_closed)(BEHAVIOURS[behaviour])
    reports: list[ToolCallReport] = []

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def record(report: ToolCallReport, ctx: HookContext) -> None:
        reports.append(report)

    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel(
        "voice",
        provider=provider,
        tools=[LOOKUP],
        tool_handler=Host(),
        human_input_handler=human_tools(),
    )
    kit.register_channel(voice)
    session = await voice.start_session("room")
    with caplog.at_level(logging.WARNING, logger="voice_hitl.hooks"):
        call_id = provider.simulate_tool_call(session, "lookup", {"key": "k"})
        sent = await provider.wait_for_tool_result(call_id)
    await kit.aclose()
    assert [r.outcome for r in reports] == [outcome]
    assert reports[0].result == sent.output
    text = sent.output if outcome == "ok" else json.loads(sent.output)["error"]
    assert reads in text
    if behaviour != "plain":
        assert any("failing" in record.message for record in caplog.records)


async def test_a_handler_raising_cancelled_error_of_its_own_is_a_failure_not_a_hang() -> None:
    async def handler(name: str, arguments: dict[str, Any]) -> str:
        raise asyncio.CancelledError  # e.g. awaiting a future someone else cancelled

    kit = VoiceKit()
    reports: list[ToolCallReport] = []

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def record(report: ToolCallReport, ctx: HookContext) -> None:
        reports.append(report)

    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel("voice", provider=provider, tools=[LOOKUP], tool_handler=handler)
    kit.register_channel(voice)
    session = await voice.start_session("room")
    call_id = provider.simulate_tool_call(session, "lookup", {})
    sent = await provider.wait_for_tool_result(call_id)
    await kit.aclose()
    assert sent.is_error
    assert json.loads(sent.output) == {"error": "Tool 'lookup' failed (CancelledError)"}
    assert [(r.outcome, r.result) for r in reports] == [("failed", sent.output)]


async def test_a_failing_observer_does_not_stop_the_result() -> None:
    kit = VoiceKit()

    @kit.hook(HookTrigger.ON_TOOL_CALL)
    async def broken(report: ToolCallReport, ctx: HookContext) -> None:
        raise asyncio.CancelledError

    provider = MockRealtimeProvider()
    voice = RealtimeVoiceChannel("voice", provider=provider, tools=[LOOKUP], tool_handler=Host())
    kit.register_channel(voice)
    session = await voice.start_session("room")
    call_id = provider.simulate_tool_call(session, "lookup", {})
    sent = await provider.wait_for_tool_result(call_id)
    await kit.aclose()
    assert (sent.output, sent.is_error) == ("host:lookup", False)
