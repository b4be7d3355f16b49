"""A loopback OpenAI Responses API for tests: every request and reply checked by the SDK's own
types (``ResponseCreateParamsNonStreaming`` and ``Response`` of ``openai.types.responses``).

A request the types reject gets the API's 400 ``invalid_request_error`` (with the offending
``param``) and is kept in ``rejected``; a scripted reply the types reject is a bug in the test
and answers 500 (kept there too). Replies are played in the order they were queued; a request
that finds none waits until the test queues one (see :mod:`providers._scripted_api`).
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from providers._http_loopback import HTTPReply, HTTPRequest
from providers._scripted_api import ScriptedAPIServer, next_id

__all__ = ["OpenAIScriptedServer", "ResponsesTestServer"]

R = TypeVar("R")

_KINDS = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}


def _id(prefix: str) -> str:
    return next_id(f"{prefix}_")


class OpenAIScriptedServer(ScriptedAPIServer[R]):
    """What OpenAI's loopback servers share: the ``/v1`` base path, the bearer key and the
    error body."""

    base_path = "/v1"

    def error(self, status: int, message: str, param: str = "") -> HTTPReply:
        """OpenAI's error body (``invalid_request_error`` below 500, ``server_error`` above)."""
        kind = _KINDS.get(status, "server_error")
        code = "invalid_api_key" if status == 401 else None
        error = {"message": message, "type": kind, "param": param or None, "code": code}
        return HTTPReply(status, {"error": error})

    def unauthorised(self, request: HTTPRequest) -> str | None:
        """Why OpenAI would refuse the request's credentials (no bearer key), or None."""
        if not request.headers.get("authorization", "").startswith("Bearer "):
            return "no API key"
        return None


class ResponsesTestServer(OpenAIScriptedServer[list[dict[str, Any]]]):
    """``POST /v1/responses`` on 127.0.0.1, scripted by the test (``async with`` runs it).

    A reply is a response's ``output`` items (the rest is filled in), or a function of the
    request body returning them.
    """

    route = "/v1/responses"
    params_type_name = (
        "openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming"
    )
    response_model_name = "openai.types.responses.Response"

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

    def respond(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": _id("resp"),
            "object": "response",
            "created_at": time.time(),
            "model": body["model"],
            "status": "completed",
            "output": reply,
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
