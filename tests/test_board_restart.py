"""A Redis restart without persistence, seen by an operator: no answer the call took reads as
"no such request", and the window while the workers re-publish is a retryable 503.

Each test runs a throwaway ``redis-server`` (no persistence) that it restarts itself, one
worker (handler + bridge) and the service over ASGI, each with its own board client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from board_rig import eventually, throwaway_redis
from redis_rig import RedisServer
from service_rig import ANN, BOB, TOKENS, answer_until_final, ask_colour, operator_client

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, BoardStatus, RedisBoard
from voice_hitl.service import create_app

pytestmark = pytest.mark.timeout(60)


class WorkerBoard(RedisBoard):
    """The worker's board client, with two hooks a test sets:

    - ``restart_before_ack``: the server restarts (empty) just before the worker's
      acknowledgement of an operator's answer it took, so the acknowledgement meets a server
      that never heard of the request;
    - ``gate``: while cleared, the worker cannot subscribe again (it stays off the board),
      which holds the re-publish window open.
    """

    def __init__(self, server: RedisServer, prefix: str) -> None:
        super().__init__(server.url, prefix=prefix, timeout=1.0)
        self.server = server
        self.restart_before_ack = False
        self.gate = asyncio.Event()
        self.gate.set()

    async def settle(self, request_id: str, status: BoardStatus, text: str = "", **kw: Any) -> Any:
        if self.restart_before_ack and kw.get("by") == "ann":
            self.restart_before_ack = False
            await asyncio.to_thread(self.server.restart)
        return await super().settle(request_id, status, text, **kw)

    @contextlib.asynccontextmanager
    async def subscribe(self, worker: str | None = None) -> AsyncIterator[Any]:
        await self.gate.wait()
        async with super().subscribe(worker) as events:
            yield events


@dataclass
class Site:
    server: RedisServer
    worker_board: WorkerBoard
    service_board: RedisBoard
    handler: HumanInputHandler
    bridge: BoardBridge
    ann: httpx.AsyncClient
    bob: httpx.AsyncClient


@contextlib.asynccontextmanager
async def site(redis_prefix: str, rebuild_window: float = 30.0) -> AsyncIterator[Site]:
    server = await asyncio.to_thread(throwaway_redis)
    worker_board = WorkerBoard(server, redis_prefix)
    service_board = RedisBoard(server.url, prefix=redis_prefix, timeout=1.0)
    handler = HumanInputHandler()
    app = create_app(service_board, TOKENS, ack_timeout=1.0, rebuild_window=rebuild_window)
    try:
        async with (
            BoardBridge(
                handler, worker_board, worker_id="w-restart", heartbeat=0.2, reconnect_delay=0.05
            ) as bridge,
            operator_client(app, ANN) as ann,
            operator_client(app, BOB) as bob,
        ):
            yield Site(server, worker_board, service_board, handler, bridge, ann, bob)
            await handler.close()
    finally:
        await worker_board.aclose()
        await service_board.aclose()
        await asyncio.to_thread(server.stop)


async def test_a_taken_answer_whose_acknowledgement_met_the_restarted_server_is_not_lost(
    redis_prefix: str,
) -> None:
    """The call took the answer; Redis restarted (empty) before the worker's acknowledgement
    reached it. The retry with the Idempotency-Key got 404 "no such request": the record was
    gone for good. Now the worker restores it from its own record and the retry gets the first
    outcome (200, same answer); on the way only retryable refusals are seen."""
    async with site(redis_prefix) as s:
        rid = await ask_colour(s.bridge)
        waiting = asyncio.create_task(s.handler.wait(rid))
        s.worker_board.restart_before_ack = True
        seen: list[tuple[int, str]] = []
        final = await answer_until_final(s.ann, rid, "answer-1", seen)
        assert final.status_code == 200, (final.json(), seen)
        settled = final.json()["request"]["settled"]
        assert (settled["status"], settled["by"]) == ("answered", "ann")
        assert json.loads(settled["text"])["answer"] == "red"
        assert json.loads(await waiting)["answer"] == "red"  # the call read it, once
        assert {status for status, _ in seen} <= {200, 503, 504}, seen
        assert s.bridge.delivered == 1
        # Another retry, and another operator's late answer, after the rebuild:
        again = await s.ann.post(
            f"/v1/requests/{rid}/answer",
            json={"answer": "red"},
            headers={"Idempotency-Key": "answer-1"},
        )
        assert again.status_code == 200 and again.json() == final.json()
        late = await s.ann.post(f"/v1/requests/{rid}/answer", json={"answer": "Dark blue"})
        assert late.status_code == 409 and late.json()["error"]["code"] == "already_settled"


async def test_answers_while_the_workers_re_publish_get_a_retryable_503_not_404(
    redis_prefix: str,
) -> None:
    """Between the restart and the worker's re-publishing, answers got 404 (about 1 s). Now
    they get 503 ``board_rebuilding`` with Retry-After; once the worker is back, an open
    request is answered (200), a settled one refuses a late answer (409), and a retry of an
    answer taken before the restart returns its first outcome (200)."""
    async with site(redis_prefix) as s:
        open_id, spoken_id, taken_id = [await ask_colour(s.bridge) for _ in range(3)]
        s.handler.resolve(spoken_id, '{"answer": "red"}', by="caller", via="speech")
        first = await s.ann.post(
            f"/v1/requests/{taken_id}/answer",
            json={"answer": "Dark blue"},
            headers={"Idempotency-Key": "before"},
        )
        assert first.status_code == 200
        await s.bridge.drain()

        s.worker_board.gate.clear()  # the worker stays off the board until the gate opens
        await asyncio.to_thread(s.server.restart)
        await eventually(lambda: not s.bridge.connected)
        for rid in (open_id, spoken_id, taken_id):
            shown = await s.ann.get(f"/v1/requests/{rid}")
            assert shown.status_code == 503, shown.json()
            assert shown.json()["error"]["code"] == "board_rebuilding"
            assert 1 <= int(shown.headers["Retry-After"]) <= 30
            answered = await s.ann.post(f"/v1/requests/{rid}/answer", json={"answer": "red"})
            assert answered.status_code == 503
            assert answered.json()["error"]["code"] == "board_rebuilding"
            assert "rebuil" in answered.json()["error"]["message"]
        # Out of scope reads the same as unknown, even now.
        hidden = await s.bob.get(f"/v1/requests/{open_id}")
        assert hidden.status_code == 503 and hidden.json()["error"]["code"] == "board_rebuilding"

        s.worker_board.gate.set()
        await eventually(lambda: s.bridge.connected, timeout=10)
        await s.bridge.drain()
        seen: list[tuple[int, str]] = []
        assert (await answer_until_final(s.ann, open_id, None, seen)).status_code == 200
        late = await answer_until_final(s.ann, spoken_id, None, seen)
        assert late.status_code == 409 and late.json()["error"]["settled"]["by"] == "caller"
        retry = await answer_until_final(s.ann, taken_id, "before", seen)
        assert retry.status_code == 200 and retry.json() == first.json()
        assert {status for status, _ in seen} <= {200, 409, 503}, seen


async def test_after_the_window_a_forgotten_id_says_the_board_lost_its_state(
    redis_prefix: str,
) -> None:
    """An id the restarted board does not have once the workers are back: 410
    ``board_state_lost`` (the outcome of an earlier answer is unknown here), never a 404 that
    reads as "no such request"; a fresh board still says 404."""
    async with site(redis_prefix, rebuild_window=0.2) as s:
        unknown = await s.ann.get("/v1/requests/0123456789abcdef")
        assert unknown.status_code == 404  # nothing was lost yet
        await asyncio.to_thread(s.server.restart)
        await eventually(lambda: s.bridge.reconnects >= 1 and s.bridge.connected, timeout=10)

        async def gone() -> bool:
            response = await s.ann.post(
                "/v1/requests/0123456789abcdef/answer",
                json={"answer": "red"},
                headers={"Idempotency-Key": "k"},
            )
            return response.status_code == 410

        await eventually(gone, timeout=10, step=0.05)
        response = await s.ann.get("/v1/requests/0123456789abcdef")
        assert response.status_code == 410
        error = response.json()["error"]
        assert error["code"] == "board_state_lost" and "lost its state" in error["message"]
        assert "Retry-After" not in response.headers
        assert await s.service_board.lost_state() is not None
