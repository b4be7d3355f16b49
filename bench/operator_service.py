"""`voice-hitl serve` as a subprocess on a free loopback port, for the operator benchmarks.

Shared by ``bench_operator.py`` and ``bench_operator_faults.py``: one operator (``bench``)
with the given token, ``serve``'s own flags passed through, and the service's URL yielded once
its OpenAPI document answers. Leaving the block stops the process and removes the files.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence

import httpx

from voice_hitl import HumanInputHandler

CLI = "from voice_hitl._cli import main; raise SystemExit(main())"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def serve(
    redis_url: str, prefix: str, token: str, flags: Sequence[str], *, ready_tries: int
) -> AsyncIterator[str]:
    """Run ``voice-hitl serve`` with ``flags``; yield its URL once it answers (``ready_tries``
    polls 50 ms apart)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump({"operators": [{"name": "bench", "token": token}]}, file)
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
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
        file.name,
        *flags,
        stdout=asyncio.subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url) as client:
            for _ in range(ready_tries):
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get("/v1/openapi.json")).status_code == 200:
                        break
                await asyncio.sleep(0.05)
        yield url
    finally:
        process.terminate()
        await process.wait()
        os.unlink(file.name)


async def ask(handler: HumanInputHandler, n: int, *, timeout: float = 600.0) -> str:
    """Open question ``n`` (two choices) on ``handler`` in room "bench"; its pending id."""
    pending = await handler.create(
        "AskUserQuestion",
        {"question": f"Question {n}?", "choices": ["red", "blue"]},
        room_id="bench",
        channel_id="phone",
        timeout=timeout,
    )
    return pending.pending_id
