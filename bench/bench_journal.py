"""What the journal costs a call, and how fast it writes.

* **call path**: create -> resolve -> wait round trips on one handler, journal off vs on (the
  journal's observer only queues the event; the writer thread does the rest). Best of
  ``--repeats`` runs of ``-n`` round trips each. Target: the journal adds < 5 us per request.
* **throughput**: how long the writer takes to chain and write those requests' entries
  (2 per request: opened, settled) to a SQLite file, measured from the end of the calls to the
  end of ``flush()``.

* **Redis** (``--redis URL``): the same, with the journal on a Redis stream (a fresh key
  prefix, deleted afterwards), and the append throughput in entries per second.
* **store appends**: the store alone: ``2 * n`` entries chained beforehand, appended in
  batches of 512 (the journal's default) from one thread; entries per second, best run.

* **durability** (``--durability``): the call path with ``durability="sync"`` (each call
  reads its answer only once the settled entry is stored) beside ``fast``: one call at a time
  (every call waits for its own write: the latency a person's answer gains) and 64 calls in
  flight (writes are shared by the calls that settled meanwhile: the cost per request under
  load). SQLite in ``sync`` is opened with ``synchronous=FULL`` (``Journal.open``'s choice);
  the figure with ``NORMAL`` (survives a process crash, not a machine crash) is printed too.

Many processes on one Redis stream: ``bench/bench_journal_scale.py``; a crash mid-burst:
``bench/bench_journal_crash.py``.

Run: ``python bench/bench_journal.py [-n 10000] [--redis redis://127.0.0.1:6379/0]
[--durability]``. It prints its figures and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from pathlib import Path

from voice_hitl import HumanInputHandler
from voice_hitl.journal import (
    GENESIS,
    Journal,
    JournalEntry,
    JournalStore,
    RedisJournalStore,
    SqliteJournalStore,
    digest_of,
)

KEY = b"bench-key"


async def round_trips(handler: HumanInputHandler, n: int) -> float:
    create, resolve, wait = handler.create, handler.resolve, handler.wait
    start = time.perf_counter()
    for _ in range(n):
        pending = await create("AskUserQuestion", {"question": "?"})
        resolve(pending.pending_id, "yes")
        await wait(pending.pending_id)
    return time.perf_counter() - start


def _store(folder: str, redis_url: str | None) -> JournalStore:
    if redis_url is None:
        return SqliteJournalStore(Path(folder) / "j.sqlite3")
    return RedisJournalStore(redis_url, prefix=f"voice-hitl-bench:{time.time_ns()}")


def _clean(store: JournalStore) -> None:
    if isinstance(store, RedisJournalStore):
        import redis

        client = redis.Redis.from_url(store.url)
        keys = list(client.scan_iter(match=f"{store.prefix}:*", count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start : start + 1000])
        client.close()


async def measure(n: int, repeats: int, redis_url: str | None = None) -> None:
    off: list[float] = []
    on: list[float] = []
    writes: list[float] = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        off.append(await round_trips(HumanInputHandler(retention=0), n))
        with tempfile.TemporaryDirectory() as folder:
            store = _store(folder, redis_url)
            journal = Journal(store, KEY)
            journal.start()
            handler = HumanInputHandler(retention=0)
            journal.attach(handler)
            on.append(await round_trips(handler, n))
            gc.enable()
            start = time.perf_counter()
            assert await asyncio.to_thread(journal.flush, None)
            writes.append(time.perf_counter() - start)
            assert journal.stats.written == 2 * n
            await asyncio.to_thread(journal.close)
            _clean(store)
        gc.enable()
    best_off, best_on = min(off) / n * 1e6, min(on) / n * 1e6
    where = "SQLite file" if redis_url is None else f"Redis stream at {redis_url}"
    print(f"round trips: {n} x best of {repeats}; journal on a {where}")
    print(f"journal off      {best_off:8.2f} us/request")
    print(f"journal on       {best_on:8.2f} us/request (+{best_on - best_off:.2f} us; target < 5)")
    print(f"writer backlog   {min(writes) * 1e3:8.1f} ms after the calls for {2 * n} entries")
    rate = 2 * n / (min(on) + min(writes))
    print(f"append rate      {rate:8.0f} entries/s (calls and writes together)")
    appends = [await asyncio.to_thread(store_appends, 2 * n, redis_url) for _ in range(repeats)]
    print(f"store appends    {max(appends):8.0f} entries/s (the store alone, batches of 512)")


def _chained(count: int) -> list[JournalEntry]:
    entries, prev = [], GENESIS
    for seq in range(1, count + 1):
        request_id, at = f"r{seq // 2}", "2026-01-01T00:00:00+00:00"
        kind, data = ("opened", {"tool": "AskUserQuestion"}) if seq % 2 else ("settled", {})
        digest = digest_of(KEY, seq, request_id, at, kind, data, prev)
        entries.append(JournalEntry(seq, request_id, at, kind, data, prev, digest))
        prev = digest
    return entries


def store_appends(count: int, redis_url: str | None, batch: int = 512) -> float:
    """Entries per second appended to a fresh store, in batches, from one thread."""
    entries = _chained(count)
    with tempfile.TemporaryDirectory() as folder:
        store = _store(folder, redis_url)
        try:
            start = time.perf_counter()
            for first in range(0, count, batch):
                store.append(entries[first : first + batch])
            elapsed = time.perf_counter() - start
            assert store.last() == (count, entries[-1].digest)
        finally:
            _clean(store)
            store.close()
    return count / elapsed


async def concurrent_trips(handler: HumanInputHandler, n: int, width: int) -> float:
    """``n`` round trips, ``width`` calls in flight at a time."""

    async def calls(count: int) -> None:
        for _ in range(count):
            pending = await handler.create("AskUserQuestion", {"question": "?"})
            handler.resolve(pending.pending_id, "yes")
            await handler.wait(pending.pending_id)

    start = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        for index in range(width):
            group.create_task(calls(n // width + (index < n % width)))
    return time.perf_counter() - start


async def durability(n: int, repeats: int, redis_url: str | None) -> None:
    """Per request: fast vs sync, one call at a time and 64 in flight (best of ``repeats``)."""
    modes: list[tuple[str, str, str]] = [("fast", "fast", "NORMAL"), ("sync", "sync", "FULL")]
    if redis_url is None:
        modes.append(("sync (NORMAL)", "sync", "NORMAL"))
    where = "SQLite file" if redis_url is None else f"Redis stream at {redis_url}"
    print(f"durability: {n} requests x best of {repeats}; journal on a {where}")
    for width in (1, 64):
        count = n if width > 1 else max(n // 10, 200)  # one at a time: a write per call
        for label, mode, synchronous in modes:
            best = float("inf")
            for _ in range(repeats):
                with tempfile.TemporaryDirectory() as folder:
                    if redis_url is None:
                        path = Path(folder) / "j.sqlite3"
                        store: JournalStore = SqliteJournalStore(path, synchronous=synchronous)
                    else:
                        store = _store(folder, redis_url)
                    journal = Journal(store, KEY, durability=mode)  # type: ignore[arg-type]
                    journal.start()
                    handler = HumanInputHandler(retention=0)
                    journal.attach(handler)
                    if width == 1:
                        took = await round_trips(handler, count)
                    else:
                        took = await concurrent_trips(handler, count, width)
                    assert await asyncio.to_thread(journal.flush, None)
                    assert journal.stats.written == 2 * count
                    await asyncio.to_thread(journal.close)
                    _clean(store)
                best = min(best, took)
            per = best / count * 1e6
            print(f"{width:3d} in flight  {label:<14} {per:9.1f} us/request ({count} requests)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=10_000, help="requests per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs; the best is kept")
    parser.add_argument("--redis", default=None, help="measure the journal on this Redis")
    parser.add_argument("--durability", action="store_true", help="fast vs sync per request")
    args = parser.parse_args()
    if args.durability:
        asyncio.run(durability(args.n, args.repeats, args.redis))
    else:
        asyncio.run(measure(args.n, args.repeats, args.redis))


if __name__ == "__main__":
    main()
