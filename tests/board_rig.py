"""Boards for the tests: every backend behind one fixture, and event waiting helpers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from redis_rig import RedisServer, _unavailable, start_redis_server

from voice_hitl.board import BoardEvent, MemoryBoard, RequestBoard

__all__ = ["BACKENDS", "CONFORMANCE", "EventLog", "eventually", "make_board", "throwaway_redis"]

BACKENDS = ["memory", "redis"]
CONFORMANCE = [*BACKENDS, "redis-cluster", "redis-sentinel"]
"""The board's own suites also run on a 3-master cluster and on a Sentinel-watched master."""


async def make_board(kind: str, request: pytest.FixtureRequest) -> RequestBoard:
    """A fresh board of ``kind`` (the Redis one under the test's own key prefix)."""
    if kind == "memory":
        return MemoryBoard()
    from voice_hitl.board import RedisBoard

    prefix = request.getfixturevalue("redis_prefix")
    if kind == "redis-cluster":
        return RedisBoard(request.getfixturevalue("redis_cluster_url"), prefix=prefix)
    if kind == "redis-sentinel":
        url = request.getfixturevalue("redis_sentinel_url")
        return RedisBoard(url, prefix=prefix, min_replicas=1)
    return RedisBoard(request.getfixturevalue("redis_url"), prefix=prefix)


class EventLog:
    """Collects a subscription's events and lets a test wait for one that matches."""

    def __init__(self) -> None:
        self.events: list[BoardEvent] = []
        self._changed = asyncio.Event()

    async def run(self, events: AsyncIterator[BoardEvent]) -> None:
        async for event in events:
            self.events.append(event)
            self._changed.set()

    async def wait_for(
        self, match: Callable[[BoardEvent], bool], timeout: float = 5.0
    ) -> BoardEvent:
        async with asyncio.timeout(timeout):
            while True:
                for event in self.events:
                    if match(event):
                        return event
                self._changed.clear()
                await self._changed.wait()


async def eventually(
    check: Callable[[], object], *, timeout: float = 5.0, step: float = 0.01
) -> None:
    """Re-check a condition that depends on another process or a server-side clock (a
    heartbeat's time to live) until it holds; fails after ``timeout``."""
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(step)


def throwaway_redis(port: int | None = None) -> RedisServer:
    """A ``redis-server`` this test may stop and restart; skips (or fails under
    ``VOICE_HITL_REQUIRE_REDIS=1``) when the binary is missing."""
    try:
        return start_redis_server(port)
    except FileNotFoundError as exc:
        _unavailable(str(exc))
        raise
