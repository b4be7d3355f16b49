"""A loopback Anthropic Messages API for tests: every request and reply checked by the SDK's
own types (``MessageCreateParamsNonStreaming`` and ``Message`` of ``anthropic.types``).

A request the types reject gets the API's 400 ``invalid_request_error`` and is kept in
:attr:`AnthropicTestServer.rejected`; a scripted reply the types reject is a bug in the test and
answers 500 (kept there too). Replies are played in the order they were queued; a request that
finds none waits until the test queues one.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from providers._http_loopback import HTTPReply, HTTPRequest, LoopbackHTTPServer
from providers._sdk_check import PayloadError, check_model, check_params

__all__ = ["AnthropicTestServer", "RecordedRequest"]

Reply = Mapping[str, Any] | Callable[[dict[str, Any]], Mapping[str, Any]]
"""A Message body (``content`` and ``stop_reason`` suffice), or a function of the request."""

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request the server accepted: its validated body and when it arrived
    (``time.perf_counter()``)."""

    body: dict[str, Any]
    arrived: float


def _types() -> Any:
    try:
        import anthropic.types as types
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError("the Anthropic test server needs voice-hitl[anthropic]") from exc
    return types


def _error(status: int, kind: str, message: str) -> HTTPReply:
    return HTTPReply(status, {"type": "error", "error": {"type": kind, "message": message}})


class AnthropicTestServer:
    """``POST /v1/messages`` on 127.0.0.1, scripted by the test (``async with`` runs it)."""

    def __init__(self) -> None:
        self._http = LoopbackHTTPServer(self._handle)
        self._replies: asyncio.Queue[Reply] = asyncio.Queue()
        self._arrivals: asyncio.Queue[RecordedRequest] = asyncio.Queue()
        self.requests: list[RecordedRequest] = []
        self.rejected: list[PayloadError] = []

    @property
    def url(self) -> str:
        """The base URL to give the SDK client (``base_url=``)."""
        return self._http.url

    async def __aenter__(self) -> AnthropicTestServer:
        await self._http.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._http.aclose()

    def reply(self, reply: Reply) -> None:
        """Queue a reply: a Message body, or a function of the request body returning one."""
        self._replies.put_nowait(reply)

    def reply_text(self, text: str) -> None:
        """Queue a reply with text only (``stop_reason`` ``end_turn``)."""
        self.reply({"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})

    def reply_tool_use(self, *calls: tuple[str, Mapping[str, Any]], text: str = "") -> list[str]:
        """Queue a reply calling tools (``(name, input)`` pairs); returns their ids."""
        ids = [f"toolu_{next(_ids):06d}" for _ in calls]
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool_use", "id": i, "name": name, "input": dict(arguments)}
            for i, (name, arguments) in zip(ids, calls, strict=True)
        ]
        self.reply({"content": content, "stop_reason": "tool_use"})
        return ids

    async def next_request(self) -> RecordedRequest:
        """The next accepted request, in arrival order (waits for it).

        Cancellation: safe.
        """
        return await self._arrivals.get()

    async def _handle(self, request: HTTPRequest) -> HTTPReply:
        types = _types()
        if (request.method, request.path.split("?")[0]) != ("POST", "/v1/messages"):
            return _error(404, "not_found_error", f"no route {request.method} {request.path}")
        key = request.headers.get("x-api-key") or request.headers.get("authorization")
        if not key or not request.headers.get("anthropic-version"):
            return _error(401, "authentication_error", "an API key and anthropic-version needed")
        try:
            params = types.message_create_params.MessageCreateParamsNonStreaming
            body = check_params(params, request.json())
        except (PayloadError, ValueError) as exc:
            error = exc if isinstance(exc, PayloadError) else PayloadError(f"not JSON: {exc}")
            self.rejected.append(error)
            return _error(400, "invalid_request_error", str(error))
        recorded = RecordedRequest(body, time.perf_counter())
        self.requests.append(recorded)
        self._arrivals.put_nowait(recorded)
        script = await self._replies.get()
        reply = dict(script(body) if callable(script) else script)
        message = {
            "id": f"msg_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            **reply,
        }
        try:
            check_model(types.Message, message)
        except PayloadError as exc:
            self.rejected.append(exc)
            return _error(500, "api_error", f"the test scripted an invalid reply: {exc}")
        return HTTPReply(200, message)
