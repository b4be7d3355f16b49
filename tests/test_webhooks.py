"""Webhooks from the operator service to local receivers that fail, delay and replay: events
are signed (and replays refused), retried a bounded number of times with the same idempotency
id, scoped to rooms, never in a call's way, and dead letters can be listed and retried (API and
CLI)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from board_rig import BACKENDS, eventually, make_board
from service_rig import ANN, BOB, TOKENS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from voice_hitl import HumanInputHandler
from voice_hitl._cli import main
from voice_hitl.board import BoardBridge, BoardRequest, MemoryBoard
from voice_hitl.service import (
    AnswerLinks,
    Webhooks,
    WebhookSignatureError,
    WebhookSubscription,
    create_app,
    parse_webhooks,
    verify_webhook,
)
from voice_hitl.service._serve import running_service

SECRET = "receiver-secret-0123456789"


@dataclass
class Receiver:
    """POSTs to /{name}: recorded, answered ``fail`` times with 503 first, held while
    ``hold`` is not set."""

    got: dict[str, list[tuple[dict[str, str], bytes]]] = field(default_factory=dict)
    fail: dict[str, int] = field(default_factory=dict)
    hold: asyncio.Event = field(default_factory=asyncio.Event)
    held: set[str] = field(default_factory=set)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def endpoint(self, request: Request) -> Response:
        name = request.path_params["name"]
        self.got.setdefault(name, []).append((dict(request.headers), await request.body()))
        self.arrived.set()
        if name in self.held:
            await self.hold.wait()
        if self.fail.get(name, 0) > 0:
            self.fail[name] -= 1
            return Response("try later", 503)
        return Response("ok")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{name}", self.endpoint, methods=["POST"])])


def sub(base: str, name: str, **scope: Any) -> WebhookSubscription:
    return WebhookSubscription(name, f"{base}/{name}", SECRET, **scope)


@contextlib.asynccontextmanager
async def service(
    subscriptions: list[WebhookSubscription], **options: Any
) -> AsyncIterator[tuple[str, BoardBridge, Webhooks]]:
    board = MemoryBoard()
    handler = HumanInputHandler()
    links = AnswerLinks(b"link-key-0123456789abcdef", "http://service.example")
    hooks = Webhooks(subscriptions, links=links.for_request, backoff=0.01, **options)
    app = create_app(board, TOKENS, webhooks=hooks, links=links)
    async with running_service(app) as url, BoardBridge(handler, board, worker_id="w-h") as b:
        yield url, b, hooks
        await handler.close()


async def confirm(bridge: BoardBridge, room: str = "room-a") -> str:
    pending = await bridge.handler.create(
        "ConfirmAction", {"action": "refund 20 euros"}, room_id=room, channel_id="phone"
    )
    await bridge.drain()
    return pending.pending_id


def events(receiver: Receiver, name: str) -> list[dict[str, Any]]:
    return [json.loads(body) for _, body in receiver.got.get(name, [])]


async def test_signed_retried_scoped_and_dead_lettered_events() -> None:
    receiver = Receiver(fail={"flaky": 2, "down": 1000})
    async with running_service(receiver.app()) as hook_url:
        subscriptions = [
            sub(hook_url, "flaky"),
            sub(hook_url, "down"),
            sub(hook_url, "other-room", rooms=frozenset({"room-b"})),
        ]
        async with service(subscriptions, attempts=3) as (url, bridge, hooks):
            rid = await confirm(bridge)
            await hooks.drain()
            # Two 503s, then delivered: three attempts with one idempotency id, each signed.
            flaky = receiver.got["flaky"]
            assert len(flaky) == 3
            ids = {headers["x-voice-hitl-event-id"] for headers, _ in flaky}
            assert len(ids) == 1
            for headers, body in flaky:
                event = verify_webhook(SECRET, body, headers, time.time())
                assert (event["type"], event["request"]["id"]) == ("request.opened", rid)
                assert event["id"] in ids
            # A confirmation's event carries Yes / No / Reject links.
            assert set(event["links"]) == {"yes", "no", "reject"}
            # A receiver that stays down gets exactly `attempts` tries, then a dead letter.
            assert len(receiver.got["down"]) == 3
            # Scoped like tokens: room-b's subscription heard nothing of room-a.
            assert "other-room" not in receiver.got
            assert hooks.delivered == 1 and hooks.retries == 4

            # A replay outside the window, a body altered, a wrong secret: all refused.
            headers, body = flaky[-1]
            with pytest.raises(WebhookSignatureError, match="replay"):
                verify_webhook(SECRET, body, headers, time.time() + 301)
            with pytest.raises(WebhookSignatureError, match="does not match"):
                verify_webhook(SECRET, body.replace(b"refund", b"refunD"), headers, time.time())
            with pytest.raises(WebhookSignatureError, match="does not match"):
                verify_webhook("another-secret-0123456", body, headers, time.time())
            with pytest.raises(WebhookSignatureError, match="missing"):
                verify_webhook(SECRET, body, {}, time.time())

            # The settle is an event too, once the answer is in.
            async with httpx.AsyncClient(base_url=url) as client:
                ann = {"Authorization": f"Bearer {ANN}"}
                answered = await client.post(
                    f"/v1/requests/{rid}/answer", json={"answer": True}, headers=ann
                )
                assert answered.status_code == 200
                await hooks.drain()
                settled = events(receiver, "flaky")[-1]
                assert settled["type"] == "request.settled" and "links" not in settled
                assert settled["request"]["settled"]["by"] == "ann"

                # Dead letters: ann sees both (opened, settled); bob (room-b only) none.
                dead = (await client.get("/v1/webhooks/dead", headers=ann)).json()
                letters = dead["dead_letters"]
                assert [(d["subscription"], d["type"]) for d in letters] == [
                    ("down", "request.opened"),
                    ("down", "request.settled"),
                ]
                assert letters[0]["attempts"] == 3 and letters[0]["error"] == "HTTP 503"
                bob = {"Authorization": f"Bearer {BOB}"}
                assert (await client.get("/v1/webhooks/dead", headers=bob)).json() == {
                    "dead_letters": []
                }
                first_dead = letters[0]["id"]
                missing = await client.post(f"/v1/webhooks/dead/{first_dead}/retry", headers=bob)
                assert missing.status_code == 404

                # The receiver is back; the CLI lists the dead letters and retries one.
                receiver.fail["down"] = 0
                cli = ["webhooks"]
                where = ["--url", url, "--token", ANN]
                code, listed = await run([*cli, "dead", *where])
                assert code == 0, listed
                assert letters[0]["id"] in listed and "HTTP 503" in listed
                before = len(receiver.got["down"])
                code, retried = await run([*cli, "retry", letters[0]["id"], *where])
                assert code == 0 and "queued again: 1" in retried, retried
                await hooks.drain()
                again = receiver.got["down"][before:]
                assert len(again) == 1
                assert again[0][0]["x-voice-hitl-event-id"] == letters[0]["event_id"]
                verify_webhook(SECRET, again[0][1], again[0][0], time.time())
                # The rest over HTTP; nothing is left.
                rest = await client.post("/v1/webhooks/dead/retry", headers=ann)
                assert rest.json() == {"retried": [letters[1]["id"]]}
                await hooks.drain()
                assert (await client.get("/v1/webhooks/dead", headers=ann)).json() == {
                    "dead_letters": []
                }
                code, said = await run([*cli, "retry", *where])
                assert code == 2 and "give one dead letter ID, or --all" in said


async def run(argv: list[str]) -> tuple[int, str]:
    """The CLI in a thread (its HTTP client blocks; the service runs on this loop)."""
    out = io.StringIO()

    def call() -> int:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            return main(argv)

    return await asyncio.to_thread(call), out.getvalue()


async def test_a_receiver_that_hangs_never_slows_a_call() -> None:
    receiver = Receiver()
    receiver.held.add("slow")
    async with (
        running_service(receiver.app()) as hook_url,
        service([sub(hook_url, "slow")], timeout=30) as (url, bridge, hooks),
    ):
        first = await confirm(bridge)
        await receiver.arrived.wait()  # the receiver has it, and does not answer
        async with httpx.AsyncClient(base_url=url) as client:
            for _ in range(8):
                rid = await confirm(bridge)
                waiting = asyncio.create_task(bridge.handler.wait(rid))
                answered = await client.post(
                    f"/v1/requests/{rid}/answer",
                    json={"answer": True},
                    headers={"Authorization": f"Bearer {ANN}"},
                )
                assert answered.status_code == 200
                assert json.loads(await waiting)["answer"] is True
        assert not receiver.hold.is_set() and hooks.delivered == 0
        receiver.hold.set()
        await hooks.drain()
        opened = [e for e in events(receiver, "slow") if e["type"] == "request.opened"]
        assert opened[0]["request"]["id"] == first and len(opened) == 9
        assert hooks.dead_letters() == []


async def test_a_full_queue_makes_dead_letters_at_once_and_escalations_are_sent() -> None:
    release = asyncio.Event()
    seen: list[dict[str, Any]] = []

    async def slow(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        await release.wait()
        return httpx.Response(200)

    hooks = Webhooks(
        [WebhookSubscription("chat", "http://chat.example/hook", SECRET)],
        queue_size=2,
        max_in_flight=1,
        transport=httpx.MockTransport(slow),
    )
    handler = HumanInputHandler()
    handler.add_observer(hooks.observer("w-1"))
    await hooks.start()
    try:
        pending = await handler.create("ConfirmAction", {"action": "open the gate"}, room_id="r")
        handler.note(pending.pending_id, "escalated", {"to": ["supervisor"], "remaining": 9.5})
        request = BoardRequest("other", "ConfirmAction", {"action": "x"}, "w-1", time.time())
        results = [hooks.offer("request.opened", request) for _ in range(6)]
        # One in flight, two queued at most: the rest are dead letters, with the reason.
        assert results.count(False) >= 3
        dead = hooks.dead_letters()
        assert dead and all(d.error == "the receiver's delivery queue was full" for d in dead)
        release.set()
        await hooks.drain()
        escalated = [e for e in seen if e["type"] == "request.escalated"]
        assert escalated[0]["escalation"] == {"to": ["supervisor"], "remaining": 9.5}
        assert escalated[0]["request"]["id"] == pending.pending_id
        assert escalated[0]["request"]["room"] == "r"
    finally:
        await hooks.aclose()
        await handler.close()
    with pytest.raises(RuntimeError, match="closed"):
        await hooks.start()


def test_a_webhooks_file_is_checked_with_clear_errors() -> None:
    good = parse_webhooks(
        '{"webhooks": [{"name": "chat", "url": "https://chat.example/h", '
        '"secret": "0123456789abcdef", "rooms": ["sales"], "events": ["request.opened"]}]}',
        "hooks.json",
    )
    assert good[0].rooms == {"sales"} and good[0].events == {"request.opened"}
    for text, message in [
        ("nope", "hooks.json is not JSON"),
        ('{"webhooks": [{"url": "https://x", "secret": "0123456789abcdef"}]}', "name"),
        ('{"webhooks": [{"name": "a/b", "url": "http://x", "secret": "0123456789abcdef"}]}', "nam"),
        ('{"webhooks": [{"name": "a", "url": "http://h:-1", "secret": "0123456789abcdef"}]}', "ur"),
        ('{"webhooks": [{"name": "a", "url": "ftp://x", "secret": "0123456789abcdef"}]}', "url"),
        ('{"webhooks": [{"name": "a", "url": "https://x", "secret": "short"}]}', "16 or more"),
        (
            '{"webhooks": [{"name": "a", "url": "https://x", "secret": "0123456789abcdef", '
            '"events": ["request.eaten"]}]}',
            "unknown event type",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_webhooks(text, "hooks.json")


def test_serve_builds_webhooks_with_links_from_its_options(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from voice_hitl.service._serve import _reach

    monkeypatch.setenv("VOICE_HITL_LINK_KEY", "a-shared-link-key-0123456789")
    path = tmp_path / "hooks.json"
    path.write_text(
        '{"webhooks": [{"name": "ops-chat", "url": "http://127.0.0.1:9/h", '
        '"secret": "0123456789abcdef"}]}'
    )
    args = argparse.Namespace(
        host="127.0.0.1", port=8765, webhooks=str(path), public_url=None, link_ttl=60.0
    )
    hooks, links = _reach(args)
    assert [s.name for s in hooks.subscriptions] == ["ops-chat"]
    assert (links.base_url, links.ttl) == ("http://127.0.0.1:8765", 60.0)
    # The key comes from the environment: another process with it accepts this one's links.
    request = BoardRequest("r1", "ConfirmAction", {"action": "x"}, "w", time.time(), spec=None)
    token = links.mint(request, "ops-chat", "answer", True, "Yes").rsplit("/", 1)[1]
    _, again = _reach(argparse.Namespace(**{**vars(args), "webhooks": None}))
    assert again.check(token).holder == "ops-chat"
    path.write_text('{"webhooks": [{"name": "x"}]}')
    with pytest.raises(ValueError, match="url"):
        _reach(args)


async def test_a_url_httpx_cannot_use_ends_as_a_dead_letter_not_a_lost_event() -> None:
    hooks = Webhooks(
        [
            WebhookSubscription("bad", "http://[::1/h", SECRET),
            WebhookSubscription("port", "http://127.0.0.1:99999/h", SECRET),  # httpx: a group
        ],
        attempts=2,
        backoff=0,
    )
    await hooks.start()
    try:
        request = BoardRequest("r1", "ConfirmAction", {"action": "x"}, "w", time.time())
        assert hooks.offer("request.opened", request)
        await hooks.drain()
        bad, port = hooks.dead_letters()
        assert bad.attempts == 2 and bad.error.startswith("InvalidURL")
        assert port.attempts == 2 and port.subscription == "port"
    finally:
        await hooks.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_standalone_service_sends_a_workers_escalation(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """The service follows only the board (as ``voice-hitl serve`` does, a Redis board of its
    own for the Redis backend); the worker's handler escalates; its bridge carries the
    escalation over the board, and the service sends ``request.escalated`` with links."""
    receiver = Receiver()
    service_board = await make_board(backend, request)
    worker_board = service_board if backend == "memory" else await make_board(backend, request)
    handler = HumanInputHandler()
    links = AnswerLinks(b"link-key-0123456789abcdef", "http://service.example")
    try:
        async with running_service(receiver.app()) as hook_url:
            hooks = Webhooks([sub(hook_url, "chat")], links=links.for_request, backoff=0.01)
            app = create_app(service_board, TOKENS, webhooks=hooks, links=links)
            async with running_service(app), BoardBridge(handler, worker_board, worker_id="w-e"):
                pending = await handler.create(
                    "ConfirmAction", {"action": "wire 900 euros"}, room_id="r", channel_id="p"
                )
                # The opened event arrived: the service is subscribed to the board.
                await eventually(lambda: events(receiver, "chat"))
                note = {"to": ["supervisor"], "remaining": 12.5}
                handler.note(pending.pending_id, "escalated", note)
                await eventually(lambda: len(events(receiver, "chat")) >= 2)
                await handler.close()
    finally:
        await service_board.aclose()
        await worker_board.aclose()
    got = events(receiver, "chat")
    assert [e["type"] for e in got[:2]] == ["request.opened", "request.escalated"]
    escalated = got[1]
    assert escalated["escalation"] == note
    assert (escalated["request"]["id"], escalated["request"]["worker"]) == (
        pending.pending_id,
        "w-e",
    )
    assert set(escalated["links"]) == {"yes", "no", "reject"}
    assert escalated["id"] != got[0]["id"]


async def test_a_receiver_that_never_replies_holds_only_its_own_lane(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One shared runner and semaphore let a hanging receiver delay every other receiver's
    events by ~31 s. Each receiver now has its own queue, deliveries and connections: the
    others get each event while the hanging one holds its two slots, and its overflow is
    counted, logged and dead-lettered, not lost."""
    receiver = Receiver()
    receiver.held.add("hang")
    arrived = asyncio.Condition()
    inner = receiver.endpoint

    async def counting(request: Request) -> Response:
        response = await inner(request)
        async with arrived:
            arrived.notify_all()
        return response

    def count(name: str) -> int:
        return len(receiver.got.get(name, []))

    receiver.endpoint = counting  # type: ignore[method-assign]
    total = 12
    async with running_service(receiver.app()) as hook_url:
        hooks = Webhooks(
            [sub(hook_url, "hang"), sub(hook_url, "a"), sub(hook_url, "b")],
            max_in_flight=2,
            queue_size=4,
            timeout=30,
        )
        await hooks.start()
        try:
            for n in range(total):
                request = BoardRequest(f"r{n}", "ConfirmAction", {"action": "x"}, "w", time.time())
                hooks.offer("request.opened", request)
                # Far below the hanging receiver's 30 s attempt timeout: nothing waits on it.
                async with asyncio.timeout(20), arrived:
                    await arrived.wait_for(lambda n=n: count("a") > n and count("b") > n)
            assert count("hang") == 2 and not receiver.hold.is_set()  # its two slots, held
            lanes = hooks.lanes()
            assert count("a") == count("b") == total
            assert lanes["a"]["overflowed"] == lanes["b"]["overflowed"] == 0
            # 2 in flight, 4 queued (counted in the service's process): the rest refused,
            # each visible
            overflowed = lanes["hang"]["overflowed"]
            assert overflowed == hooks.overflowed == total - 2 - 4
            dead = hooks.dead_letters()
            assert [d.subscription for d in dead] == ["hang"] * overflowed
            assert [d.event["request"]["id"] for d in dead] == [
                f"r{n}" for n in range(total - overflowed, total)
            ]
            assert any("hang: queue full" in r.getMessage() for r in caplog.records)
            receiver.hold.set()
            await hooks.drain()
            assert hooks.lanes()["hang"]["delivered"] == total - overflowed
            assert hooks.retry(dead[0].id) is True  # a dead letter is sent again on demand
            await hooks.drain()
            assert hooks.lanes()["hang"]["delivered"] == total - overflowed + 1
        finally:
            receiver.hold.set()
            await hooks.aclose()


def test_lanes_need_distinct_names_and_room_for_one_event() -> None:
    a = WebhookSubscription("a", "http://127.0.0.1:9/a", SECRET)
    with pytest.raises(ValueError, match="its own name"):
        Webhooks([a, WebhookSubscription("a", "http://127.0.0.1:9/b", SECRET)])
    with pytest.raises(ValueError, match="at least 1"):
        Webhooks([a], queue_size=0)
    with pytest.raises(ValueError, match="at least 1"):
        Webhooks([a], max_in_flight=0)
