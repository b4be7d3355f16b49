"""Property: any interleaving of resolve/reject/release/timeout settles each request once."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from voice_hitl import HumanInputHandler, HumanInputRejectedError, PendingInputStatus

ACTIONS = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=4),
        st.sampled_from(["resolve", "reject", "release", "tick"]),
    ),
    max_size=30,
)


async def _run(actions: list[tuple[int, str]]) -> None:
    handler = HumanInputHandler(retention=64)
    pendings = [await handler.create("AskUserQuestion", {"i": i}) for i in range(5)]
    # Each request is waited on with a short timeout; "tick" lets time and the loop move.
    waiters = [
        asyncio.create_task(handler.wait(p.pending_id, timeout=0.002 * (i + 1)))
        for i, p in enumerate(pendings)
    ]
    first_settle: dict[int, str] = {}
    for index, action in actions:
        pending = pendings[index]
        if action == "tick":
            await asyncio.sleep(0.001)
            continue
        was_pending = pending.status is PendingInputStatus.PENDING
        if action == "resolve":
            returned = handler.resolve(pending.pending_id, f"answer-{index}")
        elif action == "reject":
            returned = handler.reject(pending.pending_id, f"no-{index}")
        else:
            returned = handler.release(pending.pending_id)
        settled_now = was_pending and pending.status is not PendingInputStatus.PENDING
        if action != "release":
            # resolve/reject succeed exactly when they are the first settle
            assert returned == settled_now
        if settled_now:
            assert index not in first_settle, "a request settled twice"
            first_settle[index] = action
        if not was_pending:
            assert not settled_now
    outcomes = await asyncio.gather(*waiters, return_exceptions=True)
    for index, (pending, outcome) in enumerate(zip(pendings, outcomes, strict=True)):
        assert pending.status is not PendingInputStatus.PENDING
        expected = first_settle.get(index)
        if expected == "resolve":
            assert outcome == f"answer-{index}"
            assert pending.status is PendingInputStatus.RESOLVED
        elif expected == "reject":
            assert isinstance(outcome, HumanInputRejectedError)
            assert outcome.reason == f"no-{index}"
        elif expected == "release":
            assert type(outcome) is RuntimeError
        else:
            assert isinstance(outcome, TimeoutError)
            assert pending.status is PendingInputStatus.TIMED_OUT
        # Whatever happened, the outcome replays identically and nothing settles it again.
        assert handler.resolve(pending.pending_id, "again") is False
        try:
            replay: object = await handler.wait(pending.pending_id)
        except Exception as exc:
            replay = exc
        assert type(replay) is type(outcome)
        assert str(replay) == str(outcome)
    assert handler.pending == {}


@settings(max_examples=150, deadline=None)
@given(ACTIONS)
def test_each_request_settles_exactly_once(actions: list[tuple[int, str]]) -> None:
    asyncio.run(_run(actions))
