"""The webhook delivery process boundary: a delivery process that dies is restarted and what
it had not confirmed becomes counted dead letters; one that sends a bad message is stopped
with a clear error (never a hang); closing, or the service being killed, leaves no process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import signal
import sys
from collections.abc import AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from voice_hitl.board import BoardRequest
from voice_hitl.service import Webhooks, WebhookSubscription, _webhook_process
from voice_hitl.service._serve import running_service
from voice_hitl.service._webhook_process import DeliveryProcess

SECRET = "receiver-secret-0123456789"
REQUEST = BoardRequest("r1", "ConfirmAction", {"action": "x"}, "w", 0.0)


class Receiver:
    """Takes POSTs to /{name}; holds them while ``hold`` is not set."""

    def __init__(self) -> None:
        self.hold = asyncio.Event()
        self.arrived = asyncio.Event()
        self.got = 0

    async def endpoint(self, request: Request) -> Response:
        await request.body()
        self.got += 1
        self.arrived.set()
        await self.hold.wait()
        return Response("ok")


@contextlib.asynccontextmanager
async def receiver() -> AsyncIterator[tuple[str, Receiver]]:
    got = Receiver()
    app = Starlette(routes=[Route("/{name}", got.endpoint, methods=["POST"])])
    async with running_service(app) as url:
        try:
            yield url, got
        finally:
            got.hold.set()  # before the server stops: it waits for the requests it holds


async def until(process: DeliveryProcess, up: bool) -> None:
    async with asyncio.timeout(30):
        while process.up is not up:
            await process.changed.wait()
            process.changed.clear()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_delivery_process_that_dies_is_restarted_and_nothing_is_lost_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with receiver() as (url, got):
        hooks = Webhooks([WebhookSubscription("hang", f"{url}/hang", SECRET)], timeout=30)
        await hooks.start()
        try:
            process = hooks.process
            assert process is not None and process.pid is not None
            first = process.pid
            assert hooks.offer("request.opened", REQUEST)
            await got.arrived.wait()  # the process is delivering it; the receiver holds it
            os.kill(first, signal.SIGKILL)
            await until(process, False)
            # The event it never confirmed is a dead letter, with the reason.
            [lost] = hooks.dead_letters()
            assert "delivery process died" in lost.error and lost.event["type"] == "request.opened"
            # Offered while no process runs: a dead letter at once, counted.
            assert hooks.offer("request.settled", REQUEST) is False
            assert "was not running" in hooks.dead_letters()[-1].error
            assert hooks.unsent == 2 and hooks.lanes()["hang"]["waiting"] == 0
            await hooks.drain()  # nothing left to wait for
            await until(process, True)
            assert process.restarts == 1 and process.pid not in (None, first) and gone(first)
            assert any("process died" in r.getMessage() for r in caplog.records)
            got.hold.set()
            assert hooks.retry(lost.id)  # the new process delivers it (same event id)
            await hooks.drain()
            assert hooks.delivered == 1 and [d.id for d in hooks.dead_letters()] != [lost.id]
        finally:
            await hooks.aclose()


BAD_WORKER = r"""
import json, struct, sys
def frame(m):
    b = json.dumps(m).encode(); sys.stdout.buffer.write(struct.pack(">I", len(b)) + b)
    sys.stdout.buffer.flush()
def read():
    n, = struct.unpack(">I", sys.stdin.buffer.read(4)); return json.loads(sys.stdin.buffer.read(n))
read()
frame({"t": "ready"})
read()
sys.stdout.buffer.write(b"\x00\x00\x00\x05hello"); sys.stdout.buffer.flush()
sys.stdin.buffer.read()
"""


async def test_a_bad_message_from_the_delivery_process_is_a_clear_error_not_a_hang(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_webhook_process, "WORKER_ARGV", [sys.executable, "-c", BAD_WORKER])
    hooks = Webhooks([WebhookSubscription("chat", "http://127.0.0.1:9/h", SECRET)])
    await hooks.start()
    try:
        process = hooks.process
        assert process is not None
        hooks.offer("request.opened", REQUEST)
        await until(process, False)
        await hooks.drain()  # returns: the event is a dead letter, with what was wrong
        [dead] = hooks.dead_letters()
        assert "sent a bad message" in dead.error and "not JSON" in dead.error
        await until(process, True)  # restarted once; it misbehaves again: left down, logged
        hooks.offer("request.opened", REQUEST)
        await until(process, False)
        await hooks.drain()
        assert process.restarts == 1 and len(hooks.dead_letters()) == 2
        assert any("not restarting" in r.getMessage() for r in caplog.records)
        assert hooks.offer("request.opened", REQUEST) is False
        assert "was not running" in hooks.dead_letters()[-1].error
    finally:
        await hooks.aclose()


async def test_a_delivery_process_that_cannot_start_fails_the_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_webhook_process, "WORKER_ARGV", [sys.executable, "-c", "print('hi')"])
    hooks = Webhooks([WebhookSubscription("chat", "http://127.0.0.1:9/h", SECRET)])
    with pytest.raises(RuntimeError, match="did not start"):
        await hooks.start()
    await hooks.aclose()


async def test_closing_flushes_for_a_bounded_time_and_leaves_no_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with receiver() as (url, got):
        hooks = Webhooks(
            [WebhookSubscription("hang", f"{url}/hang", SECRET)], timeout=30, close_timeout=0.2
        )
        with caplog.at_level(logging.WARNING):
            await hooks.start()
            assert hooks.process is not None and hooks.process.pid is not None
            pid = hooks.process.pid
            hooks.offer("request.opened", REQUEST)
            await got.arrived.wait()
            await hooks.aclose()  # the receiver never answers: bounded by close_timeout
        assert gone(pid)
        assert any("1 event(s) not delivered" in r.getMessage() for r in caplog.records)


SERVICE = r"""
import asyncio, sys
from voice_hitl.service import Webhooks, WebhookSubscription
async def main():
    hooks = Webhooks([WebhookSubscription("chat", "http://127.0.0.1:9/h", "s" * 16)])
    await hooks.start()
    print(hooks.process.pid, flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


async def test_a_killed_service_leaves_no_delivery_process() -> None:
    service = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SERVICE, stdout=asyncio.subprocess.PIPE
    )
    assert service.stdout is not None
    try:
        async with asyncio.timeout(30):
            pid = int(await service.stdout.readline())
        child = os.pidfd_open(pid)
    finally:
        service.kill()
        await service.wait()
    try:
        # Its stdin ends with the service: it flushes (nothing) and exits by itself.
        ended = await asyncio.to_thread(select.select, [child], [], [], 30)
        assert ended[0] == [child], "the delivery process outlived its service"
    finally:
        os.close(child)
