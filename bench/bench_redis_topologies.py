"""The board on one Redis, a 3-master Redis Cluster and a Sentinel-watched master (issue 47).

Everything runs on loopback against throwaway ``redis-server`` processes on free ports (the
rig of ``tests/redis_rig.py``), never the shared server. Each figure is printed with the
machine's load average (1 min) when it was taken.

* **answers** (``--answers``, default 800): 16 workers (each a ``HumanInputHandler`` bridged to
  its own ``RedisBoard`` client, in this process) and 2 ``voice-hitl serve`` processes; 16
  concurrent HTTP clients answer the open requests, alternating between the services. Figures:
  answers/s, p50 / p99 of ``POST .../answer`` until 200 (the call took it), on one Redis and on
  the cluster.
* **failover** (``--failover``, default 60 requests): master + replica + 3 sentinels, 2
  workers journaling on it, one service with ``--min-replicas 1``; the master is SIGKILLed
  while half the answers are in flight, the sentinels promote the replica, the old master
  rejoins as a replica; clients retry 503 / 504 with their key. Counts: lost, applied twice,
  shown open though settled, "not taken" though delivered, journal entries missing without a
  gap; and the seconds from the kill to the next 200.
* **re-publish** (``--republish 20000,100000``): one worker with N open requests whose
  heartbeat lapsed (a pause) re-publishes them all; the time it takes, the heartbeats sent
  meanwhile and how many times it re-published (1: it resettled once).

Run it from a checkout with the ``server`` and ``redis`` extras (redis-server, redis-cli on
PATH)::

    nice -n 10 .venv/bin/python bench/bench_redis_topologies.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from operator_service import ask, serve

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from redis_rig import (
    start_redis_cluster,
    start_redis_server,
    start_sentinel_group,
)

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, BoardStatus, RedisBoard
from voice_hitl.journal import Journal, RedisJournalStore, verify_chain

TOKEN = "bench-topologies-token"
KEY = b"bench-topologies-journal-key"
PREFIX = "bench-topo:"


def load() -> str:
    return f"(load {os.getloadavg()[0]:.2f})"


def percentiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):.1f} ms  p99 {p99:.1f} ms"




@contextlib.asynccontextmanager
async def workers(url: str, count: int, **options: Any) -> AsyncIterator[list[BoardBridge]]:
    boards = [RedisBoard(url, prefix=PREFIX, **options) for _ in range(count)]
    bridges: list[BoardBridge] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            for board in boards:
                bridge = BoardBridge(HumanInputHandler(), board, reconnect_delay=0.05)
                bridges.append(await stack.enter_async_context(bridge))
            yield bridges
            for bridge in bridges:
                await bridge.handler.close()
    finally:
        for board in boards:
            await board.aclose()


async def answers(url: str, total: int) -> str:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        workers(url, 16) as bridges,
        serve(url, PREFIX, TOKEN, ("--no-journal",), ready_tries=400) as one,
        serve(url, PREFIX, TOKEN, ("--no-journal",), ready_tries=400) as two,
        httpx.AsyncClient(base_url=one, headers=auth, timeout=30) as first,
        httpx.AsyncClient(base_url=two, headers=auth, timeout=30) as second,
    ):
        ids = [await ask(bridges[n % 16].handler, n, timeout=3600) for n in range(total)]
        for bridge in bridges:
            await bridge.drain()
        samples: list[float] = []
        statuses: Counter[str] = Counter()
        semaphore = asyncio.Semaphore(16)

        async def answer(n: int, rid: str) -> None:
            client = first if n % 2 else second
            async with semaphore:
                started = time.perf_counter()
                response = await client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"})
                samples.append(time.perf_counter() - started)
            code = response.json()["error"]["code"] if response.status_code >= 400 else ""
            statuses[f"{response.status_code} {code}".strip()] += 1

        started = time.perf_counter()
        await asyncio.gather(*(answer(n, rid) for n, rid in enumerate(ids)))
        rate = total / (time.perf_counter() - started)
        delivered = sum(bridge.delivered for bridge in bridges)
    replies = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
    return (
        f"{rate:.0f} answers/s  {percentiles(samples)}  delivered {delivered}/{total}"
        f"  replies {replies} {load()}"
    )


async def failover(total: int) -> str:
    group = await asyncio.to_thread(start_sentinel_group, for_failover=True)
    url, auth = group.url, {"Authorization": f"Bearer {TOKEN}"}
    journal = Journal.on_redis(url, KEY, prefix="bench-failover-journal", retry_interval=0.05)
    counts: Counter[str] = Counter()
    try:
        async with (
            workers(url, 2, timeout=1.0, min_replicas=1, replica_timeout=0.5) as bridges,
            serve(
                url, PREFIX, TOKEN, ("--no-journal", "--min-replicas", "1"), ready_tries=400
            ) as base,
            httpx.AsyncClient(base_url=base, headers=auth, timeout=30) as client,
        ):
            for bridge in bridges:
                journal.attach(bridge.handler)
            ids = [await ask(bridges[n % 2].handler, n, timeout=3600) for n in range(total)]
            owner = {rid: bridges[n % 2].handler for n, rid in enumerate(ids)}
            calls = {rid: asyncio.create_task(owner[rid].wait(rid)) for rid in ids}
            for bridge in bridges:
                await bridge.drain()
            first_200_after: list[float] = []
            killed_at = 0.0

            async def answer(rid: str) -> None:
                while True:
                    response = await client.post(
                        f"/v1/requests/{rid}/answer",
                        json={"answer": "red"},
                        headers={"Idempotency-Key": f"k-{rid}"},
                    )
                    code = response.json()["error"]["code"] if response.status_code >= 400 else ""
                    counts[f"{response.status_code} {code}".strip()] += 1
                    pending = owner[rid].get(rid)
                    if code == "not_taken" and (pending is None or pending.status != "pending"):
                        counts["not taken though delivered"] += 1
                    if response.status_code == 200 and killed_at:
                        first_200_after.append(time.monotonic() - killed_at)
                    if response.status_code not in (503, 504):
                        if response.status_code != 200:
                            counts["lost"] += 1
                        return
                    await asyncio.sleep(0.05)

            half = total // 2
            await asyncio.gather(*(answer(rid) for rid in ids[:half]))
            in_flight = [asyncio.create_task(answer(rid)) for rid in ids[half:]]
            old = group.master.port
            killed_at = time.monotonic()
            await asyncio.to_thread(group.master.kill)
            new = await asyncio.to_thread(group.wait_for_switch, old)
            switched = time.monotonic() - killed_at
            await asyncio.to_thread(group.master.restart)
            await asyncio.to_thread(group.wait_for_replica, new)
            await asyncio.gather(*in_flight)
            results = await asyncio.wait_for(asyncio.gather(*calls.values()), 60)
            for bridge in bridges:
                await bridge.wait_connected()
                await bridge.drain()
            counts["lost"] += sum(json.loads(r)["answer"] != "red" for r in results)
            counts["applied twice"] = sum(b.delivered for b in bridges) - total
            board = RedisBoard(url, prefix=PREFIX)
            try:
                records = [await board.get(rid) for rid in ids]
            finally:
                await board.aclose()
            counts["shown open though settled"] = sum(
                r is None or r.status is not BoardStatus.ANSWERED for r in records
            )
        await asyncio.to_thread(journal.close)
        reader = RedisJournalStore(url, prefix="bench-failover-journal", read_only=True)
        try:
            entries = await asyncio.to_thread(reader.read)
        finally:
            reader.close()
    finally:
        await asyncio.to_thread(group.stop)
    settled = Counter(e.request_id for e in entries if e.kind == "settled")
    gaps = sum(e.kind == "gap" for e in entries)
    missing = sum(settled[rid] != 1 for rid in ids)
    problems = verify_chain(entries, KEY)
    wanted = ["lost", "applied twice", "shown open though settled", "not taken though delivered"]
    figures = "  ".join(f"{name}: {counts[name]}" for name in wanted)
    replies = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()) if k[0].isdigit())
    return (
        f"{total} answers, master SIGKILLed with {total - total // 2} in flight {load()}\n"
        f"  {figures}  journal entries missing without a gap: {0 if gaps else missing}"
        f" (missing {missing}, gap entries {gaps}, chain problems {len(problems)})\n"
        f"  sentinels switched after {switched:.1f} s; first 200 after the kill "
        f"{min(first_200_after, default=float('nan')):.1f} s; replies: {replies}"
    )


class CountingBoard(RedisBoard):
    """Counts heartbeats made while a re-publish is running."""

    republishing = 0
    beats_meanwhile = 0
    revived: asyncio.Event

    async def publish_many(self, requests: Any, *, revive: bool = False) -> Any:
        self.republishing += revive
        if revive:
            self.revived.set()
        try:
            return await super().publish_many(requests, revive=revive)
        finally:
            self.republishing -= revive

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        self.beats_meanwhile += bool(self.republishing)
        return await super().heartbeat(worker, ttl)


async def republish(url: str, count: int) -> str:
    board = CountingBoard(url, prefix=f"{PREFIX}re{count}:", max_connections=64)
    board.revived = asyncio.Event()
    handler = HumanInputHandler()
    for n in range(count):  # open before the bridge: entering it publishes them all
        await handler.create_detached("AskUserQuestion", {"question": f"q{n}"})
    try:
        started = time.perf_counter()
        async with BoardBridge(
            handler, board, heartbeat=1.0, misses=3, connect_timeout=3600
        ) as bridge:
            entered = time.perf_counter() - started
            board.revived.clear()
            board.beats_meanwhile = 0
            before = bridge.reconnects
            while not board.revived.is_set():  # (again if the bridge beat within the 1 ms)
                await board.heartbeat(bridge.worker_id, 0.001)  # paused: its beat lapsed
                with contextlib.suppress(TimeoutError):  # the bridge's own beat finds it
                    await asyncio.wait_for(board.revived.wait(), 3)
            started = time.perf_counter()
            await bridge.wait_connected()
            took = time.perf_counter() - started
            await asyncio.sleep(5)  # does it lapse again?
            times = bridge.reconnects - before
            beats = board.beats_meanwhile
            await handler.close()
    finally:
        await board.aclose()
    return (
        f"{count} open: first publish (entering the bridge) {entered:.1f} s; after a lapse "
        f"re-published in {took:.1f} s with {beats} heartbeats meanwhile, "
        f"re-published {times} time(s) {load()}"
    )


async def main(args: argparse.Namespace) -> int:
    for _ in range(args.rounds if args.answers else 0):  # alternated: the load drifts
        cluster = await asyncio.to_thread(start_redis_cluster)
        try:
            print("3-master cluster:", await answers(cluster.url, args.answers), flush=True)
        finally:
            cluster.stop()
        single = await asyncio.to_thread(start_redis_server)
        try:
            print("one Redis       :", await answers(single.url, args.answers), flush=True)
        finally:
            single.stop()
    if args.failover:
        print("failover:", await failover(args.failover), flush=True)
    for count in (int(n) for n in args.republish.split(",") if n):
        server = await asyncio.to_thread(start_redis_server)
        try:
            print("re-publish:", await republish(server.url, count), flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--answers", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=2, help="answers: cluster, one, ...")
    parser.add_argument("--failover", type=int, default=60)
    parser.add_argument("--republish", default="20000,100000")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
