"""Routes that reach people away from the console: answer links and webhook dead letters.

- ``GET /v1/links/{token}``: a page saying what the link will do, with a button;
  ``POST /v1/links/{token}``: does it (through :class:`OperatorDesk`, like the HTTP API), and
  a page says what happened (see :mod:`voice_hitl.service._links`).
- ``POST /v1/requests/{id}/links`` ``{"to"?: "sms:+33..."}``: an operator makes the links for
  a message of their own (an SMS, an e-mail); the holder is ``<operator>`` or
  ``<operator>/<to>``, so the answer is recorded under the operator who sent the links.
- ``GET /v1/webhooks/dead``: the dead letters in the operator's rooms and channels;
  ``POST /v1/webhooks/dead/{id}/retry`` one, ``POST /v1/webhooks/dead/retry`` all of them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..board import BoardRequest, BoardUnavailableError
from ..board._model import iso
from ._auth import Operator
from ._desk import OperatorDesk
from ._http import read_json
from ._links import AnswerLinks, LinkClaim, LinkError
from ._refusals import DeskError, InvalidError, NotFoundError, SettledError
from ._webhooks import Webhooks

__all__ = ["reach_routes"]

Handler = Callable[[Request], Awaitable[Response]]
Guard = Callable[[Handler], Handler]

_TO = re.compile(r"[A-Za-z0-9._@+:-]{1,64}")

_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;
color:#1d2330}}button{{font:inherit;padding:.5rem 1.2rem;border-radius:.4rem;border:0;
background:#1d4ed8;color:#fff;cursor:pointer}}.q{{font-size:1.2rem}}</style></head>
<body><main><h1>{title}</h1>{body}</main></body></html>"""


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(_PAGE.format(title=html.escape(title), body=body), status)


def _what(claim: LinkClaim) -> str:
    if claim.action == "reject":
        return "reject this request"
    return f"answer \u201c{claim.label or claim.value}\u201d"


def _settled_page(request: BoardRequest) -> HTMLResponse:
    who = f" by {request.settled_by}" if request.settled_by else ""
    via = f" via {request.settled_via}" if request.settled_via else ""
    text = (
        f"It was already {request.status}{who}{via} at {iso(request.settled_at)}. "
        "This link changed nothing."
    )
    return _page("Already settled", f"<p>{html.escape(text)}</p>", 409)


def _question(request: BoardRequest) -> str:
    spec = request.spec or {}
    args = request.arguments
    return str(spec.get("question") or args.get("question") or args.get("action") or request.tool)


def reach_routes(
    desk: OperatorDesk,
    guard: Guard,
    *,
    links: AnswerLinks | None,
    webhooks: Webhooks | None,
) -> list[Route]:
    """The routes above (links only with ``links``; dead letters answer 404 without
    ``webhooks``). ``guard`` turns :class:`DeskError` into the API's JSON refusals."""

    async def link_page(request: Request) -> Response:
        if links is None:
            return _page("Answer links are off", "<p>This service makes no answer links.</p>", 404)
        try:
            claim = links.check(request.path_params["token"])
        except LinkError as exc:
            return _page(exc.title, f"<p>{html.escape(str(exc))}. Nothing changed.</p>", exc.status)
        try:
            found = await desk.board.get(claim.request_id)
        except BoardUnavailableError:
            return _page("Try again", "<p>The service cannot reach its board right now.</p>", 503)
        if found is None:
            return _page("No such request", "<p>The request is gone. Nothing changed.</p>", 404)
        if not found.is_open:
            return _settled_page(found)
        body = (
            f'<p class="q">{html.escape(_question(found))}</p>'
            f"<p>This link will {html.escape(_what(claim))}, once.</p>"
            f'<form method="post"><button type="submit">'
            f"{html.escape(claim.label or 'Confirm')}</button></form>"
        )
        return _page("Answer a request", body)

    async def use_link(request: Request) -> Response:
        if links is None:
            return _page("Answer links are off", "<p>This service makes no answer links.</p>", 404)
        try:
            claim = links.spend(request.path_params["token"])
        except LinkError as exc:
            return _page(exc.title, f"<p>{html.escape(str(exc))}. Nothing changed.</p>", exc.status)
        holder = Operator(claim.holder)
        try:
            if claim.action == "reject":
                reason = f"rejected by {claim.holder} with an answer link"
                await desk.reject(holder, claim.request_id, reason, via=claim.via)
            else:
                await desk.answer(holder, claim.request_id, claim.value, via=claim.via)
        except BoardUnavailableError:
            links.give_back(claim)
            return _page("Try again", "<p>The service cannot reach its board right now.</p>", 503)
        except DeskError as error:
            if error.code in ("shutting_down", "being_answered"):
                links.give_back(claim)  # nothing was tried: the link still works
            if error.request is not None and not error.request.is_open:
                return _settled_page(error.request)
            return _page("Not answered", f"<p>{html.escape(error.message)}</p>", error.status)
        done = "Rejected" if claim.action == "reject" else f"Answered \u201c{claim.label}\u201d"
        return _page(done, "<p>Done: the call has it. This link cannot be used again.</p>")

    async def make_links(request: Request) -> Response:
        operator = desk.authenticate(request.headers.get("authorization"))
        if links is None:
            raise NotFoundError("this service makes no answer links")
        found = await desk.get(operator, request.path_params["id"])
        if not found.is_open:
            raise SettledError(f"request {found.id} is already {found.status}", found)
        empty = request.headers.get("content-length") == "0" or (
            "content-length" not in request.headers
            and "transfer-encoding" not in request.headers
        )
        body = {} if empty else await read_json(request)
        to = body.get("to") if isinstance(body, dict) else None
        if to is not None and (not isinstance(to, str) or not _TO.fullmatch(to)):
            raise InvalidError("'to' must be 1-64 letters, digits or . _ @ + : -")
        holder = operator.name if to is None else f"{operator.name}/{to}"
        made = links.for_request(found, holder)
        return JSONResponse({"holder": holder, "expires_in": links.ttl, "links": made})

    def hooks() -> Webhooks:
        if webhooks is None:
            raise NotFoundError("the service has no webhooks (voice-hitl serve --webhooks FILE)")
        return webhooks

    def visible(operator: Operator) -> list[str]:
        return [
            d.id for d in hooks().dead_letters() if operator.may_see_place(*d.place)
        ]

    async def dead(request: Request) -> Response:
        operator = desk.authenticate(request.headers.get("authorization"))
        seen = set(visible(operator))
        letters = [d.to_wire() for d in hooks().dead_letters() if d.id in seen]
        return JSONResponse({"dead_letters": letters})

    async def retry_one(request: Request) -> Response:
        operator = desk.authenticate(request.headers.get("authorization"))
        dead_id = request.path_params["id"]
        if dead_id not in visible(operator) or not hooks().retry(dead_id):
            raise NotFoundError(f"no dead letter {dead_id!r} in your rooms and channels")
        return JSONResponse({"retried": [dead_id]})

    async def retry_all(request: Request) -> Response:
        operator = desk.authenticate(request.headers.get("authorization"))
        retried = [d for d in visible(operator) if hooks().retry(d)]
        return JSONResponse({"retried": retried})

    return [
        Route("/v1/links/{token}", link_page, methods=["GET"]),
        Route("/v1/links/{token}", use_link, methods=["POST"]),
        Route("/v1/requests/{id}/links", guard(make_links), methods=["POST"]),
        Route("/v1/webhooks/dead", guard(dead), methods=["GET"]),
        Route("/v1/webhooks/dead/retry", guard(retry_all), methods=["POST"]),
        Route("/v1/webhooks/dead/{id}/retry", guard(retry_one), methods=["POST"]),
    ]
