"""A loopback Anthropic Messages API for tests: every request and reply checked by the SDK's
own types (``MessageCreateParamsNonStreaming`` and ``Message`` of ``anthropic.types``).

A request the types reject gets the API's 400 ``invalid_request_error`` and is kept in
``rejected``; a scripted reply the types reject is a bug in the test and answers 500 (kept
there too). Replies are played in the order they were queued; a request that finds none waits
until the test queues one (see :mod:`providers._scripted_api`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers._http_loopback import HTTPReply, HTTPRequest
from providers._scripted_api import RecordedRequest, ScriptedAPIServer, next_id

__all__ = ["AnthropicTestServer", "RecordedRequest"]

_KINDS = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}


class AnthropicTestServer(ScriptedAPIServer[Mapping[str, Any]]):
    """``POST /v1/messages`` on 127.0.0.1, scripted by the test (``async with`` runs it).

    A reply is a Message body's ``content`` and ``stop_reason`` (the rest is filled in), or a
    function of the request body returning one.
    """

    route = "/v1/messages"
    params_type_name = "anthropic.types.message_create_params.MessageCreateParamsNonStreaming"
    response_model_name = "anthropic.types.Message"

    def reply_text(self, text: str) -> None:
        """Queue a reply with text only (``stop_reason`` ``end_turn``)."""
        self.reply({"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})

    def reply_tool_use(self, *calls: tuple[str, Mapping[str, Any]], text: str = "") -> list[str]:
        """Queue a reply calling tools (``(name, input)`` pairs); returns their ids."""
        ids = [next_id("toolu_") for _ in calls]
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool_use", "id": i, "name": name, "input": dict(arguments)}
            for i, (name, arguments) in zip(ids, calls, strict=True)
        ]
        self.reply({"content": content, "stop_reason": "tool_use"})
        return ids

    def error(self, status: int, message: str, param: str = "") -> HTTPReply:
        kind = _KINDS.get(status, "api_error")
        return HTTPReply(status, {"type": "error", "error": {"type": kind, "message": message}})

    def unauthorised(self, request: HTTPRequest) -> str | None:
        key = request.headers.get("x-api-key") or request.headers.get("authorization")
        if not key or not request.headers.get("anthropic-version"):
            return "an API key and anthropic-version are needed"
        return None

    def respond(self, body: dict[str, Any], reply: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            **reply,
        }
