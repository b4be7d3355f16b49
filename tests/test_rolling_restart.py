"""Rolling restarts with real processes on Redis: ``voice-hitl serve`` and a worker stopped with
SIGTERM while answers are in flight. Every answer told 200 reached the call, the processes exit
0, and ``voice-hitl journal verify`` finds every writer closed (issue 47, item 4).

The test holds the worker's takes (``operator_worker.py ... hold``: each take waits for
SIGUSR1), so the answers are in flight for certain when the signal lands: no sleep decides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from redis_rig import free_port

HERE = Path(__file__).resolve().parent
TOKEN = "rolling-restart-token"
KEY = "rolling-restart-journal-key"
CLI = "from voice_hitl._cli import main; raise SystemExit(main())"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

pytestmark = pytest.mark.timeout(120)


@dataclass
class Child:
    """A child process whose stdout lines are collected; ``seen(text)`` waits for a line."""

    process: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    reader: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.process.stdout is not None
        async for raw in self.process.stdout:
            async with self.changed:
                self.lines.append(raw.decode().rstrip("\n"))
                self.changed.notify_all()

    async def seen(self, prefix: str, count: int = 1) -> list[str]:
        """The first ``count`` lines starting with ``prefix``, once there are that many."""

        def found() -> list[str]:
            return [line for line in self.lines if line.startswith(prefix)]

        async with asyncio.timeout(30), self.changed:
            await self.changed.wait_for(lambda: len(found()) >= count)
        return found()[:count]

    async def exit_code(self) -> int:
        async with asyncio.timeout(60):
            code = await self.process.wait()
        if self.reader is not None:
            await self.reader
        return code


async def start(*argv: str) -> Child:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "VOICE_HITL_JOURNAL_KEY": KEY},
    )
    child = Child(process)
    child.reader = asyncio.create_task(child.read())
    return child


@contextlib.asynccontextmanager
async def children() -> AsyncIterator[list[Child]]:
    """Children started in the block; any still running at the end is killed."""
    started: list[Child] = []
    try:
        yield started
    finally:
        for child in started:
            if child.process.returncode is None:
                child.process.kill()
                await child.process.wait()
            if child.reader is not None:
                with contextlib.suppress(Exception):
                    await child.reader


async def serve(
    redis_url: str, prefix: str, tmp: Path, running: list[Child]
) -> tuple[Child, str]:
    operators = tmp / "operators.json"
    operators.write_text(json.dumps({"operators": [{"name": "ops", "token": TOKEN}]}))
    port = free_port()
    child = await start(
        "-c",
        CLI,
        "serve",
        "--port",
        str(port),
        "--redis",
        redis_url,
        "--prefix",
        prefix,
        "--operators",
        str(operators),
        "--heartbeat",
        "1",
        "--ack-timeout",
        "20",
        "--journal",
        str(tmp / "service.sqlite3"),
    )
    running.append(child)
    await child.seen("voice-hitl operator service: ready")
    return child, f"http://127.0.0.1:{port}"


async def verify(journal: Path) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI,
        "journal",
        "verify",
        "--journal",
        str(journal),
        env={**os.environ, "VOICE_HITL_JOURNAL_KEY": KEY},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(60):
        out, _ = await process.communicate()
    return process.returncode or 0, out.decode()


async def in_flight(client: httpx.AsyncClient, base: str, count: int) -> None:
    """Until the service counts ``count`` answers under way (its health says so)."""
    async with asyncio.timeout(60):
        while True:  # another process: its state is polled, no timing is assumed
            if (await client.get(f"{base}/v1/health")).json()["answers_in_flight"] >= count:
                return
            await asyncio.sleep(0.02)


def results(worker: Child) -> dict[str, str]:
    found = {}
    for line in worker.lines:
        if line.startswith("result "):
            _, rid, text = line.split(" ", 2)
            found[rid] = json.loads(text)["answer"]
    return found


async def test_sigterm_mid_answers_applies_every_200_exits_0_and_closes_the_journals(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    async with children() as running, httpx.AsyncClient(headers=AUTH, timeout=60) as client:
        worker = await start(
            str(HERE / "operator_worker.py"),
            redis_url,
            redis_prefix,
            "w-roll",
            "12",
            "1",
            str(tmp_path / "worker.sqlite3"),
            "hold",
        )
        running.append(worker)
        await worker.seen("ready")
        service, base = await serve(redis_url, redis_prefix, tmp_path, running)
        assert (await client.get(f"{base}/v1/health")).json()["status"] == "ok"
        ids = sorted(r["id"] for r in (await client.get(f"{base}/v1/requests")).json()["requests"])
        assert len(ids) == 12

        # 1. The service, with answers in flight (claimed, held at the worker's take).
        def answer(rid: str, base: str) -> asyncio.Task[httpx.Response]:
            url = f"{base}/v1/requests/{rid}/answer"
            return asyncio.create_task(client.post(url, json={"answer": "red"}))

        first = {rid: answer(rid, base) for rid in ids[:4]}
        await worker.seen("holding")  # the pump takes one claim at a time: the others wait
        await in_flight(client, base, 4)
        service.process.send_signal(signal.SIGTERM)
        await service.seen("voice-hitl operator service: stopping")
        refused = await client.post(f"{base}/v1/requests/{ids[4]}/answer", json={"answer": "red"})
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"]["code"] == "shutting_down"
        assert refused.headers["Retry-After"] == "1"
        health = await client.get(f"{base}/v1/health")
        assert health.status_code == 503
        assert health.json() == {"status": "draining", "answers_in_flight": 4}
        worker.process.send_signal(signal.SIGUSR1)  # the held takes land
        told = {rid: await task for rid, task in first.items()}
        assert await service.exit_code() == 0, service.lines
        assert [r.status_code for r in told.values()] == [200] * 4, [r.text for r in told.values()]
        await worker.seen("result", 4)
        read = results(worker)
        assert all(read[rid] == "red" for rid in told)  # every 200 reached the call

        # 2. The same journal, restarted service (the rolling restart's second half); the
        # worker is stopped while one answer is being taken and others wait behind it.
        service, base = await serve(redis_url, redis_prefix, tmp_path, running)
        worker.process.send_signal(signal.SIGUSR2)
        await worker.seen("armed")
        worker_held = len([line for line in worker.lines if line.startswith("holding")])
        later = {rid: answer(rid, base) for rid in ids[4:8]}
        await worker.seen("holding", worker_held + 1)
        await in_flight(client, base, 4)
        worker.process.send_signal(signal.SIGTERM)
        await worker.seen("stopping")
        worker.process.send_signal(signal.SIGUSR1)  # the take under way lands; no other starts
        assert await worker.exit_code() == 0, worker.lines
        told = {rid: await task for rid, task in later.items()}
        read = results(worker)
        ok = [rid for rid, response in told.items() if response.status_code == 200]
        assert len(ok) == 1 and read.get(ok[0]) == "red", (told, read)
        for rid, response in told.items():
            if response.status_code != 200:  # not taken: the call withdrew it, or it lapsed
                assert response.status_code in (409, 503), response.text
                assert rid not in read
        assert worker.lines[-1].startswith("bye ")
        service.process.send_signal(signal.SIGTERM)
        assert await service.exit_code() == 0
        # Both services' writers (one file) and the worker's closed: no "may be missing".
        verdicts = await asyncio.gather(
            verify(tmp_path / "service.sqlite3"), verify(tmp_path / "worker.sqlite3")
        )
        for code, out in verdicts:
            assert code == 0 and "chain intact" in out and "missing" not in out, out
