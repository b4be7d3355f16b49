"""A loopback OpenAI Responses API for tests: every request and reply checked by the SDK's own
types (``ResponseCreateParamsNonStreaming`` and ``Response`` of ``openai.types.responses``).

A request the types reject gets the API's 400 ``invalid_request_error`` (with the offending
``param``) and is kept in :attr:`ResponsesTestServer.rejected`; a scripted reply the types
reject is a bug in the test and answers 500 (kept there too). Replies are played in the order
they were queued; a request that finds none waits until the test queues one.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

from providers._http_loopback import HTTPReply, HTTPRequest, LoopbackHTTPServer
from providers._sdk_check import PayloadError, check_model, check_params
from providers.anthropic._testing import RecordedRequest

__all__ = ["ResponsesTestServer"]

Reply = list[dict[str, Any]] | Callable[[dict[str, Any]], list[dict[str, Any]]]
"""A response's ``output`` items, or a function of the request returning them."""

_ids = itertools.count(1)


def _types() -> Any:
    try:
        from openai.types import responses
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError("the Responses test server needs voice-hitl[openai]") from exc
    return responses


def _error(
    status: int,
    message: str,
    param: str | None = None,
    *,
    kind: str = "invalid_request_error",
    code: str | None = None,
) -> HTTPReply:
    error = {"message": message, "type": kind, "param": param, "code": code}
    return HTTPReply(status, {"error": error})


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


class ResponsesTestServer:
    """``POST /v1/responses`` on 127.0.0.1, scripted by the test (``async with`` runs it)."""

    def __init__(self) -> None:
        self._http = LoopbackHTTPServer(self._handle)
        self._replies: asyncio.Queue[Reply] = asyncio.Queue()
        self._arrivals: asyncio.Queue[RecordedRequest] = asyncio.Queue()
        self.requests: list[RecordedRequest] = []
        self.rejected: list[PayloadError] = []

    @property
    def url(self) -> str:
        """The base URL to give the SDK client (``base_url=``), ``/v1`` included."""
        return f"{self._http.url}/v1"

    async def __aenter__(self) -> ResponsesTestServer:
        await self._http.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._http.aclose()

    def reply(self, reply: Reply) -> None:
        """Queue a reply: ``output`` items, or a function of the request body returning them."""
        self._replies.put_nowait(reply)

    def reply_text(self, text: str) -> None:
        """Queue a reply with one assistant message."""
        self.reply([self.message(text)])

    def reply_function_calls(self, *calls: tuple[str, str], text: str = "") -> list[str]:
        """Queue a reply calling functions (``(name, arguments JSON)`` pairs); returns call ids."""
        ids = [_id("call") for _ in calls]
        items = [self.message(text)] if text else []
        for call_id, (name, arguments) in zip(ids, calls, strict=True):
            items.append(
                {
                    "type": "function_call",
                    "id": _id("fc"),
                    "call_id": call_id,
                    "name": name,
                    "arguments": arguments,
                    "status": "completed",
                }
            )
        self.reply(items)
        return ids

    @staticmethod
    def message(text: str) -> dict[str, Any]:
        """An assistant ``message`` output item."""
        return {
            "type": "message",
            "id": _id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    @staticmethod
    def mcp_call(
        name: str, arguments: str, *, output: str = "", error: str | None = None
    ) -> dict[str, Any]:
        """An ``mcp_call`` output item: a remote MCP tool the API ran itself."""
        item: dict[str, Any] = {
            "type": "mcp_call",
            "id": _id("mcp"),
            "name": name,
            "arguments": arguments,
            "server_label": "remote",
            "status": "failed" if error else "completed",
        }
        if error:
            item["error"] = error
        else:
            item["output"] = output
        return item

    async def next_request(self) -> RecordedRequest:
        """The next accepted request, in arrival order (waits for it).

        Cancellation: safe.
        """
        return await self._arrivals.get()

    async def _handle(self, request: HTTPRequest) -> HTTPReply:
        types = _types()
        if (request.method, request.path.split("?")[0]) != ("POST", "/v1/responses"):
            return _error(404, f"no route {request.method} {request.path}")
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return _error(401, "no API key", code="invalid_api_key")
        try:
            params = types.response_create_params.ResponseCreateParamsNonStreaming
            body = check_params(params, request.json())
        except (PayloadError, ValueError) as exc:
            error = exc if isinstance(exc, PayloadError) else PayloadError(f"not JSON: {exc}")
            self.rejected.append(error)
            return _error(400, str(error), error.param or None)
        recorded = RecordedRequest(body, time.perf_counter())
        self.requests.append(recorded)
        self._arrivals.put_nowait(recorded)
        script = await self._replies.get()
        output = script(body) if callable(script) else script
        response = {
            "id": _id("resp"),
            "object": "response",
            "created_at": time.time(),
            "model": body["model"],
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools", []),
            "usage": {
                "input_tokens": 1,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": 1,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 2,
            },
        }
        try:
            check_model(types.Response, response)
        except PayloadError as exc:
            self.rejected.append(exc)
            message = f"the test scripted an invalid reply: {exc}"
            return _error(500, message, kind="server_error")
        return HTTPReply(200, response)
