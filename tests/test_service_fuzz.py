"""Schemathesis over the operator API's OpenAPI document: no input gets a 500, every
response is documented and matches its schema (a request's story included: the app keeps a
journal holding the board's requests)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from service_rig import ANN, TOKENS
from starlette.routing import Mount, Route, WebSocketRoute

from voice_hitl.board import BoardOpened, BoardRequest, BoardStatus, ClaimResult, MemoryBoard
from voice_hitl.journal import Journal, SqliteJournalStore
from voice_hitl.service import AnswerLinks, Webhooks, WebhookSubscription, create_app
from voice_hitl.service._openapi import openapi_document
from voice_hitl.service._story import journal_board

FOLDER = tempfile.mkdtemp(prefix="voice-hitl-fuzz-")
KEY = b"fuzz-key"
LINK_KEY = b"fuzz-link-key-0123456789"


class InstantWorkerBoard(MemoryBoard):
    """A board whose worker "w" takes every claim at once, as a live worker's bridge would
    (the fuzz's synchronous calls leave no loop for a real bridge to run in)."""

    async def claim(
        self,
        request_id: str,
        status: BoardStatus,
        text: str,
        *,
        token: str,
        window: float,
        by: str | None = None,
        via: str | None = None,
    ) -> ClaimResult:
        result = await super().claim(
            request_id, status, text, token=token, window=window, by=by, via=via
        )
        if result.outcome == "claimed" and await self.take(request_id, token, "w"):
            await self.settle(request_id, status, text, by=by, via=via, worker="w")
        return result


def _board() -> MemoryBoard:
    board = InstantWorkerBoard()
    writer = Journal.open(Path(FOLDER) / "journal.sqlite3", KEY)

    async def fill() -> None:
        await board.heartbeat("w", 3600)
        for n, arguments in enumerate(
            [
                {"question": "Colour?", "choices": ["red", "blue"]},
                {"question": "How much?", "mode": "number", "min": 1, "max": 10},
                {"question": "PIN?", "mode": "digits", "length": 4},
            ]
        ):
            request = BoardRequest(str(n), "AskUserQuestion", arguments, "w", time.time())
            await board.publish(request)
            journal_board(writer)(BoardOpened(request))  # as the service's feed would

    asyncio.run(fill())
    writer.close()
    return board


BOARD = _board()
# The app reads the stories; no writer thread runs for the whole session (never started).
JOURNAL = Journal(SqliteJournalStore(Path(FOLDER) / "journal.sqlite3"), KEY)
LINKS = AnswerLinks(LINK_KEY, "http://testserver")


class UnsentWebhooks(Webhooks):
    """Webhooks that never start sending: the fuzz runs the app's lifespan around each call,
    and a real dispatcher starts once."""

    async def start(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def _webhooks() -> Webhooks:
    """A one-event queue: the second event of a request is a dead letter at once, so the
    dead-letter routes have letters to list and retry."""
    hooks = UnsentWebhooks(
        [WebhookSubscription("chat", "http://127.0.0.1:9/hook", "s" * 16)],
        links=LINKS.for_request,
        queue_size=1,
    )
    request = asyncio.run(BOARD.get("0"))
    assert request is not None
    for _ in range(3):
        hooks.offer("request.opened", request)
    assert len(hooks.dead_letters()) == 2
    return hooks


APP = create_app(BOARD, TOKENS, journal=JOURNAL, webhooks=_webhooks(), links=LINKS)
schema = schemathesis.openapi.from_asgi("/v1/openapi.json", APP)
schema.config.generation.update(
    modes=[schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE]
)
STATUSES: list[int] = []


@pytest.fixture(scope="module", autouse=True)
def _journal_closed() -> Iterator[None]:
    yield
    JOURNAL.close()
    shutil.rmtree(FOLDER, ignore_errors=True)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@schema.parametrize()
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_input_breaks_the_api(case: schemathesis.Case) -> None:
    response = case.call_and_validate(headers={"Authorization": f"Bearer {ANN}"}, checks=CHECKS)
    STATUSES.append(response.status_code)


def test_the_fuzz_reached_the_refusals() -> None:
    """The fuzz above sent both fitting and malformed requests (run in the same session)."""
    if not STATUSES:
        return  # run alone: nothing to look at
    assert {200, 404} <= set(STATUSES)
    assert set(STATUSES) & {400, 422}


def test_a_story_is_served_as_documented() -> None:
    """The story of a request in the journal, checked against the document's schema."""
    case = schema["/v1/requests/{id}/story"]["GET"].Case(path_parameters={"id": "1"})
    response = case.call_and_validate(headers={"Authorization": f"Bearer {ANN}"}, checks=CHECKS)
    assert response.status_code == 200
    (entry,) = response.json()["entries"]
    assert (entry["kind"], entry["data"]["event"], entry["seq"]) == ("board", "posted", 2)


def test_an_answer_link_is_served_as_documented() -> None:
    """A genuine link (the fuzz only forges them): the page, the answer, then the reuse."""
    request = BoardRequest("link", "AskUserQuestion", {"question": "Go?"}, "w", time.time())
    asyncio.run(BOARD.publish(request))
    token = LINKS.mint(request, "chat", "reject").rsplit("/", 1)[1]
    statuses = []
    for method in ("GET", "POST", "POST", "GET"):
        case = schema["/v1/links/{token}"][method].Case(path_parameters={"token": token})
        statuses.append(case.call_and_validate(checks=CHECKS).status_code)
    assert statuses == [200, 200, 410, 410]


def test_every_route_is_in_the_document() -> None:
    """Each HTTP route the app registers, with each of its methods, is described (the
    live feed is a WebSocket and the console's files a static mount: OpenAPI 3.0 has no
    words for either)."""
    paths = openapi_document()["paths"]
    described = {(path, method) for path, ops in paths.items() for method in ops}
    registered = set()
    for route in APP.routes:
        if isinstance(route, Route):
            methods = (route.methods or set()) - {"HEAD"}
            registered |= {(route.path, m.lower()) for m in methods}
        else:
            assert isinstance(route, (WebSocketRoute, Mount)), route
    assert ("/v1/links/{token}", "post") in registered
    assert registered - described == set()
    assert described - registered == set()
