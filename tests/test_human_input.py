"""HumanInputHandler: create / wait / resolve / reject / release / close, retention."""

from __future__ import annotations

import asyncio

import pytest

from voice_hitl import (
    ChannelType,
    HumanInputHandler,
    HumanInputRejectedError,
    PendingInputEvent,
    PendingInputStatus,
)


async def test_answer_before_wait_is_returned_and_request_retired() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {"question": "color?"}, room_id="r1")
    assert pending.status is PendingInputStatus.PENDING
    assert pending.pending_id in handler.pending
    assert handler.resolve(pending.pending_id, "blue") is True
    assert pending.status is PendingInputStatus.RESOLVED
    assert pending.result == "blue"
    assert await handler.wait(pending.pending_id) == "blue"
    assert pending.pending_id not in handler.pending
    assert handler.get(pending.pending_id) is None
    assert repr(pending).startswith(f"PendingInput(pending_id={pending.pending_id!r}, ")


async def test_answer_while_blocked() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {})
    waiter = asyncio.create_task(handler.wait(pending.pending_id))
    await asyncio.sleep(0)  # let the waiter block on the request (a checkpoint, not a delay)
    assert not waiter.done()
    assert handler.resolve(pending.pending_id, "yes")
    assert await waiter == "yes"


async def test_first_settle_wins() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("ConfirmAction", {})
    assert handler.reject(pending.pending_id, "no thanks")
    assert handler.resolve(pending.pending_id, "late") is False
    assert handler.reject(pending.pending_id, "again") is False
    with pytest.raises(HumanInputRejectedError) as info:
        await handler.wait(pending.pending_id)
    assert info.value.reason == "no thanks"
    assert isinstance(info.value, RuntimeError)
    assert pending.status is PendingInputStatus.REJECTED


async def test_unknown_id_is_value_error() -> None:
    handler = HumanInputHandler()
    with pytest.raises(ValueError, match="unknown pending id 'nope'"):
        await handler.wait("nope")
    assert handler.resolve("nope", "x") is False
    assert handler.reject("nope") is False
    assert handler.release("nope") is False


@pytest.mark.looptime
async def test_timeout_sets_status_and_replays() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {})
    with pytest.raises(TimeoutError, match=r"timed out after 0\.1s"):
        await handler.wait(pending.pending_id, timeout=0.1)
    assert pending.status is PendingInputStatus.TIMED_OUT
    assert handler.resolve(pending.pending_id, "late") is False
    with pytest.raises(TimeoutError, match=r"timed out after 0\.1s"):
        await handler.wait(pending.pending_id)


async def test_replay_of_answer_and_rejection() -> None:
    handler = HumanInputHandler()
    answered = await handler.create("AskUserQuestion", {})
    rejected = await handler.create("AskUserQuestion", {})
    handler.resolve(answered.pending_id, "42")
    handler.reject(rejected.pending_id, "busy")
    for _ in range(2):
        assert await handler.wait(answered.pending_id) == "42"
        with pytest.raises(HumanInputRejectedError, match="busy"):
            await handler.wait(rejected.pending_id)


async def test_retention_fills_on_settle_not_on_read() -> None:
    handler = HumanInputHandler(retention=2)
    first = await handler.create("AskUserQuestion", {})
    handler.resolve(first.pending_id, "one")
    # The host drops its request right after resolving (its own bookkeeping):
    assert handler.release(first.pending_id)
    assert await handler.wait(first.pending_id) == "one"


async def test_eviction_at_the_retention_bound() -> None:
    handler = HumanInputHandler(retention=3)
    ids = []
    for i in range(4):
        pending = await handler.create("AskUserQuestion", {})
        handler.resolve(pending.pending_id, str(i))
        assert await handler.wait(pending.pending_id) == str(i)
        ids.append(pending.pending_id)
    with pytest.raises(ValueError, match="evicted"):
        await handler.wait(ids[0])
    assert [await handler.wait(i) for i in ids[1:]] == ["1", "2", "3"]


async def test_retention_zero_disables_replay() -> None:
    handler = HumanInputHandler(retention=0)
    pending = await handler.create("AskUserQuestion", {})
    handler.resolve(pending.pending_id, "x")
    assert await handler.wait(pending.pending_id) == "x"
    with pytest.raises(ValueError):
        await handler.wait(pending.pending_id)


def test_negative_retention_is_rejected() -> None:
    with pytest.raises(ValueError, match="retention"):
        HumanInputHandler(retention=-1)


async def test_detached_request_is_released_by_its_creator() -> None:
    handler = HumanInputHandler()
    pending = await handler.create_detached("AskUserQuestion", {"q": 1})
    assert pending.detached is True
    assert handler.resolve(pending.pending_id, "answer")
    # Still active until the creator releases it; nothing retires it on its own.
    assert handler.get(pending.pending_id) is pending
    assert handler.release(pending.pending_id) is True
    assert handler.release(pending.pending_id) is False
    assert await handler.wait(pending.pending_id) == "answer"


async def test_release_unanswered_unblocks_waiter_with_runtime_error() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {})
    waiter = asyncio.create_task(handler.wait(pending.pending_id))
    await asyncio.sleep(0)
    assert handler.release(pending.pending_id)
    with pytest.raises(RuntimeError) as info:
        await waiter
    assert type(info.value) is RuntimeError
    assert pending.status is PendingInputStatus.REJECTED


async def test_cancelling_the_waiter_withdraws_the_request() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {})
    waiter = asyncio.create_task(handler.wait(pending.pending_id))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert handler.resolve(pending.pending_id, "late") is False
    assert pending.pending_id not in handler.pending


async def test_second_waiter_is_refused_clearly() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {})
    waiter = asyncio.create_task(handler.wait(pending.pending_id))
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="already being waited on"):
        await handler.wait(pending.pending_id)
    handler.resolve(pending.pending_id, "ok")
    assert await waiter == "ok"


async def test_close_rejects_everything_and_refuses_creates() -> None:
    handler = HumanInputHandler()
    a = await handler.create("AskUserQuestion", {}, channel_id="a")
    b = await handler.create("AskUserQuestion", {}, channel_id="b")
    waiters = [asyncio.create_task(handler.wait(p.pending_id)) for p in (a, b)]
    await asyncio.sleep(0)
    await handler.close()
    for waiter in waiters:
        with pytest.raises(RuntimeError, match="closed"):
            await waiter
    assert handler.closed
    with pytest.raises(RuntimeError, match="closed"):
        await handler.create("AskUserQuestion", {})
    await handler.close()  # idempotent


async def test_per_channel_close_leaves_other_channel_working() -> None:
    handler = HumanInputHandler()
    a = await handler.create("AskUserQuestion", {}, channel_id="a")
    b = await handler.create("AskUserQuestion", {}, channel_id="b")
    await handler.close(channel_id="a")
    with pytest.raises(RuntimeError):
        await handler.wait(a.pending_id)
    with pytest.raises(RuntimeError, match="channel 'a'"):
        await handler.create("AskUserQuestion", {}, channel_id="a")
    assert handler.resolve(b.pending_id, "fine")
    assert await handler.wait(b.pending_id) == "fine"
    c = await handler.create("AskUserQuestion", {}, channel_id="b")
    assert handler.is_open_for("b") and not handler.is_open_for("a")
    handler.resolve(c.pending_id, "still")
    assert await handler.wait(c.pending_id) == "still"
    handler.reopen("a")
    d = await handler.create("AskUserQuestion", {}, channel_id="a")
    handler.resolve(d.pending_id, "again")
    assert await handler.wait(d.pending_id) == "again"


async def test_answer_while_notification_still_running() -> None:
    handler = HumanInputHandler()
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_notify(event: PendingInputEvent) -> str | None:
        started.set()
        await release.wait()
        return None

    handler.set_notifier("voice", slow_notify)
    pending = await handler.create("AskUserQuestion", {}, channel_id="voice")
    await started.wait()
    handler.resolve(pending.pending_id, "quick")
    assert await handler.wait(pending.pending_id) == "quick"
    release.set()
    await handler.close()


async def test_notification_denial_rejects_whenever_it_lands() -> None:
    handler = HumanInputHandler()
    go = asyncio.Event()

    async def deny(event: PendingInputEvent) -> str | None:
        await go.wait()
        return "not allowed"

    handler.set_notifier("c", deny)
    pending = await handler.create("AskUserQuestion", {}, channel_id="c")
    waiter = asyncio.create_task(handler.wait(pending.pending_id))
    await asyncio.sleep(0)
    go.set()
    with pytest.raises(HumanInputRejectedError) as info:
        await waiter
    assert info.value.reason == "Denied by ON_USER_INPUT_REQUIRED hook: not allowed"
    await handler.close()


async def test_deny_after_answer_changes_nothing() -> None:
    handler = HumanInputHandler()
    go = asyncio.Event()
    denied = asyncio.Event()

    async def deny_late(event: PendingInputEvent) -> str | None:
        await go.wait()
        denied.set()
        return ""

    handler.set_notifier("c", deny_late)
    pending = await handler.create("AskUserQuestion", {}, channel_id="c")
    handler.resolve(pending.pending_id, "answered first")
    go.set()
    await denied.wait()
    await handler.close(channel_id="c")
    assert pending.status is PendingInputStatus.RESOLVED
    assert await handler.wait(pending.pending_id) == "answered first"


async def test_raising_notification_is_logged_and_request_stays_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = HumanInputHandler()
    failed = asyncio.Event()

    async def broken(event: PendingInputEvent) -> str | None:
        failed.set()
        raise ConnectionError("websocket down")

    handler.set_notifier("c", broken)
    pending = await handler.create("AskUserQuestion", {}, channel_id="c")
    await failed.wait()
    await asyncio.sleep(0)  # the notify task finishes logging on its next step
    await handler.close(channel_id="other")  # unrelated scope
    assert "notification failed" in caplog.text
    assert handler.resolve(pending.pending_id, "fine")
    assert await handler.wait(pending.pending_id) == "fine"
    await handler.close()


async def test_shared_handler_routes_notifications_per_channel() -> None:
    handler = HumanInputHandler()
    seen: dict[str, list[PendingInputEvent]] = {"voice": [], "conf": []}
    both = asyncio.Event()

    def recorder(channel: str):  # type: ignore[no-untyped-def]
        async def record(event: PendingInputEvent) -> str | None:
            seen[channel].append(event)
            if seen["voice"] and seen["conf"]:
                both.set()
            return None

        return record

    handler.set_notifier("voice", recorder("voice"))
    handler.set_notifier("conf", recorder("conf"))
    v = await handler.create(
        "AskUserQuestion",
        {"q": 1},
        channel_id="voice",
        channel_type=ChannelType.REALTIME_VOICE,
        actor_id="caller",
    )
    c = await handler.create(
        "ConfirmAction", {"a": 2}, channel_id="conf", channel_type=ChannelType.CONFERENCE
    )
    await both.wait()
    assert [e.pending_id for e in seen["voice"]] == [v.pending_id]
    assert [e.pending_id for e in seen["conf"]] == [c.pending_id]
    assert seen["voice"][0].channel_type is ChannelType.REALTIME_VOICE
    assert seen["voice"][0].actor_id == "caller"
    assert seen["conf"][0].actor_id is None
    await handler.close()


async def test_close_cancels_hanging_notifications() -> None:
    handler = HumanInputHandler()
    started = asyncio.Event()

    async def hang(event: PendingInputEvent) -> str | None:
        started.set()
        await asyncio.Event().wait()
        return None

    handler.set_notifier("c", hang)
    await handler.create("AskUserQuestion", {}, channel_id="c")
    await started.wait()
    await handler.close(channel_id="c")  # the leak fixture fails the test if a task survives


async def test_concurrent_waits_on_1000_requests() -> None:
    handler = HumanInputHandler(retention=2000)
    pendings = [await handler.create("AskUserQuestion", {"i": i}) for i in range(1000)]
    waiters = [asyncio.create_task(handler.wait(p.pending_id)) for p in pendings]
    await asyncio.sleep(0)
    for i, p in enumerate(reversed(pendings)):
        assert handler.resolve(p.pending_id, f"a{999 - i}")
    results = await asyncio.gather(*waiters)
    assert results == [f"a{i}" for i in range(1000)]
    assert handler.pending == {}


async def test_event_view_is_frozen_copy() -> None:
    handler = HumanInputHandler()
    pending = await handler.create("AskUserQuestion", {"q": "x"}, tool_call_id="call_1")
    event = pending.to_event()
    assert event.tool_call_id == "call_1"
    with pytest.raises(TypeError):
        event.arguments["q"] = "y"  # type: ignore[index]
    handler.release(pending.pending_id)


async def test_notification_that_closes_its_own_scope_does_not_deadlock() -> None:
    handler = HumanInputHandler()
    closed = asyncio.Event()

    async def close_scope(event: PendingInputEvent) -> str | None:
        await handler.close(channel_id="c")
        closed.set()
        return None

    handler.set_notifier("c", close_scope)
    pending = await handler.create("AskUserQuestion", {}, channel_id="c")
    await closed.wait()
    with pytest.raises(RuntimeError, match="closed"):
        await handler.wait(pending.pending_id)
    await handler.close()
