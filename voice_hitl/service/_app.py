"""The operator service's ASGI app: the ``/v1`` API, the live feed and the console.

Every handler is a thin shell over :class:`~voice_hitl.service.OperatorDesk`: it authenticates
the bearer token, calls one desk method, and writes the result or the refusal as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from .._checks import positive_seconds
from ..board import BoardOutcomeUnknownError, BoardUnavailableError, RequestBoard
from ..board._model import iso
from ..board._tasks import stop_tasks
from ..journal import Journal
from ._auth import Operators
from ._desk import OperatorDesk
from ._feed import serve_feed
from ._http import read_json
from ._hub import FeedHub
from ._links import AnswerLinks
from ._listing import ListingEncoder
from ._openapi import openapi_document
from ._reach import reach_routes
from ._refusals import DeskError, InvalidError, NotFoundError
from ._sessions import Sessions
from ._story import journal_board, journal_decisions, place_of, story_of
from ._webhooks import Webhooks

__all__ = ["CLIENT_HEADER", "IDEMPOTENCY_HEADER", "create_app"]

CLIENT_HEADER = "x-voice-hitl-client"
"""A client may name itself here (``cli``); the answer's ``via`` records it."""

IDEMPOTENCY_HEADER = "idempotency-key"
"""An answer or a rejection with the same key (same operator) is made once; a retry returns
the first attempt's outcome."""

logger = logging.getLogger("voice_hitl.service")

STATIC = files("voice_hitl.service") / "static"

Handler = Callable[[Request], Awaitable[Response]]


def _refusal(error: DeskError) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else {}
    if error.retry_after is not None:
        headers["Retry-After"] = str(error.retry_after)
    return JSONResponse({"error": error.to_wire()}, error.status, headers=headers or None)


def _guarded(handler: Handler) -> Handler:
    async def guarded(request: Request) -> Response:
        try:
            return await handler(request)
        except DeskError as error:
            return _refusal(error)
        except BoardOutcomeUnknownError as exc:
            body = {"status": 504, "code": "outcome_unknown", "message": str(exc)}
            return JSONResponse({"error": body}, 504, headers={"Retry-After": "1"})
        except BoardUnavailableError as exc:
            body = {"status": 503, "code": "board_unavailable", "message": str(exc)}
            return JSONResponse({"error": body}, 503, headers={"Retry-After": "1"})

    return guarded


def create_app(
    board: RequestBoard,
    operators: Operators,
    *,
    reap_interval: float = 1.0,
    close_board: bool = False,
    journal: Journal | None = None,
    webhooks: Webhooks | None = None,
    links: AnswerLinks | None = None,
    ack_timeout: float = 3.0,
    rebuild_window: float | None = None,
    sessions: Sessions | None = None,
) -> Starlette:
    """Build the service over ``board`` for ``operators``.

    The app's lifespan follows the board for the live feed and reaps abandoned requests every
    ``reap_interval`` seconds; with ``close_board`` it closes the board on shutdown. With a
    ``journal`` (started; the caller closes it) every board event is journaled and
    ``GET /v1/requests/{id}/story`` serves a request's entries; a journal with ``sync``
    durability also stores each operator decision (a ``decided`` entry) before the request is
    claimed, so no call takes an answer the journal does not hold (503 ``not_recorded`` when it
    cannot be stored in time). With ``webhooks`` (not started)
    every board event is offered to them, and the lifespan starts and closes them; with
    ``links`` answer links work at ``/v1/links/{token}`` (see :mod:`._reach`). An answer is
    reported taken only once the owning worker took it; the worker has ``ack_timeout`` seconds
    to take it (:mod:`voice_hitl.service._taken`). For ``rebuild_window`` seconds after the
    board's server lost its state (default: three heartbeats, ``6 * reap_interval``), a missing
    id is refused as being rebuilt (503 with ``Retry-After``), not as unknown. ``sessions``
    keeps the console's sign-ins (:mod:`voice_hitl.service._sessions`; 12-hour sessions by
    default).

    Raises:
        ValueError: ``reap_interval`` or ``ack_timeout`` is not a finite number of seconds
            above zero (0 would busy-loop the reaper, infinity would never abandon a dead
            worker's requests).
    """
    reap_interval = positive_seconds("reap_interval", reap_interval)
    ack_timeout = positive_seconds("ack_timeout", ack_timeout)
    window = 6 * reap_interval if rebuild_window is None else rebuild_window
    window = positive_seconds("rebuild_window", window)
    sync = journal is not None and journal.durability == "sync"
    desk = OperatorDesk(
        board,
        operators,
        ack_timeout=ack_timeout,
        rebuild_window=window,
        write_ahead=journal_decisions(journal) if sync and journal is not None else None,
        sessions=sessions,
    )
    hub = FeedHub(board)
    listing = ListingEncoder()
    hub.add_listener(desk.acks.notify)
    if journal is not None:
        hub.add_listener(journal_board(journal))
    if webhooks is not None:
        hub.add_listener(webhooks.board_listener)

    def via_of(request: Request) -> str:
        # How the answer came: the CLI says so in a header; anything else is the API.
        return "cli" if request.headers.get(CLIENT_HEADER) == "cli" else "api"

    def operator_of(request: Request) -> Any:
        return desk.authenticate(request.headers.get("authorization"))

    async def me(request: Request) -> Response:
        return JSONResponse(operator_of(request).to_wire())

    async def sign_in(request: Request) -> Response:
        session, operator, expires = desk.sign_in(request.headers.get("authorization"))
        body = {"session": session, "expires_at": iso(expires), "operator": operator.to_wire()}
        return JSONResponse(body, 201, headers={"Cache-Control": "no-store"})

    async def sign_out(request: Request) -> Response:
        desk.sign_out(request.headers.get("authorization"))
        return Response(status_code=204)

    async def list_requests(request: Request) -> Response:
        operator = operator_of(request)
        query = request.query_params
        found = await desk.list(
            operator,
            room=query.get("room"),
            channel=query.get("channel"),
            tool=query.get("tool"),
            for_=query.get("for"),
        )
        return Response(listing.body(found), media_type="application/json")

    async def get_request(request: Request) -> Response:
        operator = operator_of(request)
        found = await desk.get(operator, request.path_params["id"])
        return JSONResponse({"request": found.to_wire()})

    async def answer(request: Request) -> Response:
        operator = operator_of(request)
        body = await read_json(request)
        if not isinstance(body, dict) or "answer" not in body:
            raise InvalidError('the body must be an object with "answer"')
        settled = await desk.answer(
            operator,
            request.path_params["id"],
            body["answer"],
            via=via_of(request),
            idempotency_key=request.headers.get(IDEMPOTENCY_HEADER),
        )
        return JSONResponse({"request": settled.to_wire()})

    async def reject(request: Request) -> Response:
        operator = operator_of(request)
        body = await read_json(request)
        if not isinstance(body, dict) or "reason" not in body:
            raise InvalidError('the body must be an object with "reason"')
        settled = await desk.reject(
            operator,
            request.path_params["id"],
            body["reason"],
            via=via_of(request),
            idempotency_key=request.headers.get(IDEMPOTENCY_HEADER),
        )
        return JSONResponse({"request": settled.to_wire()})

    async def story(request: Request) -> Response:
        operator = operator_of(request)
        request_id = request.path_params["id"]
        if journal is None:
            raise NotFoundError("the service keeps no journal (voice-hitl serve --no-journal)")
        entries = await story_of(journal, request_id)
        if not entries or not operator.may_see_place(*place_of(entries)):
            # Outside the scope reads as unknown: a refusal must not tell that it exists.
            raise NotFoundError(f"no request {request_id!r} in the journal")
        return JSONResponse({"id": request_id, "entries": [e.to_json() for e in entries]})

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    async def health(request: Request) -> Response:
        # No token: a load balancer asks. Draining: stopping, send answers elsewhere.
        body = {"status": "ok", "answers_in_flight": desk.gate.in_flight}
        if desk.gate.closed:
            body["status"] = "draining"
            return JSONResponse(body, 503, headers={"Retry-After": "1"})
        return JSONResponse(body)

    async def console(request: Request) -> Response:
        return FileResponse(str(STATIC / "index.html"), media_type="text/html")

    async def feed(websocket: WebSocket) -> None:
        await serve_feed(websocket, desk, hub)

    async def reap_forever() -> None:
        failing = False
        while True:
            await asyncio.sleep(reap_interval)
            try:
                reaped = await board.reap()
            except BoardUnavailableError as exc:
                if not failing:
                    logger.warning("reaper: %s", exc)
                failing = True
                continue
            failing = False
            for request in reaped:
                logger.info("request %s abandoned: %s", request.id, request.text)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        tasks = [
            asyncio.create_task(hub.run(), name="operator-feed-hub"),
            asyncio.create_task(reap_forever(), name="operator-reaper"),
        ]
        try:
            if webhooks is not None:
                await webhooks.start()
            yield
        finally:
            await stop_tasks(tasks)
            if webhooks is not None:
                await webhooks.aclose()
            if close_board:
                await board.aclose()

    routes = [
        Route("/", console),
        Route("/v1/openapi.json", openapi),
        Route("/v1/health", health),
        Route("/v1/me", _guarded(me)),
        Route("/v1/sessions", _guarded(sign_in), methods=["POST"]),
        Route("/v1/sessions/current", _guarded(sign_out), methods=["DELETE"]),
        Route("/v1/requests", _guarded(list_requests)),
        Route("/v1/requests/{id}", _guarded(get_request)),
        Route("/v1/requests/{id}/story", _guarded(story)),
        Route("/v1/requests/{id}/answer", _guarded(answer), methods=["POST"]),
        Route("/v1/requests/{id}/reject", _guarded(reject), methods=["POST"]),
        WebSocketRoute("/v1/feed", feed),
        *reach_routes(desk, _guarded, links=links, webhooks=webhooks),
        Mount("/console", StaticFiles(directory=str(STATIC)), name="console"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.desk = desk
    app.state.hub = hub
    return app
