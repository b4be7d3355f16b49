"""A worker (handler + bridge) and the operator service on one board, for service tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, MemoryBoard, RequestBoard
from voice_hitl.journal import Journal
from voice_hitl.service import Operator, Operators, create_app

__all__ = ["ANN", "BOB", "TOKENS", "Rig", "ask_colour", "operator_client", "rig"]

ANN = "ann-token-0001"
BOB = "bob-token-0002"
TOKENS = Operators.from_tokens(
    {
        ANN: Operator("ann"),
        BOB: Operator("bob", rooms=frozenset({"room-b"})),
    }
)


@dataclass
class Rig:
    handler: HumanInputHandler
    bridge: BoardBridge
    board: RequestBoard
    client: httpx.AsyncClient


@contextlib.asynccontextmanager
async def rig(
    board: RequestBoard | None = None, journal: Journal | None = None
) -> AsyncIterator[Rig]:
    """A handler bridged to ``board`` (a MemoryBoard by default) and an httpx client of the
    app over ASGI (no socket; the feed needs :func:`running_service` instead). A ``journal``
    is attached to the handler (the worker journals) and given to the app (it serves stories).
    """
    board = board or MemoryBoard()
    handler = HumanInputHandler()
    if journal is not None:
        journal.attach(handler)
    app = create_app(board, TOKENS, journal=journal)
    transport = httpx.ASGITransport(app=app)
    async with BoardBridge(handler, board, worker_id="w-test") as bridge:
        async with httpx.AsyncClient(transport=transport, base_url="http://service") as client:
            yield Rig(handler, bridge, board, client)
        await handler.close()


async def ask_colour(bridge: BoardBridge, room: str = "room-7", **arguments: object) -> str:
    """Open an AskUserQuestion (choices red / Dark blue) on the bridge's handler; returns its
    id once the board has it."""
    args: dict[str, object] = {"question": "Which colour?", "choices": ["red", "Dark blue"]}
    args.update(arguments)
    pending = await bridge.handler.create(
        "AskUserQuestion",
        args,
        room_id=room,
        channel_id="phone",
        actor_id="caller",
        timeout=60,
        context={"transcript": ({"role": "user", "text": "paint it", "speaker_id": "caller"},)},
    )
    await bridge.drain()
    return pending.pending_id


def operator_client(app: Any, token: str) -> httpx.AsyncClient:
    """An httpx client of ``app`` over ASGI (no lifespan, no socket) as the operator whose
    bearer token is ``token``."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://service",
        headers={"Authorization": f"Bearer {token}"},
    )


async def answer_until_final(
    client: httpx.AsyncClient,
    rid: str,
    key: str | None,
    seen: list[tuple[int, str]],
    answer: str = "red",
    check: Callable[[httpx.Response], None] | None = None,
) -> httpx.Response:
    """Answer (``red``) as a careful client does: retry 503 / 504 (same key) until a final
    status; every status and error code met is appended to ``seen`` (and each reply handed to
    ``check`` the moment it arrives)."""
    headers = {"Idempotency-Key": key} if key else {}
    try:
        async with asyncio.timeout(20):
            while True:
                response = await client.post(
                    f"/v1/requests/{rid}/answer", json={"answer": answer}, headers=headers
                )
                code = response.json()["error"]["code"] if response.status_code >= 400 else ""
                seen.append((response.status_code, code))
                if check is not None:
                    check(response)
                if response.status_code not in (503, 504):
                    return response
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"no final answer in 20 s: {seen}") from None
