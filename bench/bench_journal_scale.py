"""Many worker processes journaling into one Redis stream (issue 13's scale figure).

``--processes`` processes (``multiprocessing`` spawn), each with its own ``HumanInputHandler``
and ``Journal`` on the same stream, answer ``--requests`` requests in all (create -> resolve
-> wait, 2 entries each). Timed from a barrier all processes wait at (after start-up and
imports) to the last journal closed; then the whole stream is read and the chain verified.
Prints the wall time, entries per second, re-links (batches that lost the race for the head),
the read and verify times, and checks that every request's story is opened -> settled.

Run: ``python bench/bench_journal_scale.py [--redis redis://127.0.0.1:6379/0]
[--requests 10000] [--processes 4]``. It uses a fresh key prefix and deletes it afterwards.

``--verify N`` measures ``voice-hitl journal verify`` instead: a SQLite journal of N entries
(requests of 2 entries each, opened + settled, with a 3-line transcript) is built in a
temporary folder, then verified by the command in a fresh process; it prints the wall time
and the process's peak memory (max RSS) beside the interpreter's own.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from voice_hitl import HumanInputHandler
from voice_hitl.journal import (
    GENESIS,
    Journal,
    JournalEntry,
    RedisJournalStore,
    SqliteJournalStore,
    digest_of,
    verify_chain,
)

KEY = b"bench-scale-key"


async def _answer(url: str, prefix: str, name: str, count: int, barrier: Any) -> tuple[int, ...]:
    handler = HumanInputHandler(retention=0)
    journal = Journal.on_redis(url, KEY, prefix=prefix)
    journal.attach(handler)
    await asyncio.to_thread(barrier.wait)
    for index in range(count):
        pending = await handler.create("AskUserQuestion", {"question": f"q{index}"}, room_id=name)
        handler.resolve(pending.pending_id, "yes", by=name, via="api")
        await handler.wait(pending.pending_id)
    await asyncio.to_thread(journal.close, 120.0)
    stats = journal.stats
    return stats.written, stats.relinked, stats.failures


def worker(url: str, prefix: str, name: str, count: int, barrier: Any, results: Any) -> None:
    results.put((name, *asyncio.run(_answer(url, prefix, name, count, barrier))))


def clean(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    for start in range(0, len(keys), 1000):
        client.delete(*keys[start : start + 1000])
    client.close()


def build(path: Path, count: int, batch: int = 5000) -> None:
    """A journal of ``count`` entries, written through the store (and anchored as a journal's
    writer would: one closed checkpoint at the end)."""
    store = SqliteJournalStore(path)
    seq, prev = 0, GENESIS
    transcript = [{"role": "user", "text": f"line {n} of what the caller said"} for n in range(3)]
    while seq < count:
        entries = []
        for _ in range(min(batch, count - seq)):
            seq += 1
            request_id = f"hi_bench_{seq // 2}"
            at = f"2026-05-01T09:{seq // 60000 % 60:02d}:00+00:00"
            if seq % 2:
                kind = "opened"
                data: dict[str, object] = {
                    "tool": "AskUserQuestion",
                    "arguments": {"question": f"Approve payment {seq}?"},
                    "room": "room-1",
                    "context": {"transcript": transcript},
                }
            else:
                kind, data = "settled", {"outcome": "answered", "text": "yes", "by": "ann"}
            digest = digest_of(KEY, seq, request_id, at, kind, data, prev)
            entries.append(JournalEntry(seq, request_id, at, kind, data, prev, digest))
            prev = digest
        store.append(entries)
    store.close()
    journal = Journal(SqliteJournalStore(path), KEY)  # signs the anchor: open, then closed
    journal.start()
    journal.close()


_CLI = "import sys; from voice_hitl._cli import main; sys.exit(main(sys.argv[1:]))"


def timed(argv: list[str], python: str = sys.executable) -> tuple[float, float, float, int, str]:
    """Run the CLI in a fresh process: seconds, CPU seconds, peak RSS in MB, exit code, its
    last line."""
    env = {**os.environ, "VOICE_HITL_JOURNAL_KEY": KEY.decode()}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-c", _CLI, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    out = proc.stdout.read() if proc.stdout else ""
    if proc.stdout:
        proc.stdout.close()
    lines = out.strip().splitlines()
    last = lines[-1] if lines else ""
    cpu = usage.ru_utime + usage.ru_stime
    return took, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), last


def verify_scale(count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "j.sqlite3"
        start = time.perf_counter()
        build(path, count)
        size = path.stat().st_size / 1e6
        took = time.perf_counter() - start
        print(f"built            {took:8.1f} s: {count} entries, {size:.0f} MB")
        base = timed(["--help"])[2]
        print(f"interpreter      {base:8.0f} MB peak RSS (voice-hitl --help)")
        took, cpu, peak, code, last = timed(["journal", "verify", "--journal", str(path)])
        print(
            f"verify           {took:8.1f} s ({cpu:.1f} CPU-s), {peak:6.0f} MB peak RSS,"
            f" exit {code}: {last}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="the Redis server")
    parser.add_argument("--requests", type=int, default=10_000, help="requests in all")
    parser.add_argument("--processes", type=int, default=4, help="worker processes")
    parser.add_argument("--verify", type=int, default=0, metavar="N", help="verify N entries")
    args = parser.parse_args()
    if args.verify:
        verify_scale(args.verify)
        return
    per = args.requests // args.processes
    prefix = f"voice-hitl-bench:{time.time_ns()}"
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(args.processes + 1)
    results = spawn.Queue()
    started = time.perf_counter()
    procs = [
        spawn.Process(target=worker, args=(args.redis, prefix, f"w{n}", per, barrier, results))
        for n in range(args.processes)
    ]
    try:
        for proc in procs:
            proc.start()
        barrier.wait()
        go = time.perf_counter()
        reports = [results.get(timeout=300) for _ in procs]
        done = time.perf_counter()
        for proc in procs:
            proc.join()
        store = RedisJournalStore(args.redis, prefix=prefix)
        entries = store.read()
        read = time.perf_counter()
        problems = verify_chain(entries, KEY)
        head = store.head_problem(entries)
        verified = time.perf_counter()
        store.close()
    finally:
        clean(args.redis, prefix)
    stories: dict[str, list[str]] = {}
    for entry in entries:
        stories.setdefault(entry.request_id, []).append(entry.kind)
    shapes = Counter(tuple(kinds) for kinds in stories.values())
    written = sum(r[1] for r in reports)
    relinked, failures = sum(r[2] for r in reports), sum(r[3] for r in reports)
    took = done - go
    print(f"{args.processes} processes x {per} requests on {args.redis}")
    print(f"start-up         {go - started:8.2f} s (spawn, imports, connections)")
    print(f"calls + journal  {took:8.2f} s for {written} entries: {written / took:.0f}/s")
    print(f"re-links         {relinked:8d}  failures {failures}")
    print(f"read back        {read - done:8.2f} s ({len(entries)} entries)")
    print(f"verify           {verified - read:8.2f} s: {len(problems)} problems")
    print(f"head key         {head or 'matches the stream'}")
    print(f"stories          {dict(shapes)}")
    assert not problems and head is None and len(entries) == written == 2 * per * args.processes
    assert shapes == {("opened", "settled"): per * args.processes}


if __name__ == "__main__":
    main()
