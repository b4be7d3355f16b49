"""No Redis state is a 500 or a dead task (issue 47): every error reply (OOM, READONLY, BUSY,
NOSCRIPT after a flush) is :class:`BoardUnavailableError` naming the reply, a 503
``board_unavailable`` with ``Retry-After`` at the service, and a reconnect for the worker's
bridge, which delivers answers again once Redis is back. A step of a type nobody listed never
ends a bridge task, and ``BoardBridge.__aenter__`` is bounded and says why it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from board_rig import eventually, throwaway_redis
from redis_rig import free_port
from service_rig import ANN, TOKENS, ask_colour, operator_client

from voice_hitl import HumanInputHandler
from voice_hitl.board import (
    BoardBridge,
    BoardOutcomeUnknownError,
    BoardStatus,
    BoardUnavailableError,
    MemoryBoard,
    RedisBoard,
)
from voice_hitl.service import create_app

redis = pytest.importorskip("redis", reason="the Redis board needs the 'redis' extra")
pytestmark = pytest.mark.timeout(60)


async def _delivered(bridge: BoardBridge, board: RedisBoard, answer: str) -> None:
    """A request the bridge opens now is answered through the board and reaches the call."""
    await bridge.wait_connected()
    pid = await ask_colour(bridge)
    result = await board.settle(pid, BoardStatus.ANSWERED, answer, by="ann", via="api")
    assert result.won
    assert await bridge.handler.wait(pid) == answer


async def test_error_replies_are_unavailable_states_and_the_bridge_comes_back(
    redis_prefix: str,
) -> None:
    server = await asyncio.to_thread(throwaway_redis)
    admin = redis.asyncio.Redis(port=server.port)
    worker_board = RedisBoard(server.url, prefix=redis_prefix, timeout=2.0)
    service_board = RedisBoard(server.url, prefix=redis_prefix, timeout=2.0)
    app = create_app(service_board, TOKENS)
    handler = HumanInputHandler()
    try:
        async with (
            BoardBridge(handler, worker_board, heartbeat=0.1, reconnect_delay=0.02) as bridge,
            operator_client(app, ANN) as ann,
        ):
            await _delivered(bridge, service_board, "red")
            pid0 = await ask_colour(bridge)  # stays open throughout

            # OOM: Redis at maxmemory refuses writes
            await admin.config_set("maxmemory", "1")
            with pytest.raises(BoardUnavailableError, match="OutOfMemoryError"):
                await service_board.settle(pid0, BoardStatus.ANSWERED, "red")
            await admin.config_set("maxmemory", "0")
            await _delivered(bridge, service_board, "Dark blue")

            # READONLY: the server became a replica (a failed-over master rejoining)
            await admin.replicaof("127.0.0.1", str(free_port()))
            with pytest.raises(BoardUnavailableError, match="ReadOnlyError"):
                await service_board.settle(pid0, BoardStatus.ANSWERED, "red")
            late = await handler.create("AskUserQuestion", {"question": "now?"}, timeout=60)
            await eventually(lambda: not bridge.connected)  # its publish met READONLY
            await admin.replicaof("NO", "ONE")
            await _delivered(bridge, service_board, "red")

            # BUSY: a script that does not end; every other command is refused
            await admin.config_set("busy-reply-threshold", "50")
            hog = redis.asyncio.Redis(port=server.port)
            stuck = asyncio.create_task(hog.eval("while true do end", 0))
            try:
                async with asyncio.timeout(10):  # until the server answers BUSY
                    while True:
                        try:
                            await admin.ping()
                        except redis.exceptions.ResponseError:
                            break
                        await asyncio.sleep(0.02)
                listing = await ann.get("/v1/requests")
                assert listing.status_code == 503, listing.text
                assert listing.json()["error"]["code"] == "board_unavailable"
                assert "BUSY" in listing.json()["error"]["message"]
                assert listing.headers["Retry-After"] == "1"
            finally:
                await admin.script_kill()
                with contextlib.suppress(redis.exceptions.ResponseError):
                    await stuck
                await hog.aclose()
            await _delivered(bridge, service_board, "Dark blue")

            # NOSCRIPT: a flushed script cache is loaded again, nothing fails
            await admin.script_flush()
            await _delivered(bridge, service_board, "red")
            assert bridge.reconnects >= 1
            assert (await service_board.get(late.pending_id)) is not None  # re-published
        await handler.close()
    finally:
        await worker_board.aclose()
        await service_board.aclose()
        await admin.aclose()
        await asyncio.to_thread(server.stop)


class FlakyBoard(MemoryBoard):
    """A board whose next ``fail`` heartbeats raise an error type nobody listed, and whose
    subscription can hang (``hang``) as a server that never answers would."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = 0
        self.failed = asyncio.Event()  # set when the last of ``fail`` was raised
        self.hang = False

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        if self.fail:
            self.fail -= 1
            if not self.fail:
                self.failed.set()
            raise RuntimeError("a reply nobody listed")
        return await super().heartbeat(worker, ttl)

    @contextlib.asynccontextmanager
    async def subscribe(self, worker: str | None = None) -> AsyncIterator[Any]:
        if self.hang:
            await asyncio.Event().wait()
        async with super().subscribe(worker) as events:
            yield events


async def test_an_unlisted_error_type_never_ends_a_bridge_task() -> None:
    board = FlakyBoard()
    handler = HumanInputHandler()
    async with BoardBridge(handler, board, heartbeat=0.05, reconnect_delay=0.01) as bridge:
        board.fail = 3  # the heartbeat task meets it, then the inbox while reconnecting
        await board.failed.wait()  # raised inside the bridge's own tasks
        await bridge.wait_connected()
        assert bridge.reconnects >= 1
        pid = await ask_colour(bridge)
        await board.settle(pid, BoardStatus.ANSWERED, "red", by="ann")
        assert await handler.wait(pid) == "red"
    await handler.close()


async def test_entering_a_bridge_is_bounded_and_names_the_reason() -> None:
    board = FlakyBoard()
    board.fail = 1
    with pytest.raises(BoardUnavailableError, match="RuntimeError: a reply nobody listed"):
        async with BoardBridge(HumanInputHandler(), board):
            pass
    board.hang = True  # subscribing never ends: the bridge gives up after connect_timeout
    with pytest.raises(BoardUnavailableError, match=r"not on the board within 0\.2s"):
        async with BoardBridge(HumanInputHandler(), board, connect_timeout=0.2):
            pass


async def test_without_the_replicas_asked_for_an_answer_is_504_and_never_delivered(
    redis_prefix: str,
) -> None:
    """``min_replicas=1`` on a server with no replica: the worker's take is never confirmed,
    so the call does not get the answer, and the operator hears 504 ``outcome_unknown``
    (not 200, not "nothing was delivered")."""
    server = await asyncio.to_thread(throwaway_redis)
    options: dict[str, Any] = {"prefix": redis_prefix, "min_replicas": 1, "replica_timeout": 0.05}
    worker_board = RedisBoard(server.url, **options)
    service_board = RedisBoard(server.url, **options)
    app = create_app(service_board, TOKENS, ack_timeout=0.3)
    handler = HumanInputHandler()
    try:
        async with (
            BoardBridge(handler, worker_board, reconnect_delay=0.02) as bridge,
            operator_client(app, ANN) as ann,
        ):
            pid = await ask_colour(bridge)
            response = await ann.post(f"/v1/requests/{pid}/answer", json={"answer": "red"})
            assert response.status_code == 504, response.text
            assert response.json()["error"]["code"] == "outcome_unknown"
            assert handler.get(pid) is not None and handler.get(pid).status == "pending"
            await handler.close()
    finally:
        await worker_board.aclose()
        await service_board.aclose()
        await asyncio.to_thread(server.stop)


async def test_confirm_waits_for_the_replicas_on_a_cluster_and_a_sentinel_master(
    redis_cluster_url: str, redis_sentinel_url: str, redis_prefix: str
) -> None:
    """``WAIT`` runs on the connection of the board's slot master: the Sentinel group's master
    has its replica (confirmed), the test cluster's masters have none (504's error)."""
    sentinel = RedisBoard(redis_sentinel_url, prefix=redis_prefix, min_replicas=1)
    cluster = RedisBoard(
        redis_cluster_url, prefix=redis_prefix, min_replicas=1, replica_timeout=0.05
    )
    try:
        await sentinel.confirm()
        with pytest.raises(BoardOutcomeUnknownError, match="only 0 of 1 replicas"):
            await cluster.confirm()
    finally:
        await sentinel.aclose()
        await cluster.aclose()
