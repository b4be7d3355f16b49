"""Worker processes for the journal's multi-process and crash tests.

    python tests/journal_worker.py REDIS_URL PREFIX WORKER_ID COUNT
    python tests/journal_worker.py burst FILE DURABILITY [CONCURRENCY]

The first form answers COUNT requests, journaled on the Redis stream under PREFIX: each is
created, answered by ``WORKER_ID`` and waited on, as a call would; the journal is closed at
the end. Prints one line: ``done WRITTEN RELINKED FAILURES``.

``burst`` answers requests as fast as it can, CONCURRENCY calls at a time, journaled in the
SQLite FILE with DURABILITY (``fast`` or ``sync``), until it is killed. It prints ``ready``
once a first request is stored, then ``ack ID`` for requests whose call has read its answer
(flushed every 50), for the crash test to check against the journal after a SIGKILL.
"""

from __future__ import annotations

import asyncio
import sys

from voice_hitl import HumanInputHandler
from voice_hitl.journal import Journal

KEY = b"journal-scale-key"


async def main(url: str, prefix: str, worker: str, count: int) -> None:
    handler = HumanInputHandler(retention=0)
    journal = Journal.on_redis(url, KEY, prefix=prefix)
    journal.attach(handler)
    for index in range(count):
        pending = await handler.create(
            "AskUserQuestion", {"question": f"q{index}"}, room_id=worker, timeout=60
        )
        handler.resolve(pending.pending_id, f"a{index}", by=worker, via="api")
        await handler.wait(pending.pending_id, timeout=60)
    await asyncio.to_thread(journal.close, 60.0)
    stats = journal.stats
    print("done", stats.written, stats.relinked, stats.failures, flush=True)


async def burst(path: str, durability: str, concurrency: int) -> None:
    handler = HumanInputHandler(retention=0)
    journal = Journal.open(path, KEY, durability=durability)
    journal.attach(handler)
    acked: list[str] = []

    async def calls() -> None:
        while True:
            pending = await handler.create("ConfirmAction", {"action": "pay"}, timeout=60)
            handler.resolve(pending.pending_id, "yes", by="ann", via="api")
            await handler.wait(pending.pending_id, timeout=60)
            acked.append(pending.pending_id)
            if len(acked) >= 50:
                sys.stdout.write("".join(f"ack {a}\n" for a in acked))
                sys.stdout.flush()
                acked.clear()

    pending = await handler.create("ConfirmAction", {"action": "start"}, timeout=60)
    handler.resolve(pending.pending_id, "yes", by="ann", via="api")
    await handler.wait(pending.pending_id, timeout=60)
    assert await asyncio.to_thread(journal.flush)  # the file is a journal before the burst
    print("ready", flush=True)
    async with asyncio.TaskGroup() as group:
        for _ in range(concurrency):
            group.create_task(calls())


if __name__ == "__main__":
    if sys.argv[1] == "burst":
        concurrency = int(sys.argv[4]) if len(sys.argv) > 4 else 32
        asyncio.run(burst(sys.argv[2], sys.argv[3], concurrency))
    else:
        url, prefix, worker, count = sys.argv[1:5]
        asyncio.run(main(url, prefix, worker, int(count)))
