"""Reads under load: concurrent listings share one round trip, and an idempotent read that
timed out (the reply waited behind a busy event loop) is read again instead of becoming a 503."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from service_rig import ANN, TOKENS, ask_colour, operator_client

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, BoardUnavailableError, RedisBoard
from voice_hitl.board._shared_read import SharedRead
from voice_hitl.service import create_app


class GatedRead:
    """A read that returns its number (1 for the first read), once ``open(number)``."""

    def __init__(self) -> None:
        self.started = 0
        self.gates: dict[int, asyncio.Event] = {}
        self.entered = asyncio.Event()
        self.fail: BaseException | None = None

    def open(self, number: int) -> None:
        self.gates.setdefault(number, asyncio.Event()).set()

    async def __call__(self) -> int:
        self.started += 1
        number = self.started
        self.entered.set()
        await self.gates.setdefault(number, asyncio.Event()).wait()
        if self.fail is not None:
            raise self.fail
        return number


async def test_callers_arriving_during_a_read_share_the_next_one() -> None:
    read = GatedRead()
    shared = SharedRead(read)
    first = asyncio.create_task(shared())
    await read.entered.wait()
    read.entered.clear()
    later = [asyncio.create_task(shared()) for _ in range(50)]
    await asyncio.sleep(0)  # every later caller is gathering now
    read.open(1)
    read.open(2)
    assert await first == 1
    # The 50 share one read that started after they called (never the older result).
    assert await asyncio.gather(*later) == [2] * 50
    assert read.started == 2


async def test_an_error_reaches_every_caller_that_shared_the_read() -> None:
    read = GatedRead()
    shared = SharedRead(read)
    read.fail = BoardUnavailableError("down")
    callers = [asyncio.create_task(shared()) for _ in range(5)]
    await read.entered.wait()
    read.open(1)
    read.open(2)
    results = await asyncio.gather(*callers, return_exceptions=True)
    assert all(isinstance(r, BoardUnavailableError) for r in results)
    read.fail = None
    read.open(read.started + 1)
    assert await shared() == read.started  # and the next call reads again


async def test_cancelling_the_caller_that_runs_the_read_does_not_fail_the_others() -> None:
    read = GatedRead()
    shared = SharedRead(read)
    first = asyncio.create_task(shared())
    await read.entered.wait()
    read.entered.clear()
    second = asyncio.create_task(shared())  # gathers for the next read
    third = asyncio.create_task(shared())
    await asyncio.sleep(0)
    read.open(1)
    assert await first == 1
    await read.entered.wait()  # second runs the next read; third shares it
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    read.open(3)
    assert await third == 3  # read again for the one left
    assert read.started == 3


def flaky(command: Callable[..., Any], failures: list[BaseException]) -> Callable[..., Any]:
    """``command``, raising the given errors on its first calls (a fault at the client)."""

    async def call(*args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop(0)
        return await command(*args, **kwargs)

    return call


async def test_a_read_that_timed_out_is_read_again_not_refused_with_503(
    redis_url: str, redis_prefix: str
) -> None:
    """Under load, 33-176 of 10,000 calls got 503 "Timeout reading from Redis": a listing or
    a read whose reply waited behind the service's own busy event loop. Reads are idempotent:
    they are read again (up to three times) instead."""
    worker = RedisBoard(redis_url, prefix=redis_prefix)
    service = RedisBoard(redis_url, prefix=redis_prefix)
    handler = HumanInputHandler()
    timeout = RedisTimeoutError("Timeout reading from 127.0.0.1:6379")
    try:
        async with (
            BoardBridge(handler, worker, worker_id="w-reads") as bridge,
            operator_client(create_app(service, TOKENS), ANN) as client,
        ):
            rid = await ask_colour(bridge)
            client_redis: Any = service._redis
            client_redis.hvals = flaky(client_redis.hvals, [timeout, timeout])
            client_redis.hgetall = flaky(client_redis.hgetall, [timeout])
            listing = await client.get("/v1/requests")
            assert listing.status_code == 200, listing.json()
            assert [r["id"] for r in listing.json()["requests"]] == [rid]
            shown = await client.get(f"/v1/requests/{rid}")
            assert shown.status_code == 200, shown.json()
            # Three timeouts in a row: the board is unavailable after all (503).
            client_redis.hgetall = flaky(client_redis.hgetall, [timeout] * 3)
            refused = await client.get(f"/v1/requests/{rid}")
            assert refused.status_code == 503
            assert refused.json()["error"]["code"] == "board_unavailable"
            # A refused connection is not read again: it fails at once.
            down = RedisConnectionError("Error 111 connecting to 127.0.0.1:6379.")
            client_redis.hgetall = flaky(client_redis.hgetall, [down, timeout])
            assert (await client.get(f"/v1/requests/{rid}")).status_code == 503
            assert (await client.get(f"/v1/requests/{rid}")).status_code == 200
            await handler.close()
    finally:
        await worker.aclose()
        await service.aclose()


async def test_a_listing_body_is_what_json_response_renders_open_requests_encoded_once() -> None:
    from starlette.responses import JSONResponse

    from voice_hitl.board import BoardStatus, MemoryBoard
    from voice_hitl.service._listing import ListingEncoder

    board = MemoryBoard()
    handler = HumanInputHandler()
    async with BoardBridge(handler, board, worker_id="w-list") as bridge:
        first = await ask_colour(bridge, question="Which colour é \u2028?")
        await ask_colour(bridge, room="room-b")
        handler.resolve(first, '{"answer": "red"}', by="caller", via="speech")
        await bridge.drain()
        shown = await board.open_requests()
        settled = await board.get(first)
        assert settled is not None and settled.status is BoardStatus.ANSWERED
        encoder = ListingEncoder(size=1)
        for requests in ([], shown, [*shown, settled]):
            expected = JSONResponse({"requests": [r.to_wire() for r in requests]}).body
            assert encoder.body(requests) == expected
        assert encoder.encode(shown[0]) is encoder.encode(shown[0])  # kept, not re-encoded
        await handler.close()
