"""The live feed over a WebSocket: JSON-RPC notifications out, answer/reject calls in.

The token comes as ``?token=`` (browsers cannot set headers on a WebSocket) or an
``Authorization: Bearer`` header; without a valid one the socket is closed with code 1008
before any data is sent.

Each call runs in its own task (an answer waits up to the desk's acknowledgement window for the
call to take it), at most :data:`MAX_IN_FLIGHT` per client; replies carry the call's ``id`` and
may come in another order than the calls. The reply to an answer or a rejection that was taken
comes after this client's ``request.settled`` for it (waiting at most :data:`ANNOUNCE_WAIT`
seconds for the board's event), so a console never sees its answer taken before it sees the
request settled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from ..board import BoardEscalated, BoardOpened, BoardUnavailableError
from ..board._tasks import stop_tasks
from ._auth import Operator
from ._desk import OperatorDesk
from ._hub import RESYNC, FeedHub
from ._refusals import DeskError
from ._rpc import (
    INVALID_REQUEST,
    RpcCall,
    RpcError,
    error_reply,
    event_notification,
    parse_message,
    result_reply,
    snapshot_notification,
)

__all__ = ["ANNOUNCE_WAIT", "MAX_IN_FLIGHT", "serve_feed"]

MAX_IN_FLIGHT = 16
"""Calls one feed client may have waiting for their replies."""

ANNOUNCE_WAIT = 2.0
"""Seconds a taken answer's reply waits for the board's settle event to be forwarded first."""

_RECENT = 1024
"""Settled request ids a feed remembers having forwarded (a reply may come after its event)."""


async def _dispatch(
    desk: OperatorDesk, operator: Operator, call: RpcCall, via: str
) -> tuple[str, str | None]:
    """The reply to ``call``, and the id of the request it settled (None when it settled none)."""
    params = call.params
    try:
        if call.method == "list":
            found = await desk.list(
                operator,
                room=params.get("room"),
                channel=params.get("channel"),
                tool=params.get("tool"),
                for_=params.get("for"),
            )
            return result_reply(call.id, {"requests": [r.to_wire() for r in found]}), None
        key = params.get("idempotency_key")
        if call.method == "answer":
            settled = await desk.answer(
                operator, params["id"], params["answer"], via=via, idempotency_key=key
            )
        else:
            settled = await desk.reject(
                operator, params["id"], params["reason"], via=via, idempotency_key=key
            )
        return result_reply(call.id, {"request": settled.to_wire()}), settled.id
    except DeskError as error:
        return error_reply(call.id, error.status, error.message, error.to_wire()), None
    except BoardUnavailableError as exc:
        return error_reply(call.id, 503, str(exc)), None


async def serve_feed(websocket: WebSocket, desk: OperatorDesk, hub: FeedHub) -> None:
    """Serve one feed client until it disconnects.

    Cancellation: safe; the client is dropped from the hub.
    """
    token = websocket.query_params.get("token") or websocket.headers.get("authorization")
    try:
        operator = desk.authenticate(token)
    except DeskError as error:
        await websocket.close(code=1008, reason=error.message[:120])
        return
    await websocket.accept()
    # The console says so (answers it gives are recorded as via "console"); others are "feed".
    via = "console" if websocket.query_params.get("client") == "console" else "feed"
    queue = hub.join()
    lock = asyncio.Lock()

    async def send(text: str) -> None:
        async with lock:
            await websocket.send_text(text)

    async def snapshot() -> None:
        await send(snapshot_notification(await desk.list(operator)))

    announced: OrderedDict[str, None] = OrderedDict()  # settled ids forwarded, newest last
    awaited: dict[str, asyncio.Event] = {}  # replies waiting for their settle to go first

    def settled(request_id: str) -> None:
        announced[request_id] = None
        while len(announced) > _RECENT:
            announced.popitem(last=False)
        waiter = awaited.pop(request_id, None)
        if waiter is not None:
            waiter.set()

    async def forward() -> None:
        while True:
            item = await queue.get()
            if item is None:
                await websocket.close(code=1013, reason="the client fell too far behind")
                return
            if item == RESYNC:
                await snapshot()
            elif not isinstance(item, str):
                if operator.may_see(item.request):
                    await send(event_notification(item))
                if not isinstance(item, (BoardOpened, BoardEscalated)):
                    settled(item.request.id)

    calls: set[asyncio.Task[None]] = set()

    async def reply_to(call: RpcCall) -> None:
        reply, request_id = await _dispatch(desk, operator, call, via)
        if request_id is not None and request_id not in announced:
            waiter = awaited.setdefault(request_id, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(ANNOUNCE_WAIT):
                    await waiter.wait()  # the board's event goes out first
            awaited.pop(request_id, None)
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            await send(reply)  # unless the client went away meanwhile

    forwarding: asyncio.Task[Any] | None = None
    try:
        await snapshot()
        forwarding = asyncio.create_task(forward(), name="operator-feed-forward")
        while True:
            received = await websocket.receive()
            if received["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(received.get("code", 1000))
            message = received.get("text")
            parsed = parse_message(received.get("bytes") or b"" if message is None else message)
            if isinstance(parsed, RpcError):
                await send(parsed.reply())
            elif len(calls) >= MAX_IN_FLIGHT:
                message = f"more than {MAX_IN_FLIGHT} calls in flight; wait for their replies"
                await send(error_reply(parsed.id, INVALID_REQUEST, message))
            else:
                task = asyncio.create_task(reply_to(parsed), name="operator-feed-call")
                calls.add(task)
                task.add_done_callback(calls.discard)
    except (WebSocketDisconnect, RuntimeError):
        pass  # the client went away (RuntimeError: a send after the close)
    finally:
        hub.leave(queue)
        await stop_tasks([*calls, *([forwarding] if forwarding is not None else [])])
