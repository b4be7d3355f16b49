"""A worker process for the multi-process tests: opens requests on a Redis board and reports.

    python tests/operator_worker.py REDIS_URL PREFIX WORKER_ID COUNT HEARTBEAT [JOURNAL [hold]]

stdout, one line each: ``ready`` once its COUNT requests are on the board, ``settled ID OUTCOME
BY VIA`` for every settle its handler makes, ``result ID TEXT`` for every answer a wait returned
(what the model would read), and ``bye DELIVERED CONFLICTS RECONNECTS`` when stdin closes or on
SIGTERM (a rolling restart: it stops taking answers, finishes the one being taken, withdraws
its calls, closes its journal and exits 0).

With JOURNAL (a SQLite file; key from ``VOICE_HITL_JOURNAL_KEY``) the worker journals its
handler. With ``hold``, each take of an operator's answer waits, after printing ``holding ID``,
until the process gets SIGUSR1 (the test decides when the answers in flight may land); SIGUSR2
holds the takes again (``armed``). On SIGTERM it prints ``stopping`` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

from voice_hitl import HumanInputHandler, RequestEvent, RequestSettled
from voice_hitl.board import BoardBridge, RedisBoard
from voice_hitl.journal import Journal


class HeldBoard(RedisBoard):
    """Takes wait for SIGUSR1 (see the module docstring)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.go = asyncio.Event()

    def arm(self) -> None:
        self.go = asyncio.Event()
        say("armed")

    async def take(self, request_id: str, token: str, worker: str) -> bool:
        say("holding", request_id)
        await self.go.wait()
        return await super().take(request_id, token, worker)


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


async def main(
    url: str, prefix: str, worker: str, count: int, heartbeat: float, extra: list[str]
) -> None:
    hold = "hold" in extra[1:]
    board = (HeldBoard if hold else RedisBoard)(url, prefix=prefix, timeout=2.0)
    handler = HumanInputHandler(retention=0)
    journal = None
    if extra:
        journal = Journal.open(extra[0], os.environ["VOICE_HITL_JOURNAL_KEY"].encode())
        journal.attach(handler)
    loop = asyncio.get_running_loop()
    if isinstance(board, HeldBoard):
        held = board
        loop.add_signal_handler(signal.SIGUSR1, lambda: held.go.set())
        loop.add_signal_handler(signal.SIGUSR2, held.arm)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

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
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        stdin_closed = asyncio.create_task(reader.read())
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({stdin_closed, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stdin_closed.cancel()
        stopped.cancel()
        if stop.is_set():
            say("stopping")
            await bridge.stop_taking()  # SIGTERM: the answer being taken lands, no new one
        await handler.close()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await bridge.drain()
    await board.aclose()
    if journal is not None:
        await asyncio.to_thread(journal.close)
    say("bye", bridge.delivered, bridge.conflicts, bridge.reconnects)


if __name__ == "__main__":
    url, prefix, worker, count, heartbeat = sys.argv[1:6]
    asyncio.run(main(url, prefix, worker, int(count), float(heartbeat), sys.argv[6:]))
