"""A worker process for the multi-process tests: opens requests on a Redis board and reports.

    python tests/operator_worker.py REDIS_URL PREFIX WORKER_ID COUNT HEARTBEAT

stdout, one line each: ``ready`` once its COUNT requests are on the board, ``settled ID OUTCOME
BY VIA`` for every settle its handler makes, ``result ID TEXT`` for every answer a wait returned
(what the model would read), and ``bye DELIVERED CONFLICTS RECONNECTS`` when stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys

from voice_hitl import HumanInputHandler, RequestEvent, RequestSettled
from voice_hitl.board import BoardBridge, RedisBoard


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


async def main(url: str, prefix: str, worker: str, count: int, heartbeat: float) -> None:
    board = RedisBoard(url, prefix=prefix, timeout=2.0)
    handler = HumanInputHandler(retention=0)

    def observe(event: RequestEvent) -> None:
        if isinstance(event, RequestSettled):
            say("settled", event.pending_id, event.outcome, event.by, event.via)

    handler.add_observer(observe)
    opened = 0
    all_open = asyncio.Event()

    async def ask(n: int) -> None:
        pending = await handler.create(
            "AskUserQuestion",
            {"question": f"Question {n} from {worker}?", "choices": ["red", "blue"]},
            room_id=f"room-{n % 7}",
            channel_id="phone",
            actor_id="caller",
            timeout=600,
            context={"transcript": ({"role": "user", "text": f"line {n}", "speaker_id": "c"},)},
        )
        nonlocal opened
        opened += 1
        if opened == count:
            all_open.set()
        with contextlib.suppress(Exception):
            say("result", pending.pending_id, await handler.wait(pending.pending_id, timeout=600))

    async with BoardBridge(
        handler, board, worker_id=worker, heartbeat=heartbeat, reconnect_delay=0.05
    ) as bridge:
        tasks = [asyncio.create_task(ask(n)) for n in range(count)]
        await all_open.wait()
        await bridge.drain()
        say("ready")
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        await reader.read()  # until stdin closes
        await handler.close()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await bridge.drain()
        say("bye", bridge.delivered, bridge.conflicts, bridge.reconnects)
    await board.aclose()


if __name__ == "__main__":
    url, prefix, worker, count, heartbeat = sys.argv[1:6]
    asyncio.run(main(url, prefix, worker, int(count), float(heartbeat)))
