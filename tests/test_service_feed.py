"""The live feed over a real socket (uvicorn), driven by the websockets client library."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets
from service_rig import ANN, BOB, TOKENS, ask_colour
from websockets.asyncio.client import ClientConnection

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.service import create_app
from voice_hitl.service._serve import running_service


class Feed:
    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.seen: list[dict[str, Any]] = []

    async def next(self, match: str | int) -> dict[str, Any]:
        """The next message with that method (or that reply id)."""
        async with asyncio.timeout(5):
            while True:
                message = json.loads(await self.socket.recv())
                self.seen.append(message)
                if message.get("method") == match or message.get("id") == match:
                    return message


async def test_the_feed_shows_requests_and_takes_answers() -> None:
    board = MemoryBoard()
    handler = HumanInputHandler()
    app = create_app(board, TOKENS)
    async with running_service(app) as url, BoardBridge(handler, board) as bridge:
        ws_url = url.replace("http", "ws") + f"/v1/feed?token={ANN}"
        async with websockets.connect(ws_url) as socket:
            feed = Feed(socket)
            snapshot = await feed.next("requests.snapshot")
            assert snapshot["params"]["requests"] == []
            rid = await ask_colour(bridge)
            opened = await feed.next("request.opened")
            assert opened["params"]["request"]["id"] == rid
            waiting = asyncio.create_task(handler.wait(rid))
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "answer",
                "params": {"id": rid, "answer": "red"},
            }
            await socket.send(json.dumps(call))
            reply = await feed.next(1)
            assert reply["result"]["request"]["settled"]["via"] == "feed"
            # the reply comes once the call took the answer: the settle was announced before
            (settled,) = [m for m in feed.seen if m.get("method") == "request.settled"]
            assert settled["params"]["request"]["settled"]["by"] == "ann"
            assert json.loads(await waiting)["answer"] == "red"
            await socket.send(json.dumps({**call, "id": 2}))
            refused = await feed.next(2)
            assert refused["error"]["code"] == 409
            assert refused["error"]["data"]["settled"]["status"] == "answered"
            await socket.send("{nope")
            parse_error = await feed.next(None)  # type: ignore[arg-type]
            assert parse_error["error"]["code"] == -32700

            gone = await ask_colour(bridge)
            await feed.next("request.opened")
            withdrawing = asyncio.create_task(handler.wait(gone))
            await asyncio.sleep(0)
            withdrawing.cancel("the caller hung up")
            with pytest.raises(asyncio.CancelledError):
                await withdrawing
            withdrawn = await feed.next("request.withdrawn")
            assert withdrawn["params"]["request"]["settled"]["detail"] == "the caller hung up"
        await handler.close()


async def test_the_feed_needs_a_token_and_keeps_to_the_scope() -> None:
    board = MemoryBoard()
    handler = HumanInputHandler()
    app = create_app(board, TOKENS)
    async with running_service(app) as url, BoardBridge(handler, board) as bridge:
        base = url.replace("http", "ws") + "/v1/feed"
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            async with websockets.connect(base + "?token=wrong-token") as socket:
                await socket.recv()
        assert refused.value.response.status_code == 403
        async with websockets.connect(
            base, additional_headers={"Authorization": f"Bearer {BOB}"}
        ) as socket:
            feed = Feed(socket)
            await feed.next("requests.snapshot")
            await ask_colour(bridge, room="room-7")
            visible = await ask_colour(bridge, room="room-b")
            opened = await feed.next("request.opened")
            assert opened["params"]["request"]["id"] == visible  # room-7 was never sent to bob
        await handler.close()


async def test_the_feed_answers_hostile_messages_and_keeps_the_client() -> None:
    """The feed dropped the client on a lone surrogate or a 30,000-deep message, and took a
    200,000-character answer HTTP refuses (413)."""
    board = MemoryBoard()
    handler = HumanInputHandler()
    app = create_app(board, TOKENS)
    async with running_service(app) as url, BoardBridge(handler, board) as bridge:
        ws_url = url.replace("http", "ws") + f"/v1/feed?token={ANN}"
        async with websockets.connect(ws_url, max_size=None) as socket:
            feed = Feed(socket)
            await feed.next("requests.snapshot")
            rid = await ask_colour(bridge)
            hostile = [
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "answer",
                        "params": {"id": rid, "answer": "y" * 200_000},
                    }
                ),
                '{"jsonrpc": "2.0", "id": 2, "method": "reject", "params": {"id": "'
                + rid
                + '", "reason": "\\ud800"}}',
                '{"jsonrpc": "2.0", "id": 3, "method": "answer", "params": '
                + "[" * 30_000
                + "]" * 30_000
                + "}",
                b'{"jsonrpc": "2.0", "id": 4, "method": "list", "params": {"room": "\xff"}}',
            ]
            for message in hostile:
                await socket.send(message)
                async with asyncio.timeout(5):
                    while "error" not in (refused := json.loads(await socket.recv())):
                        pass  # a notification
                assert refused["error"]["code"] == -32600, refused
            assert refused["error"]["message"]
            assert handler.get(rid).status == "pending"  # type: ignore[union-attr]
            call = {"jsonrpc": "2.0", "id": 5, "method": "answer"}
            await socket.send(json.dumps({**call, "params": {"id": rid, "answer": "red"}}))
            taken = await feed.next(5)  # still connected, and answers still work
            assert taken["result"]["request"]["settled"]["status"] == "answered"
        await handler.close()
