"""A worker process for the journal's multi-process test: answers COUNT requests, journaled.

    python tests/journal_worker.py REDIS_URL PREFIX WORKER_ID COUNT

Each request is created, answered by ``WORKER_ID`` and waited on, as a call would; the
journal (on the Redis stream under PREFIX) is closed at the end. Prints one line:
``done WRITTEN RELINKED FAILURES``.
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


if __name__ == "__main__":
    url, prefix, worker, count = sys.argv[1:5]
    asyncio.run(main(url, prefix, worker, int(count)))
