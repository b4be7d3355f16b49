"""A worker (handler + bridge) and the operator service on one board, for service tests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
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
