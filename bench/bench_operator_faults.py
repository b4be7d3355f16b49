"""Load and faults for the operator service: no 5xx under load, no answer lost or applied twice.

Everything runs on loopback against a throwaway ``redis-server`` on its own port (never the
shared one), ``voice-hitl serve`` in its own process, and worker processes (a
``HumanInputHandler`` bridged to a ``RedisBoard``, started from this file with ``--worker``)
that print every answer their calls read (``result ID TEXT``: what the model would read).

* **load**: ``--clients`` concurrent HTTP clients (default 200) make ``--per-client`` calls
  each (default 50) while answering: 1 answer of every 4 calls (each request answered once,
  plus one in 20 answered twice by two clients at once to race), the rest listings and reads.
  Figures: statuses, 5xx count, p50 / p99 / max of every call, answers/s.
* **faults**, each counting *lost* (200, but the call never read it), *double* (read twice,
  or two 200s for one request) and *taken but refused* (not 200, but the call read it):
  - a worker SIGKILLed while its requests are being answered;
  - a worker withdrawing its calls (``handler.close()``, as ``kit.aclose()``) mid answers;
  - Redis killed mid answers and restarted, with AOF and without persistence; every 503 /
    504 is retried with the same ``Idempotency-Key`` (the retried-503 case) until it ends.

Run it from a checkout with the ``server`` and ``redis`` extras (redis-server on PATH)::

    nice -n 10 .venv/bin/python bench/bench_operator_faults.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import httpx
from operator_service import free_port, serve

TOKEN = "bench-faults-token"
PREFIX = "voice-hitl-faults:"


# -- a throwaway Redis ------------------------------------------------------------------------


class Redis:
    def __init__(self, persistent: bool) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="voice-hitl-faults-redis-")
        self.persistent = persistent
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not on PATH")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--dir", self.dir, "--appendonly", "yes" if self.persistent else "no"]
        if self.persistent:
            args += ["--appendfsync", "always"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2) as sock,
            ):
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.02)
        raise SystemExit("redis-server did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# -- worker processes -------------------------------------------------------------------------


async def worker_main(url: str, worker: str, count: int) -> None:
    """A worker: ``count`` requests; prints ``ready``, ``result ID TEXT`` per answer read; on
    stdin ``close`` withdraws every open call (``handler.close()``); EOF ends it."""
    from voice_hitl import HumanInputHandler
    from voice_hitl.board import BoardBridge, RedisBoard

    def say(*parts: object) -> None:
        sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
        sys.stdout.flush()

    board = RedisBoard(url, prefix=PREFIX, timeout=2.0)
    handler = HumanInputHandler(retention=0)

    async def ask(n: int) -> None:
        pending = await handler.create(
            "AskUserQuestion",
            {"question": f"Question {n}?", "choices": ["red", "blue"]},
            room_id=f"room-{n % 7}",
            channel_id="phone",
            timeout=600,
        )
        with contextlib.suppress(Exception):
            text = await handler.wait(pending.pending_id, timeout=600)
            say("result", pending.pending_id, json.loads(text)["answer"])

    async with BoardBridge(handler, board, worker_id=worker, heartbeat=0.5, reconnect_delay=0.05):
        tasks = [asyncio.create_task(ask(n)) for n in range(count)]
        while len(handler.pending) < count:  # noqa: ASYNC110 - every create() has run
            await asyncio.sleep(0.01)
        say("ready")
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if line.strip() == b"close":
                await handler.close()
                say("closed")
        await handler.close()
        await asyncio.gather(*tasks, return_exceptions=True)
    await board.aclose()


@dataclass
class Worker:
    name: str
    process: asyncio.subprocess.Process
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    read: Counter[str] = field(default_factory=Counter)
    pump: asyncio.Task[None] | None = None

    async def run(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            parts = line.decode().split()
            if parts[:1] == ["ready"]:
                self.ready.set()
            elif parts[:1] == ["closed"]:
                self.closed.set()
            elif parts[:1] == ["result"]:
                self.read[parts[1]] += 1


async def start_worker(url: str, name: str, count: int) -> Worker:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--worker",
        url,
        name,
        str(count),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    worker = Worker(name, process)
    worker.pump = asyncio.create_task(worker.run())
    await asyncio.wait_for(worker.ready.wait(), 120)
    return worker


async def stop_worker(worker: Worker) -> None:
    if worker.process.returncode is None and worker.process.stdin is not None:
        worker.process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(worker.process.wait(), 20)
    if worker.process.returncode is None:
        worker.process.kill()
        await worker.process.wait()
    if worker.pump is not None:
        await worker.pump


@contextlib.asynccontextmanager
async def service(redis_url: str, ack_timeout: float) -> AsyncIterator[str]:
    flags = ("--no-journal", "--heartbeat", "1", "--ack-timeout", str(ack_timeout))
    async with serve(redis_url, PREFIX, TOKEN, flags, ready_tries=400) as url:
        yield url


def client_for(url: str, connections: int) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=url,
        headers={"Authorization": f"Bearer {TOKEN}"},
        limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        timeout=60,
    )


def ms(samples: list[float]) -> str:
    values = sorted(s * 1000 for s in samples)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    return f"p50 {statistics.median(values):.1f} ms  p99 {p99:.1f} ms  max {values[-1]:.1f} ms"


async def open_ids(client: httpx.AsyncClient, expected: int) -> list[str]:
    """The open requests, once all ``expected`` are on the board."""
    for _ in range(600):
        response = await client.get("/v1/requests")
        ids = [r["id"] for r in response.json()["requests"]]
        if len(ids) >= expected:
            return ids
        await asyncio.sleep(0.1)
    raise SystemExit(f"only {len(ids)} of {expected} requests reached the board")


# -- load -------------------------------------------------------------------------------------


async def load(args: argparse.Namespace) -> bool:
    redis = Redis(persistent=False)
    redis.start()
    workers: list[Worker] = []
    try:
        per_worker = args.clients * args.per_client // 5 // args.workers
        workers = [await start_worker(redis.url, f"w{n}", per_worker) for n in range(args.workers)]
        async with service(redis.url, 3.0) as url, client_for(url, args.clients) as client:
            ids = await open_ids(client, per_worker * args.workers)
            random.seed(7)
            random.shuffle(ids)
            racers = set(ids[::20])
            answers = ids + sorted(racers)  # one in 20 answered twice, concurrently
            random.shuffle(answers)
            statuses: Counter[int] = Counter()
            latencies: list[float] = []
            ok: Counter[str] = Counter()
            chunks = [answers[n :: args.clients] for n in range(args.clients)]

            transport_errors = 0
            codes: Counter[str] = Counter()
            first_5xx: Counter[str] = Counter()

            async def call_once(method: str, path: str, **kwargs: object) -> httpx.Response:
                """One call; a dropped keep-alive connection is retried (answers carry an
                Idempotency-Key, so a retry cannot answer twice)."""
                nonlocal transport_errors
                for attempt in range(3):
                    try:
                        return await client.request(method, path, **kwargs)  # type: ignore[arg-type]
                    except httpx.TransportError:
                        transport_errors += 1
                        if attempt == 2:
                            raise
                raise AssertionError("unreachable")

            async def one_client(n: int, mine: list[str]) -> None:
                answering = iter(mine)
                posted = 0
                for call in range(args.per_client):
                    started = time.perf_counter()
                    if call % 4 == 0 and (rid := next(answering, None)) is not None:
                        posted += 1  # one key per intended answer (a raced id may come twice)
                        for _ in range(20):  # a careful client retries 503/504 with its key
                            response = await call_once(
                                "POST",
                                f"/v1/requests/{rid}/answer",
                                json={"answer": "red"},
                                headers={"Idempotency-Key": f"load-{n}-{posted}-{rid}"},
                            )
                            if response.status_code < 500:
                                break
                            first_5xx[response.json()["error"]["code"]] += 1
                        if response.status_code == 200:
                            ok[rid] += 1
                    elif call % 2:
                        response = await call_once("GET", f"/v1/requests?room=room-{call % 7}")
                    else:
                        response = await call_once("GET", f"/v1/requests/{random.choice(ids)}")
                    latencies.append(time.perf_counter() - started)
                    statuses[response.status_code] += 1
                    if response.status_code >= 500:
                        error = response.json()["error"]
                        codes[f"{error['code']}: {error['message'][:70]}"] += 1

            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            await asyncio.gather(*(one_client(n, chunk) for n, chunk in enumerate(chunks)))
            elapsed = time.perf_counter() - started
            load_after = os.getloadavg()[0]
        for worker in workers:
            await stop_worker(worker)
        read: Counter[str] = Counter()
        for worker in workers:
            read.update(worker.read)
        lost = sum(1 for rid in ok if read[rid] == 0)
        double = sum(1 for rid in set(ok) | set(read) if ok[rid] > 1 or read[rid] > 1)
        refused_taken = sum(1 for rid in read if ok[rid] == 0)
        fivexx = sum(n for status, n in statuses.items() if status >= 500)
        print(
            f"load: {args.clients} clients x {args.per_client} calls = {sum(statuses.values())}"
            f" calls in {elapsed:.1f} s ({sum(statuses.values()) / elapsed:.0f} calls/s), "
            f"{len(ids)} requests on {len(workers)} workers"
        )
        print(
            f"  final statuses {dict(sorted(statuses.items()))}; 5xx: {fivexx} "
            f"{dict(codes)}; answers retried after a 5xx: {dict(first_5xx)}; dropped "
            f"keep-alive connections retried: {transport_errors}"
        )
        print(f"  every call: {ms(latencies)}")
        values = sorted(latencies)
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(
            f"SUMMARY load {args.clients}x{args.per_client}: 5xx={fivexx} "
            f"calls={sum(statuses.values())} p50={statistics.median(values) * 1000:.0f}ms "
            f"p99={p99 * 1000:.0f}ms calls/s={sum(statuses.values()) / elapsed:.0f} "
            f"lost={lost} double={double} load_avg={load_before:.1f}->{load_after:.1f} "
            f"cpus={os.cpu_count()}"
        )
        print(
            f"  answers 200: {sum(ok.values())} of {len(answers)} posted ({len(racers)} raced);"
            f" read by the calls: {sum(read.values())}; lost {lost}, double {double}, "
            f"taken but refused {refused_taken}"
        )
        return fivexx == 0 and lost == 0 and double == 0 and refused_taken == 0
    finally:
        for worker in workers:
            if worker.process.returncode is None:
                worker.process.kill()
                await worker.process.wait()
        redis.close()


# -- faults -----------------------------------------------------------------------------------


@dataclass
class Tally:
    ok: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    retries: int = 0

    def report(self, name: str, read: Counter[str], posted: int) -> bool:
        lost = sum(1 for rid in self.ok if read[rid] == 0)
        double = sum(1 for rid in set(self.ok) | set(read) if self.ok[rid] > 1 or read[rid] > 1)
        refused_taken = sum(1 for rid in read if self.ok[rid] == 0)
        print(
            f"{name}: {posted} answers posted, {sum(self.ok.values())} got 200, refusals "
            f"{dict(sorted(self.refusals.items()))}, {self.retries} retries; "
            f"lost {lost}, double {double}, taken but refused {refused_taken}"
        )
        return lost == double == refused_taken == 0


async def answer_until_final(
    client: httpx.AsyncClient, rid: str, tally: Tally, semaphore: asyncio.Semaphore
) -> None:
    """Answer; retry 503/504 and transport errors with the same Idempotency-Key, as a careful
    client would, until the service gives a final answer (at most 60 tries)."""
    async with semaphore:
        headers = {"Idempotency-Key": f"bench-{rid}"}
        for _ in range(60):
            try:
                response = await client.post(
                    f"/v1/requests/{rid}/answer", json={"answer": "red"}, headers=headers
                )
            except httpx.HTTPError:
                tally.retries += 1
                await asyncio.sleep(0.2)
                continue
            if response.status_code in (503, 504):
                tally.retries += 1
                code = response.json()["error"]["code"]
                tally.refusals[f"{response.status_code} {code} (retried)"] += 1
                await asyncio.sleep(0.2)
                continue
            if response.status_code == 200:
                tally.ok[rid] += 1
            else:
                tally.refusals[f"{response.status_code} {response.json()['error']['code']}"] += 1
            return
        tally.refusals["gave up"] += 1


async def run_fault(
    args: argparse.Namespace,
    name: str,
    inject: Callable[[Redis, list[Worker]], Awaitable[None]],
    *,
    prefix: str,
    workers: int,
    ack_timeout: float,
    after: int,
    persistent: bool = False,
) -> bool:
    """Open ``--fault-requests`` requests on each of ``workers`` worker processes, answer them
    all through the service, call ``inject`` once 1/``after`` of them got 200, and report.
    Workers are named ``prefix`` and their number."""
    redis = Redis(persistent=persistent)
    redis.start()
    started: list[Worker] = []
    try:
        for n in range(workers):
            started.append(await start_worker(redis.url, f"{prefix}{n}", args.fault_requests))
        async with service(redis.url, ack_timeout) as url, client_for(url, 64) as client:
            ids = await open_ids(client, workers * args.fault_requests)
            tally = Tally()
            semaphore = asyncio.Semaphore(32)
            answering = asyncio.gather(
                *(answer_until_final(client, rid, tally, semaphore) for rid in ids)
            )
            while sum(tally.ok.values()) < len(ids) // after:  # noqa: ASYNC110 - mid answers
                await asyncio.sleep(0.005)
            await inject(redis, started)
            await answering
        for worker in started:
            await stop_worker(worker)
        return tally.report(name, sum((w.read for w in started), Counter()), len(ids))
    finally:
        for worker in started:
            if worker.process.returncode is None:
                worker.process.kill()
                await worker.process.wait()
        redis.close()


async def fault_kill(args: argparse.Namespace) -> bool:
    async def kill_first(redis: Redis, workers: list[Worker]) -> None:
        workers[0].process.send_signal(signal.SIGKILL)

    name = "worker SIGKILL mid answers"
    return await run_fault(args, name, kill_first, prefix="k", workers=2, ack_timeout=1.0, after=8)


async def fault_withdraw(args: argparse.Namespace) -> bool:
    async def close_handler(redis: Redis, workers: list[Worker]) -> None:
        assert workers[0].process.stdin is not None
        workers[0].process.stdin.write(b"close\n")

    name = "handler.close() (kit.aclose) mid answers"
    return await run_fault(
        args, name, close_handler, prefix="c", workers=1, ack_timeout=3.0, after=4
    )


async def fault_redis(args: argparse.Namespace, persistent: bool) -> bool:
    async def restart_redis(redis: Redis, workers: list[Worker]) -> None:
        await asyncio.to_thread(redis.kill)
        await asyncio.sleep(1.0)  # down for a second while clients keep answering
        await asyncio.to_thread(redis.start)

    name = "Redis killed mid answers, " + ("AOF" if persistent else "no persistence")
    return await run_fault(
        args,
        name,
        restart_redis,
        prefix="r",
        workers=2,
        ack_timeout=2.0,
        after=4,
        persistent=persistent,
    )


async def main(args: argparse.Namespace) -> int:
    results = []
    if not args.faults_only:
        results.append(await load(args))
    if not args.load_only:
        chosen = set(args.fault or ["kill", "withdraw", "aof", "restart"])
        if "kill" in chosen:
            results.append(await fault_kill(args))
        if "withdraw" in chosen:
            results.append(await fault_withdraw(args))
        if "aof" in chosen:
            results.append(await fault_redis(args, persistent=True))
        if "restart" in chosen:
            results.append(await fault_redis(args, persistent=False))
    print("all targets met" if all(results) else "a target was NOT met")
    return 0 if all(results) or not args.check else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(worker_main(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=200, help="concurrent HTTP clients")
    parser.add_argument("--per-client", type=int, default=50, help="calls per client")
    parser.add_argument("--workers", type=int, default=4, help="worker processes for the load")
    parser.add_argument("--fault-requests", type=int, default=250, help="requests per worker")
    parser.add_argument("--faults-only", action="store_true", help="skip the load run")
    parser.add_argument("--load-only", action="store_true", help="skip the fault runs")
    parser.add_argument(
        "--fault",
        action="append",
        choices=("kill", "withdraw", "aof", "restart"),
        help="run only this fault (repeatable; restart: Redis without persistence)",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    sys.exit(asyncio.run(main(parser.parse_args())))
