"""The request board protocol: one suite, run against every backend (the real Redis too)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from board_rig import CONFORMANCE, EventLog, eventually, make_board

from voice_hitl.board import (
    BoardClaimed,
    BoardEscalated,
    BoardOpened,
    BoardRequest,
    BoardSettled,
    BoardStatus,
    RequestBoard,
    SettleResult,
)


@pytest.fixture(params=CONFORMANCE)
async def board(request: pytest.FixtureRequest) -> AsyncIterator[RequestBoard]:
    made = await make_board(request.param, request)
    try:
        yield made
    finally:
        await made.aclose()


def a_request(rid: str = "hi_1", worker: str = "w1", **more: object) -> BoardRequest:
    fields: dict[str, object] = {
        "id": rid,
        "tool": "AskUserQuestion",
        "arguments": {"question": "Which colour?", "choices": ["red", "blue"]},
        "worker": worker,
        "created_at": time.time(),
        "spec": {"kind": "choices", "choices": [{"id": "red", "label": "red"}]},
        "room": "room-1",
        "channel": "phone",
        "channel_type": "realtime_voice",
        "actor": "caller",
        "addressed": ("alice",),
        "approvers": ("alice", "bob"),
        "quorum": 2,
        "deadline": time.time() + 60,
        "transcript": ({"role": "user", "text": "paint it", "speaker_id": "caller"},),
    }
    fields.update(more)
    return BoardRequest(**fields)  # type: ignore[arg-type]


async def test_protocol_is_implemented(board: RequestBoard) -> None:
    assert isinstance(board, RequestBoard)


async def test_a_published_request_keeps_every_field(board: RequestBoard) -> None:
    await board.heartbeat("w1", 30)
    sent = a_request()
    assert await board.publish(sent) == sent
    assert await board.get("hi_1") == sent
    assert await board.open_requests() == [sent]
    again = await board.publish(a_request(room="changed"))
    assert again == sent  # idempotent: the first record stands


async def test_first_settle_wins_and_losers_see_who_and_when(board: RequestBoard) -> None:
    await board.heartbeat("w1", 30)
    await board.publish(a_request())
    results = await asyncio.gather(
        *(
            board.settle("hi_1", BoardStatus.ANSWERED, f'{{"answer": {n}}}', by=f"op{n}", via="api")
            for n in range(20)
        )
    )
    winners = [r for r in results if r.won]
    assert len(winners) == 1
    winner = winners[0].request
    assert winner is not None and winner.status is BoardStatus.ANSWERED
    assert winner.settled_at is not None and abs(winner.settled_at - time.time()) < 30
    for loser in results:
        if not loser.won:
            assert loser.request == winner  # who settled first, when, and how
    assert await board.get("hi_1") == winner
    assert await board.open_requests() == []
    late = await board.settle("hi_1", BoardStatus.REJECTED, "no", worker="w1")
    assert late == SettleResult(False, winner)


async def test_unknown_ids_and_bad_status(board: RequestBoard) -> None:
    assert await board.get("nope") is None
    assert await board.settle("nope", BoardStatus.ANSWERED, "x") == SettleResult(False, None)
    with pytest.raises(ValueError, match="open"):
        await board.settle("nope", BoardStatus.OPEN)


async def test_a_lapsed_heartbeat_abandons_and_refuses_answers(board: RequestBoard) -> None:
    assert await board.heartbeat("w1", 30) is True
    assert await board.heartbeat("w1", 30) is False
    await board.heartbeat("gone", 0.05)
    await board.publish(a_request("alive", "w1"))
    await board.publish(a_request("ghost1", "gone"))
    await board.publish(a_request("ghost2", "gone"))
    reaped: list[BoardRequest] = []

    async def reap_both() -> bool:
        reaped.extend(await board.reap())
        return len(reaped) == 2

    await eventually(reap_both)
    assert {r.id for r in reaped} == {"ghost1", "ghost2"}
    assert all(r.status is BoardStatus.ABANDONED for r in reaped)
    assert "'gone' stopped sending heartbeats" in reaped[0].text
    answer = await board.settle("ghost1", BoardStatus.ANSWERED, "x", by="op")
    assert not answer.won and answer.request is not None
    assert answer.request.status is BoardStatus.ABANDONED
    assert [r.id for r in await board.open_requests()] == ["alive"]


async def lapse_after(board: RequestBoard, worker: str) -> None:
    """Return once a probe heartbeat, beaten after ``worker``'s with the same time to live,
    has lapsed on the board's clock (so ``worker``'s has too)."""
    probe = f"probe-{worker}"
    await board.heartbeat(probe, 0.05)
    await eventually(lambda: board.heartbeat(probe, 0.05), step=0.1)


async def test_an_answer_abandons_a_request_whose_owner_is_gone(board: RequestBoard) -> None:
    await board.heartbeat("gone", 0.05)
    await board.publish(a_request("ghost", "gone"))
    await lapse_after(board, "gone")
    result = await board.settle("ghost", BoardStatus.ANSWERED, "x", by="op")
    assert not result.won and result.request is not None
    assert result.request.status is BoardStatus.ABANDONED
    # The owner itself may still settle what it owns while its heartbeat lapsed ...
    await board.publish(a_request("own", "gone"))
    own = await board.settle("own", BoardStatus.WITHDRAWN, "ended", worker="gone")
    assert own.won
    # ... and re-opens an abandoned request only when it asks to (it is back).
    assert (await board.publish(a_request("ghost", "gone"))).status is BoardStatus.ABANDONED
    await board.heartbeat("gone", 30)
    revived = await board.publish(a_request("ghost", "gone"), revive=True)
    assert revived.status is BoardStatus.OPEN
    assert (await board.settle("ghost", BoardStatus.ANSWERED, "x", by="op")).won


async def test_subscriptions_see_events_of_all_or_of_one_worker(board: RequestBoard) -> None:
    await board.heartbeat("w1", 30)
    await board.heartbeat("w2", 30)
    everything, mine = EventLog(), EventLog()
    async with board.subscribe() as all_events, board.subscribe("w1") as w1_events:
        tasks = [
            asyncio.create_task(everything.run(all_events)),
            asyncio.create_task(mine.run(w1_events)),
        ]
        try:
            await board.publish(a_request("a", "w1"))
            await board.publish(a_request("b", "w2"))
            await board.settle("b", BoardStatus.REJECTED, "not now", by="op", via="cli")
            await board.settle("a", BoardStatus.ANSWERED, '{"answer": 1}', by="op", via="api")
            last = await everything.wait_for(
                lambda e: isinstance(e, BoardSettled) and e.request.id == "a"
            )
            await mine.wait_for(lambda e: isinstance(e, BoardSettled))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    assert [(e.type, e.request.id) for e in everything.events] == [
        ("opened", "a"),
        ("opened", "b"),
        ("settled", "b"),
        ("settled", "a"),
    ]
    assert [(e.type, e.request.id) for e in mine.events] == [("opened", "a"), ("settled", "a")]
    opened = everything.events[0]
    assert isinstance(opened, BoardOpened)
    assert opened.request == a_request(
        "a", "w1", created_at=opened.request.created_at, deadline=opened.request.deadline
    )
    assert isinstance(last, BoardSettled)
    assert (last.request.settled_by, last.request.settled_via) == ("op", "api")
    assert last.request.text == '{"answer": 1}'


async def test_an_escalation_reaches_the_all_requests_subscription_only(
    board: RequestBoard,
) -> None:
    await board.heartbeat("w1", 30)
    everything, mine = EventLog(), EventLog()
    async with board.subscribe() as all_events, board.subscribe("w1") as w1_events:
        tasks = [
            asyncio.create_task(everything.run(all_events)),
            asyncio.create_task(mine.run(w1_events)),
        ]
        try:
            await board.publish(a_request("a", "w1"))
            note = {"to": ["bob"], "remaining": 30.0}
            assert await board.escalate("a", note) is True
            assert await board.escalate("nope", note) is False
            await board.settle("a", BoardStatus.ANSWERED, '"red"', by="bob", worker="w1")
            assert await board.escalate("a", note) is False  # settled: nothing goes out
            await everything.wait_for(lambda e: isinstance(e, BoardSettled))
            await mine.wait_for(lambda e: isinstance(e, BoardSettled))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    assert [e.type for e in everything.events] == ["opened", "escalated", "settled"]
    assert [e.type for e in mine.events] == ["opened", "settled"]
    escalated = everything.events[1]
    assert isinstance(escalated, BoardEscalated)
    assert escalated.escalation == note
    assert (escalated.request.id, escalated.request.is_open) == ("a", True)
    assert escalated.request.room == "room-1"


async def test_hundreds_of_calls_in_flight_wait_for_a_connection(
    redis_url: str, redis_prefix: str
) -> None:
    """redis-py's default pool refused the 101st command in flight ("Too many connections")
    while Redis was up: at 200 operator clients, 30 % of the calls failed with 503."""
    from voice_hitl.board import RedisBoard

    board = RedisBoard(redis_url, prefix=redis_prefix, max_connections=16)
    try:
        await board.publish(a_request())
        found = await asyncio.gather(*(board.get("hi_1") for _ in range(300)))
        assert all(request is not None and request.id == "hi_1" for request in found)
    finally:
        await board.aclose()


async def test_a_claim_is_taken_once_by_its_owner_within_its_window(board: RequestBoard) -> None:
    answered, rejected = BoardStatus.ANSWERED, BoardStatus.REJECTED
    await board.heartbeat("w1", 30)
    await board.publish(a_request())
    log = EventLog()
    async with board.subscribe("w1") as mine, board.subscribe() as everyone:
        watching = asyncio.create_task(log.run(mine))
        others = EventLog()
        watching_all = asyncio.create_task(others.run(everyone))
        claimed = await board.claim("hi_1", answered, "red", token="t1", window=30, by="ann")
        assert claimed.outcome == "claimed" and claimed.request is not None
        assert claimed.request.is_open and claimed.request.claim is not None
        assert (claimed.request.claim.text, claimed.request.claim.by) == ("red", "ann")
        event = await log.wait_for(lambda e: isinstance(e, BoardClaimed))
        assert event.request.claim is not None and event.request.claim.token == "t1"
        # a retry is the same claim; another operator's is busy; a plain settle loses
        again = await board.claim("hi_1", answered, "red", token="t1", window=30)
        assert again.outcome == "claimed"
        busy = await board.claim("hi_1", rejected, "no", token="t2", window=30, by="bob")
        assert busy.outcome == "busy"
        assert not (await board.settle("hi_1", rejected, "no", by="bob")).won
        assert not await board.take("hi_1", "t1", "w2")  # only the owner takes
        assert not await board.take("hi_1", "t2", "w1")  # only the claim's token
        assert await board.take("hi_1", "t1", "w1")
        assert await board.take("hi_1", "t1", "w1")  # a retry (its reply was lost) says so
        kept = await board.release("hi_1", "t1")
        assert kept is not None and kept.is_open and kept.claim is not None and kept.claim.taken
        done = await board.settle("hi_1", answered, "red", by="ann", via="api", worker="w1")
        assert done.won and done.request is not None and done.request.claim is not None
        assert done.request.claim.token == "t1"  # the record tells whose claim was taken
        late = await board.claim("hi_1", answered, "blue", token="t3", window=30)
        assert late.outcome == "settled"
        await others.wait_for(lambda e: isinstance(e, BoardSettled))
        assert not any(isinstance(e, BoardClaimed) for e in others.events)  # the owner's only
        watching.cancel()
        watching_all.cancel()
        await asyncio.gather(watching, watching_all, return_exceptions=True)


async def test_a_claim_not_taken_in_its_window_is_never_taken(board: RequestBoard) -> None:
    answered = BoardStatus.ANSWERED
    await board.heartbeat("w1", 30)
    await board.publish(a_request())
    assert (await board.claim("hi_1", answered, "red", token="t1", window=0.05)).outcome == (
        "claimed"
    )

    async def lapsed() -> bool:  # on this machine's clock, which the board's shares
        record = await board.get("hi_1")
        return record is not None and record.claim is not None and record.claim.until < time.time()

    await eventually(lapsed)
    assert not await board.take("hi_1", "t1", "w1")  # too late: the claimant was told so

    async def replaced() -> bool:
        claimed = await board.claim("hi_1", answered, "blue", token="t2", window=30)
        return claimed.outcome == "claimed"

    # once lapsed, another claim may replace it, and the old token can neither take nor release
    await eventually(replaced)
    assert not await board.take("hi_1", "t1", "w1")
    still = await board.release("hi_1", "t1")
    assert still is not None and still.claim is not None and still.claim.token == "t2"
    released = await board.release("hi_1", "t2")
    assert released is not None and released.is_open and released.claim is None
    assert await board.release("nope", "t2") is None
    assert (await board.claim("nope", answered, "x", token="t", window=1)).outcome == "missing"


async def test_a_claim_on_a_gone_workers_request_abandons_it(board: RequestBoard) -> None:
    await board.heartbeat("gone", 0.05)
    await board.publish(a_request("ghost", "gone"))
    await lapse_after(board, "gone")
    result = await board.claim("ghost", BoardStatus.ANSWERED, "red", token="t", window=5)
    assert result.outcome == "settled" and result.request is not None
    assert result.request.status is BoardStatus.ABANDONED
