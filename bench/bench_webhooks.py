"""Benchmark the operator service's webhooks and answer links (loopback, in one process).

What is measured (the service under uvicorn over a ``MemoryBoard``; a worker's
``HumanInputHandler`` bridged to it; receivers: one local Starlette app under uvicorn, one URL
per subscriber, checking each signature):

* **fan-out**: a request opened on the worker until all ``--subscribers`` receivers have its
  signed ``request.opened`` event (each with its own answer links); p50 / p99 / max over
  ``--events`` requests, one at a time. Also the service's cost of queuing one event for every
  subscriber (``Webhooks.offer``: building, link minting), which runs on the service's loop.
* **a hanging receiver**: one receiver that accepts every POST and never replies, beside
  ``--healthy`` healthy ones (all in this process): each event's time from ``offer`` until each
  healthy receiver has it; p50 / p99 / max over ``--events`` events x receivers. Each receiver
  has its own lane, so the hanging one holds only its own slots.
* **answer -> tool result with and without subscribers**: ``POST /v1/requests/{id}/answer``
  (and a "Yes" link) until the worker's ``wait()`` returns the answer (what the model reads),
  answered as soon as the request is on the board, so the ``request.opened`` fan-out is in
  flight; with 0 and with ``--subscribers`` subscribers whose receivers run in another process
  (as real receivers do); p50 / p99 / max over ``--answers``.

Delivery runs in its own process (``Webhooks``' delivery process, niced by ``--nice``); the
offer cost above is what stays on the service's loop.

Run it from a checkout with the ``server`` extra::

    nice -n 10 .venv/bin/python bench/bench_webhooks.py
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, BoardRequest, MemoryBoard
from voice_hitl.service import (
    AnswerLinks,
    Operator,
    Operators,
    Webhooks,
    WebhookSubscription,
    create_app,
    verify_webhook,
)
from voice_hitl.service._serve import running_service

TOKEN = "bench-webhooks-token"
SECRET = "bench-webhook-secret-0123"


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"p50 {statistics.median(ordered):.2f} ms, p99 {p99:.2f} ms, "
        f"max {ordered[-1]:.2f} ms (n={len(ordered)})"
    )


class Receivers:
    def __init__(self) -> None:
        self.waiting: dict[str, tuple[int, asyncio.Event]] = {}
        self.bad = 0

    async def endpoint(self, request: Request) -> Response:
        body = await request.body()
        try:
            event = verify_webhook(SECRET, body, request.headers, time.time())
        except ValueError:
            self.bad += 1
            return Response("bad signature", 400)
        rid = event["request"]["id"]
        if event["type"] == "request.opened" and rid in self.waiting:
            left, done = self.waiting[rid]
            self.waiting[rid] = (left - 1, done)
            if left == 1:
                done.set()
        return Response("ok")


async def main(args: argparse.Namespace) -> None:
    receivers = Receivers()
    receiver_app = Starlette(routes=[Route("/{n}", receivers.endpoint, methods=["POST"])])
    board = MemoryBoard()
    handler = HumanInputHandler()
    async with running_service(receiver_app) as hook_url:
        links = AnswerLinks(b"bench-link-key-0123456789", "http://placeholder")
        subscriptions = [
            WebhookSubscription(f"sub-{n}", f"{hook_url}/{n}", SECRET)
            for n in range(args.subscribers)
        ]
        hooks = Webhooks(subscriptions, links=links.for_request, nice=args.nice)
        app = create_app(
            board, Operators.from_tokens({TOKEN: Operator("bench")}), webhooks=hooks, links=links
        )
        async with (
            running_service(app) as url,
            BoardBridge(handler, board, worker_id="w-bench") as bridge,
        ):
            links.base_url = url
            fan_out: list[float] = []
            for n in range(args.events):
                done = asyncio.Event()
                started = time.perf_counter()
                pending = await handler.create(
                    "ConfirmAction", {"action": f"step {n}"}, room_id="r", timeout=600
                )
                receivers.waiting[pending.pending_id] = (args.subscribers, done)
                await done.wait()
                fan_out.append((time.perf_counter() - started) * 1000)
            await hooks.drain()
            request = await board.get(pending.pending_id)
            assert request is not None
            offers = []
            for _ in range(20):
                started = time.perf_counter()
                hooks.offer("request.escalated", request)
                offers.append((time.perf_counter() - started) * 1000)
                await hooks.drain()
            print(
                f"fan-out to {args.subscribers} subscribers: first event (opens the connections) "
                f"{fan_out[0]:.1f} ms; then {quantiles(fan_out[1:])}"
            )
            print(f"queuing one event for all of them (offer): {quantiles(offers)}")
            print(f"bad signatures seen by the receivers: {receivers.bad}")

            await handler.close()  # withdraws the open requests: their events go out too
            await bridge.drain()
            await hooks.drain()
    await hanging(args)
    for subscribers in (0, args.subscribers):
        await answers(args, subscribers)


class Timed:
    """In-process receivers that note when each event reached each of them; ``/hang`` never
    replies."""

    def __init__(self) -> None:
        self.arrivals: dict[str, list[float]] = {}
        self.changed = asyncio.Condition()
        self.forever = asyncio.Event()

    async def endpoint(self, request: Request) -> Response:
        body = await request.body()
        if request.path_params["n"] == "hang":
            await self.forever.wait()
        event = verify_webhook(SECRET, body, request.headers, time.time())
        async with self.changed:
            self.arrivals.setdefault(event["request"]["id"], []).append(time.perf_counter())
            self.changed.notify_all()
        return Response("ok")


async def hanging(args: argparse.Namespace) -> None:
    receivers = Timed()
    app = Starlette(routes=[Route("/{n}", receivers.endpoint, methods=["POST"])])
    async with running_service(app) as hook_url:
        names = ["hang", *(str(n) for n in range(args.healthy))]
        hooks = Webhooks(
            [WebhookSubscription(n, f"{hook_url}/{n}", SECRET) for n in names], nice=args.nice
        )
        await hooks.start()
        latencies: list[float] = []
        try:
            for n in range(args.events):
                request = BoardRequest(f"h{n}", "ConfirmAction", {"action": "x"}, "w", time.time())
                started = time.perf_counter()
                hooks.offer("request.opened", request)
                async with receivers.changed:
                    await receivers.changed.wait_for(
                        lambda rid=request.id: len(receivers.arrivals.get(rid, ())) >= args.healthy
                    )
                latencies += [(t - started) * 1000 for t in receivers.arrivals[request.id]]
            held = hooks.lanes()["hang"]
        finally:
            receivers.forever.set()
            await hooks.aclose()
    print(
        f"one receiver that never replies, {args.healthy} healthy ones: the healthy ones get "
        f"each event in {quantiles(latencies)}; the hanging one holds {held['waiting']} "
        f"event(s), {held['overflowed']} refused to its dead letters"
    )


RECEIVER_PROCESS = """
import asyncio, sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

async def hook(request):
    await request.body()
    return Response("ok")

async def main():
    config = uvicorn.Config(Starlette(routes=[Route("/{n}", hook, methods=["POST"])]),
                            host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    print(port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.should_exit = True
    await task

asyncio.run(main())
"""


async def answers(args: argparse.Namespace, subscribers: int) -> None:
    import sys

    receiver = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        RECEIVER_PROCESS,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert receiver.stdout is not None and receiver.stdin is not None
    hook_url = f"http://127.0.0.1:{int(await receiver.stdout.readline())}"
    board = MemoryBoard()
    handler = HumanInputHandler()
    links = AnswerLinks(b"bench-link-key-0123456789", "http://placeholder")
    subs = [WebhookSubscription(f"s{n}", f"{hook_url}/{n}", SECRET) for n in range(subscribers)]
    hooks = Webhooks(subs, links=links.for_request, nice=args.nice) if subs else None
    app = create_app(
        board, Operators.from_tokens({TOKEN: Operator("bench")}), links=links, webhooks=hooks
    )
    try:
        await _answers(args, subscribers, app, board, handler, links, hooks)
    finally:
        receiver.stdin.close()
        await receiver.wait()


async def _answers(
    args: argparse.Namespace,
    subscribers: int,
    app: Starlette,
    board: MemoryBoard,
    handler: HumanInputHandler,
    links: AnswerLinks,
    hooks: Webhooks | None,
) -> None:
    async with (
        running_service(app) as url,
        BoardBridge(handler, board, worker_id="w-bench") as bridge,
        httpx.AsyncClient(base_url=url) as client,
    ):
        links.base_url = url
        async def answer_with(use_link: bool) -> list[float]:
            times = []
            for n in range(args.answers):
                pending = await handler.create(
                    "ConfirmAction", {"action": f"answer {n}"}, room_id="r", timeout=600
                )
                await bridge.drain()
                request = await board.get(pending.pending_id)
                assert request is not None
                yes = links.for_request(request, "bench-chat")["yes"].removeprefix(url)
                started = time.perf_counter()
                if use_link:
                    response = await client.post(yes)
                else:
                    response = await client.post(
                        f"/v1/requests/{request.id}/answer",
                        json={"answer": True},
                        headers={"Authorization": f"Bearer {TOKEN}"},
                    )
                await handler.wait(pending.pending_id)
                times.append((time.perf_counter() - started) * 1000)
                assert response.status_code == 200, response.text
            return times

        api = quantiles(await answer_with(False))
        link = quantiles(await answer_with(True))
        if hooks is not None:
            await hooks.drain()
            assert hooks.dead_letters() == [], hooks.dead_letters()[:3]
        print(f"{subscribers} subscribers: API answer -> tool result: {api}")
        print(f"{subscribers} subscribers: link answer -> tool result: {link}")
        await handler.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--events", type=int, default=30)
    parser.add_argument("--healthy", type=int, default=20)
    parser.add_argument("--answers", type=int, default=200)
    parser.add_argument(
        "--nice", type=int, default=10, help="the delivery process's niceness (Webhooks(nice=))"
    )
    asyncio.run(main(parser.parse_args()))
