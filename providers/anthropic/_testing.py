"""A loopback Anthropic Messages API for tests: every request and reply checked by the SDK's
own types (``MessageCreateParamsNonStreaming`` and ``Message`` of ``anthropic.types``).

A request the types reject gets the API's 400 ``invalid_request_error`` and is kept in
``rejected``; a scripted reply the types reject is a bug in the test and answers 500 (kept
there too). Replies are played in the order they were queued; a request that finds none waits
until the test queues one (see :mod:`providers._scripted_api`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from providers._http_loopback import HTTPReply, HTTPRequest
from providers._scripted_api import RecordedRequest, ScriptedAPIServer

__all__ = ["AnthropicTestServer", "RecordedRequest"]

_ids = itertools.count(1)

_KINDS = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}


def _types() -> Any:
    try:
        import anthropic.types as types
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError("the Anthropic test server needs voice-hitl[anthropic]") from exc
    return types


class AnthropicTestServer(ScriptedAPIServer[Mapping[str, Any]]):
    """``POST /v1/messages`` on 127.0.0.1, scripted by the test (``async with`` runs it).

    A reply is a Message body's ``content`` and ``stop_reason`` (the rest is filled in), or a
    function of the request body returning one.
    """

    route = "/v1/messages"

    async def __aenter__(self) -> AnthropicTestServer:
        await super().__aenter__()
        return self

    @property
    def url(self) -> str:
        """The base URL to give the SDK client (``base_url=``)."""
        return self._http.url

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

    def error(self, status: int, message: str, param: str = "") -> HTTPReply:
        kind = _KINDS.get(status, "api_error")
        return HTTPReply(status, {"type": "error", "error": {"type": kind, "message": message}})

    def unauthorised(self, request: HTTPRequest) -> str | None:
        key = request.headers.get("x-api-key") or request.headers.get("authorization")
        if not key or not request.headers.get("anthropic-version"):
            return "an API key and anthropic-version are needed"
        return None

    def params_type(self) -> Any:
        return _types().message_create_params.MessageCreateParamsNonStreaming

    def response_model(self) -> type[BaseModel]:
        model: type[BaseModel] = _types().Message
        return model

    def respond(self, body: dict[str, Any], reply: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": f"msg_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            **reply,
        }
