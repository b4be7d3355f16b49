"""A long re-publish keeps the worker alive (issue 47): the heartbeat has its own task and
beats while the bridge re-publishes, so a worker that was paused (its heartbeat lapsed) and
holds many open requests resettles once, instead of lapsing again during every re-publish.

Virtual time (looptime): the board's publish is slow on purpose, so the re-publish takes
longer than the heartbeat's time to live.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, BoardRequest, MemoryBoard

pytestmark = pytest.mark.looptime

OPEN = 640


class SlowBoard(MemoryBoard):
    """Re-publishing takes 5 s per batch (virtual), 500 requests a batch: 10 s for all, over
    three times the worker's heartbeat time to live."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: asyncio.get_running_loop().time())
        self.republishing = 0
        self.beats_while_republishing = 0
        self.lapses = 0
        self.lapsed = asyncio.Event()
        self.republished = asyncio.Event()  # set when a re-publish starts

    async def publish_many(
        self, requests: Sequence[BoardRequest], *, revive: bool = False
    ) -> list[BoardRequest]:
        if not revive:
            return await super().publish_many(requests)
        self.republishing += 1
        self.republished.set()
        try:
            await asyncio.sleep(5)
            return await super().publish_many(requests, revive=True)
        finally:
            self.republishing -= 1

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        if self.republishing:
            self.beats_while_republishing += 1
        lapsed = await super().heartbeat(worker, ttl)
        if lapsed and self.republishing == 0 and worker in self._alive_until:
            self.lapses += 1
            self.lapsed.set()
        return lapsed


async def test_a_paused_worker_with_many_open_requests_resettles_once() -> None:
    board = SlowBoard()
    handler = HumanInputHandler()
    async with BoardBridge(handler, board, heartbeat=1.0, misses=3) as bridge:
        for n in range(OPEN):
            await handler.create("AskUserQuestion", {"question": f"q{n}"}, timeout=3600)
        await bridge.drain()
        assert len(await board.open_requests()) == OPEN
        board.lapses = 0
        await board.heartbeat(bridge.worker_id, 0)  # the worker was paused: its beat lapsed
        await board.lapsed.wait()  # the bridge's next beat finds out, and re-publishes
        await board.republished.wait()
        await bridge.wait_connected()
        assert board.beats_while_republishing >= 5  # ~10 s of re-publish, a beat a second
        await asyncio.sleep(30)  # 30 s more (virtual): no further lapse, no further re-publish
        assert (board.lapses, bridge.reconnects) == (1, 1)
        assert len(await board.open_requests()) == OPEN
    await handler.close()
