"""The worker bridge: a handler's requests on a board, answers from it, exactly once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from board_rig import CONFORMANCE, eventually, make_board, throwaway_redis

from voice_hitl import HumanInputHandler, HumanInputRejectedError, RequestEvent, RequestSettled
from voice_hitl.board import BoardBridge, BoardStatus, RequestBoard
from voice_hitl.board import MemoryBoard as MemoryBoardForDefaults

TRANSCRIPT = (
    {"role": "user", "text": "I need to move money", "speaker_id": "caller"},
    {"role": "assistant", "text": "Let me check", "speaker_id": None},
)


@pytest.fixture(params=CONFORMANCE)
async def board(request: pytest.FixtureRequest) -> AsyncIterator[RequestBoard]:
    made = await make_board(request.param, request)
    try:
        yield made
    finally:
        await made.aclose()


class Settles:
    def __init__(self) -> None:
        self.events: list[RequestSettled] = []

    def __call__(self, event: RequestEvent) -> None:
        if isinstance(event, RequestSettled):
            self.events.append(event)


async def ask(handler: HumanInputHandler, **more: object) -> str:
    pending = await handler.create(
        "AskUserQuestion",
        {"question": "Which account?", "choices": ["checking", "savings"]},
        room_id="room-7",
        channel_id="phone",
        actor_id="caller",
        timeout=60,
        context={"transcript": TRANSCRIPT},
        **more,  # type: ignore[arg-type]
    )
    return pending.pending_id


async def test_a_request_is_published_with_everything_an_operator_needs(
    board: RequestBoard,
) -> None:
    handler = HumanInputHandler()
    async with BoardBridge(handler, board, worker_id="w-1") as bridge:
        rid = await ask(handler)
        await bridge.drain()
        record = await board.get(rid)
        assert record is not None and record.is_open
        assert (record.tool, record.room, record.channel, record.actor) == (
            "AskUserQuestion",
            "room-7",
            "phone",
            "caller",
        )
        assert record.worker == "w-1" and record.channel_type == "ai"
        assert record.spec is not None and record.spec["kind"] == "choices"
        assert [c["id"] for c in record.spec["choices"]] == ["checking", "savings"]
        assert record.deadline is not None and 59 < record.deadline - record.created_at <= 60
        assert list(record.transcript) == [dict(line) for line in TRANSCRIPT]
        await handler.close()
        await bridge.drain()
        closed = await board.get(rid)
        assert closed is not None and closed.status is BoardStatus.WITHDRAWN


async def test_an_answer_on_the_board_reaches_the_handler_once(board: RequestBoard) -> None:
    handler = HumanInputHandler()
    settles = Settles()
    handler.add_observer(settles)
    async with BoardBridge(handler, board) as bridge:
        rid = await ask(handler)
        await bridge.drain()
        waiting = asyncio.create_task(handler.wait(rid))
        results = await asyncio.gather(
            *(
                board.settle(
                    rid, BoardStatus.ANSWERED, json.dumps({"answer": n}), by=f"op{n}", via="api"
                )
                for n in range(10)
            )
        )
        answer = await waiting
        won = [r for r in results if r.won]
        assert len(won) == 1 and won[0].request is not None
        assert answer == won[0].request.text
        assert len(settles.events) == 1
        assert settles.events[0].by == won[0].request.settled_by
        assert settles.events[0].via == "api"
        assert bridge.delivered == 1
        await bridge.drain()
        assert (await board.get(rid)) == won[0].request  # the bridge did not settle it again


async def test_a_rejection_on_the_board_refuses_the_request(board: RequestBoard) -> None:
    handler = HumanInputHandler()
    async with BoardBridge(handler, board) as bridge:
        rid = await ask(handler)
        await bridge.drain()
        waiting = asyncio.create_task(handler.wait(rid))
        assert (await board.settle(rid, BoardStatus.REJECTED, "ask the caller", by="ann")).won
        with pytest.raises(HumanInputRejectedError, match="ask the caller"):
            await waiting


async def test_local_settles_show_on_the_board_at_once(board: RequestBoard) -> None:
    handler = HumanInputHandler()
    async with BoardBridge(handler, board) as bridge:
        spoken = await ask(handler)
        withdrawn = await ask(handler)
        waiting = asyncio.create_task(handler.wait(withdrawn))
        await bridge.drain()
        handler.resolve(spoken, '{"answer": "savings"}', by="caller", via="speech")
        waiting.cancel("the voice session ended")
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await bridge.drain()
        first = await board.get(spoken)
        assert first is not None and first.status is BoardStatus.ANSWERED
        assert (first.settled_by, first.settled_via) == ("caller", "speech")
        second = await board.get(withdrawn)
        assert second is not None and second.status is BoardStatus.WITHDRAWN
        assert second.detail == "the voice session ended"
        late = await board.settle(withdrawn, BoardStatus.ANSWERED, "x", by="ann")
        assert not late.won and late.request == second
        await handler.wait(spoken)


async def test_a_dead_workers_requests_are_abandoned(board: RequestBoard) -> None:
    handler = HumanInputHandler()
    bridge = BoardBridge(handler, board, heartbeat=0.05, misses=2)
    async with bridge:
        rid = await ask(handler)
        await bridge.drain()
    # The bridge stopped heartbeating, as a killed worker would; its request is still open.
    reaped: list[str] = []

    async def reaped_it() -> bool:
        reaped.extend(r.id for r in await board.reap())
        return rid in reaped

    await eventually(reaped_it)
    answer = await board.settle(rid, BoardStatus.ANSWERED, "x", by="ann")
    assert not answer.won and answer.request is not None
    assert answer.request.status is BoardStatus.ABANDONED
    assert handler.get(rid) is not None  # the handler itself was never told anything
    await handler.close()


async def test_the_bridge_survives_a_redis_restart(redis_prefix: str) -> None:
    from voice_hitl.board import RedisBoard

    server = throwaway_redis()
    try:
        board = RedisBoard(server.url, prefix=redis_prefix, timeout=1.0)
        handler = HumanInputHandler()
        settles = Settles()
        handler.add_observer(settles)
        try:
            async with BoardBridge(handler, board, heartbeat=0.5, reconnect_delay=0.05) as bridge:
                ids = [await ask(handler) for _ in range(5)]
                await bridge.drain()
                await asyncio.to_thread(server.stop)
                handler.resolve(ids[0], '{"answer": "checking"}', by="caller", via="speech")
                server = await asyncio.to_thread(throwaway_redis, server.port)
                await eventually(lambda: bridge.reconnects >= 1 and bridge.connected)
                async with asyncio.timeout(5):
                    await bridge.drain()
                assert sorted(r.id for r in await board.open_requests()) == sorted(ids[1:])
                waiting = asyncio.create_task(handler.wait(ids[1]))
                assert (await board.settle(ids[1], BoardStatus.ANSWERED, '"ok"', by="ann")).won
                assert await waiting == '"ok"'
                assert [e.pending_id for e in settles.events] == ids[:2]  # once each
        finally:
            await handler.close()
            await board.aclose()
    finally:
        server.stop()


def test_the_default_heartbeat_abandons_after_three_missed_beats_of_two_seconds() -> None:
    bridge = BoardBridge(HumanInputHandler(), MemoryBoardForDefaults())
    assert (bridge.heartbeat_interval, bridge.ttl) == (2.0, 6.0)
    for bad in (0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="heartbeat"):
            BoardBridge(HumanInputHandler(), MemoryBoardForDefaults(), heartbeat=bad)
    with pytest.raises(ValueError, match="misses"):
        BoardBridge(HumanInputHandler(), MemoryBoardForDefaults(), misses=0)


async def test_a_restart_without_persistence_does_not_forget_settled_requests(
    redis_prefix: str,
) -> None:
    """Redis restarted without persistence forgot settled requests: a late answer got 404
    ("no such request") instead of 409 ("already answered by ...")."""
    from voice_hitl.board import RedisBoard

    server = throwaway_redis()
    try:
        board = RedisBoard(server.url, prefix=redis_prefix, timeout=1.0)
        handler = HumanInputHandler()
        try:
            async with BoardBridge(handler, board, heartbeat=0.1, reconnect_delay=0.05) as bridge:
                answered, spoken, still_open = [await ask(handler) for _ in range(3)]
                await bridge.drain()
                assert (await board.settle(answered, BoardStatus.ANSWERED, '"a"', by="ann")).won
                assert await handler.wait(answered) == '"a"'
                handler.resolve(spoken, '"b"', by="caller", via="speech")
                await bridge.drain()
                await asyncio.to_thread(server.stop)
                server = await asyncio.to_thread(throwaway_redis, server.port)  # empty
                await eventually(lambda: bridge.reconnects >= 1 and bridge.connected)
                for rid, by in ((answered, "ann"), (spoken, "caller")):
                    record = await board.get(rid)
                    assert record is not None and record.status is BoardStatus.ANSWERED
                    assert record.settled_by == by
                    late = await board.settle(rid, BoardStatus.ANSWERED, '"c"', by="bob")
                    assert not late.won and late.request is not None  # 409, not 404
                assert [r.id for r in await board.open_requests()] == [still_open]
        finally:
            await handler.close()
            await board.aclose()
    finally:
        server.stop()
