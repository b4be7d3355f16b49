"""The shared shell of the text providers' loopback servers: one JSON endpoint, scripted replies.

A vendor's server (:class:`ScriptedAPIServer` subclass) names its route, the path its SDK's
``base_url`` carries, the SDK type its requests must match and the SDK model its replies must
match; it checks its auth headers, writes its error body and wraps a scripted reply into a full
response body. The shell does the rest the same way for
every vendor: a request the SDK's types reject gets a 400 and is kept in ``rejected``; an
accepted one is recorded (``requests``, :meth:`next_request`) and answered with the next
queued reply (waiting up to ``reply_timeout`` seconds for one if none is queued, then a 500
naming the missing reply); a scripted reply the SDK's model rejects is a bug in the test and
answers 500 (kept in ``rejected`` too). A test that plays a broken server queues an
:class:`~providers._http_loopback.HTTPReply` instead (an HTML page, malformed JSON, a body cut
mid-way: sent as is); a client that hangs up while its request waits is counted in
:attr:`~ScriptedAPIServer.dropped`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import BaseModel

from providers._http_loopback import HTTPReply, HTTPRequest, LoopbackHTTPServer
from providers._sdk_check import PayloadError, check_model, check_params
from providers._sdk_text import import_sdk

__all__ = ["RecordedRequest", "ScriptedAPIServer", "next_id"]

R = TypeVar("R")

_ids = itertools.count(1)


def next_id(prefix: str) -> str:
    """A fresh id for a scripted object: ``prefix`` and six digits (``msg_000042``)."""
    return f"{prefix}{next(_ids):06d}"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request the server accepted: its validated body and when it arrived
    (``time.perf_counter()``)."""

    body: dict[str, Any]
    arrived: float


class ScriptedAPIServer(Generic[R]):
    """One JSON endpoint on 127.0.0.1 answering queued replies (``async with`` runs it).

    Args:
        reply_timeout: How long a request waits for the test to queue its reply.
    """

    route = "/"
    """The path requests must ``POST`` to."""
    base_path = ""
    """What the SDK's ``base_url`` carries after the host (``/v1`` for OpenAI)."""
    params_type_name: ClassVar[str]
    """The dotted name of the SDK's ``*Params`` type requests must match."""
    response_model_name: ClassVar[str]
    """The dotted name of the SDK's model replies must match."""

    def __init__(self, *, reply_timeout: float = 10.0) -> None:
        self.reply_timeout = reply_timeout
        self._http = LoopbackHTTPServer(self._handle)
        self._replies: asyncio.Queue[R | HTTPReply | Callable[[dict[str, Any]], R]] = (
            asyncio.Queue()
        )
        self._arrivals: asyncio.Queue[RecordedRequest] = asyncio.Queue()
        self.requests: list[RecordedRequest] = []
        self.rejected: list[PayloadError] = []

    async def __aenter__(self) -> Self:
        await self._http.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._http.aclose()

    @property
    def url(self) -> str:
        """The base URL to give the SDK client (``base_url=``), :attr:`base_path` included."""
        return f"{self._http.url}{self.base_path}"

    def reply(self, reply: R | HTTPReply | Callable[[dict[str, Any]], R]) -> None:
        """Queue a reply, or a function of the request body returning one, or an
        :class:`HTTPReply` to send as is (unchecked: a broken server)."""
        self._replies.put_nowait(reply)

    @property
    def dropped(self) -> list[HTTPRequest]:
        """Requests whose client hung up before their reply was sent."""
        return list(self._http.dropped)

    async def wait_dropped(self, count: int = 1) -> list[HTTPRequest]:
        """Wait until ``count`` clients have hung up on a request still waiting.

        Cancellation: safe.
        """
        return await self._http.wait_dropped(count)

    async def wait_hangups(self, count: int = 1) -> int:
        """Wait until ``count`` connections were closed by their client before their first
        reply, mid-request or before a whole request arrived; returns how many were.

        Cancellation: safe.
        """
        return await self._http.wait_hangups(count)

    async def next_request(self) -> RecordedRequest:
        """The next accepted request, in arrival order (waits for it).

        Cancellation: safe.
        """
        return await self._arrivals.get()

    # -- what a vendor's server says -------------------------------------------------------

    def error(self, status: int, message: str, param: str = "") -> HTTPReply:
        """The vendor's error body."""
        raise NotImplementedError

    def unauthorised(self, request: HTTPRequest) -> str | None:
        """Why the request's credentials are refused, or None."""
        raise NotImplementedError

    def params_type(self) -> Any:
        """The SDK's ``*Params`` type requests must match (:attr:`params_type_name`)."""
        return self._sdk_name(self.params_type_name)

    def response_model(self) -> type[BaseModel]:
        """The SDK's model replies must match (:attr:`response_model_name`)."""
        model: type[BaseModel] = self._sdk_name(self.response_model_name)
        return model

    def respond(self, body: dict[str, Any], reply: R) -> dict[str, Any]:
        """The full response body for a scripted reply to ``body``."""
        raise NotImplementedError

    # -- the shell -------------------------------------------------------------------------

    def _sdk_name(self, dotted: str) -> Any:
        module, name = dotted.rsplit(".", 1)
        return getattr(import_sdk(module, type(self).__name__), name)

    async def _handle(self, request: HTTPRequest) -> HTTPReply:
        if (request.method, request.path.split("?")[0]) != ("POST", self.route):
            return self.error(404, f"no route {request.method} {request.path}")
        refused = self.unauthorised(request)
        if refused is not None:
            return self.error(401, refused)
        try:
            body = check_params(self.params_type(), request.json())
        except (PayloadError, ValueError) as exc:
            error = exc if isinstance(exc, PayloadError) else PayloadError(f"not JSON: {exc}")
            self.rejected.append(error)
            return self.error(400, str(error), error.param)
        recorded = RecordedRequest(body, time.perf_counter())
        self.requests.append(recorded)
        self._arrivals.put_nowait(recorded)
        try:
            async with asyncio.timeout(self.reply_timeout):
                script = await self._replies.get()
        except TimeoutError:
            missing = PayloadError(f"no reply was queued within {self.reply_timeout:g}s")
            self.rejected.append(missing)
            return self.error(500, str(missing))
        if isinstance(script, HTTPReply):
            return script
        reply: R = script(body) if callable(script) else script
        response = self.respond(body, reply)
        try:
            check_model(self.response_model(), response)
        except PayloadError as exc:
            self.rejected.append(exc)
            return self.error(500, f"the test scripted an invalid reply: {exc}")
        return HTTPReply(200, response)
