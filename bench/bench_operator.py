"""Benchmark the operator path: an answer given over HTTP until the worker's tool call has it.

What is measured (loopback, one Redis, ``voice-hitl serve`` in its own process):

* **answer latency**: a worker (this process: a ``HumanInputHandler`` bridged to a
  ``RedisBoard``) opens a request; once it is on the board, the clock starts, an operator
  ``POST /v1/requests/{id}/answer`` is sent (httpx, keep-alive) and the clock stops when the
  worker's ``wait()`` returns the answer (what the model reads). p50 / p99 / max over ``-n``
  answers, one at a time. Targets: p50 < 5 ms, p99 < 20 ms.
* **answers/s**: 1,000 open requests answered by ``--concurrency`` concurrent HTTP clients.
* **listings/s**: ``GET /v1/requests`` with 1,000 open requests, ``--concurrency`` clients.
* **in-process**: the same answer given with ``handler.resolve()`` in the worker's own process
  (no board, no HTTP), for scale.

Run it from a checkout with the ``server`` and ``redis`` extras and a Redis server::

    nice -n 10 .venv/bin/python bench/bench_operator.py --redis redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator

import httpx
from operator_service import ask, serve

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, RedisBoard

TOKEN = "bench-operator-token"


@contextlib.asynccontextmanager
async def service(redis: str, prefix: str, durability: str) -> AsyncIterator[str]:
    journal_dir = tempfile.mkdtemp(prefix="voice-hitl-bench-journal-")
    journal = os.path.join(journal_dir, "journal.sqlite3")
    flags = ("--journal", journal, "--journal-durability", durability)
    try:
        async with serve(redis, prefix, TOKEN, flags, ready_tries=200) as url:
            yield url
    finally:
        shutil.rmtree(journal_dir, ignore_errors=True)


def figures(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):.2f} ms  p99 {p99:.2f} ms  max {ms[-1]:.2f} ms"




async def answer_latency(
    client: httpx.AsyncClient, handler: HumanInputHandler, bridge: BoardBridge, n: int
) -> list[float]:
    samples = []
    for i in range(n):
        rid = await ask(handler, i)
        await bridge.drain()
        started = time.perf_counter()
        waiting = asyncio.create_task(handler.wait(rid))
        response = await client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"})
        await waiting
        samples.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return samples


async def throughput(
    client: httpx.AsyncClient,
    handler: HumanInputHandler,
    bridge: BoardBridge,
    open_count: int,
    concurrency: int,
    listings: int,
) -> tuple[float, float]:
    ids = [await ask(handler, i) for i in range(open_count)]
    waits = [asyncio.create_task(handler.wait(rid)) for rid in ids]
    await bridge.drain()
    semaphore = asyncio.Semaphore(concurrency)

    async def listing() -> None:
        async with semaphore:
            response = await client.get("/v1/requests")
            assert len(response.json()["requests"]) == open_count

    started = time.perf_counter()
    await asyncio.gather(*(listing() for _ in range(listings)))
    listings_per_s = listings / (time.perf_counter() - started)

    async def answer(rid: str) -> None:
        async with semaphore:
            response = await client.post(f"/v1/requests/{rid}/answer", json={"answer": "blue"})
            assert response.status_code == 200

    started = time.perf_counter()
    await asyncio.gather(*(answer(rid) for rid in ids))
    await asyncio.gather(*waits)
    answers_per_s = open_count / (time.perf_counter() - started)
    return answers_per_s, listings_per_s


async def in_process(n: int) -> list[float]:
    handler = HumanInputHandler()
    samples = []
    for i in range(n):
        rid = await ask(handler, i)
        started = time.perf_counter()
        waiting = asyncio.create_task(handler.wait(rid))
        await asyncio.sleep(0)
        handler.resolve(rid, '{"answer": "red"}')
        await waiting
        samples.append(time.perf_counter() - started)
    return samples


async def main(args: argparse.Namespace) -> int:
    prefix = f"voice-hitl-bench:{uuid.uuid4().hex[:8]}:"
    board = RedisBoard(args.redis, prefix=prefix)
    handler = HumanInputHandler()
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=32)
    try:
        async with (
            service(args.redis, prefix, args.journal_durability) as url,
            BoardBridge(handler, board, worker_id="bench-worker") as bridge,
            httpx.AsyncClient(
                base_url=url,
                headers={"Authorization": f"Bearer {TOKEN}"},
                limits=limits,
                timeout=30,
            ) as client,
        ):
            await answer_latency(client, handler, bridge, 50)  # warm-up
            latency = await answer_latency(client, handler, bridge, args.n)
            answers, listings = await throughput(
                client, handler, bridge, args.open, args.concurrency, args.listings
            )
        local = await in_process(args.n)
    finally:
        await handler.close()
        await board.aclose()
        cleanup = RedisBoard(args.redis, prefix=prefix)
        keys = [k async for k in cleanup._redis.scan_iter(match=f"{prefix}*", count=1000)]
        if keys:
            await cleanup._redis.delete(*keys)
        await cleanup.aclose()
    print(
        f"operator path, loopback, Redis {args.redis}, service in its own process, journal "
        f"{args.journal_durability}, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"  answer via HTTP -> tool result at the worker ({args.n}): {figures(latency)}")
    print(f"  in-process handler.resolve -> wait() returns  ({args.n}): {figures(local)}")
    print(
        f"  with {args.open} open requests, {args.concurrency} concurrent clients: "
        f"{answers:.0f} answers/s, {listings:.1f} listings/s (each listing returns {args.open})"
    )
    ms = sorted(latency)
    p50, p99 = statistics.median(ms) * 1000, ms[int(len(ms) * 0.99)] * 1000
    met = p50 < 5 and p99 < 20
    print(f"  targets p50 < 5 ms, p99 < 20 ms: {'met' if met else 'NOT met'}")
    print(
        f"SUMMARY bench_operator journal={args.journal_durability} answer p50={p50:.2f}ms "
        f"p99={p99:.2f}ms answers/s={answers:.0f} listings/s={listings:.1f} "
        f"load={os.getloadavg()[0]:.1f}"
    )
    return 0 if met or not args.check else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("-n", type=int, default=1000, help="answers timed one at a time")
    parser.add_argument("--open", type=int, default=1000, help="open requests for throughput")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent HTTP clients")
    parser.add_argument("--listings", type=int, default=200, help="listings to time")
    parser.add_argument(
        "--journal-durability",
        choices=("fast", "sync"),
        default="fast",
        help="the service's journal durability (serve --journal-durability)",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    sys.exit(asyncio.run(main(parser.parse_args())))
