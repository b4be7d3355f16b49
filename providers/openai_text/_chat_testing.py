"""A loopback OpenAI Chat Completions API for tests: every request and reply checked by the
SDK's own types (``CompletionCreateParamsNonStreaming`` and ``ChatCompletion`` of
``openai.types.chat``); the shell is :mod:`providers._scripted_api`."""

from __future__ import annotations

import itertools
import time
from typing import Any

from pydantic import BaseModel

from providers._http_loopback import HTTPReply, HTTPRequest
from providers._scripted_api import ScriptedAPIServer

from ._testing import openai_error, openai_unauthorised

__all__ = ["ChatTestServer"]

_ids = itertools.count(1)


def _types() -> Any:
    try:
        from openai.types import chat
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError("the Chat Completions test server needs voice-hitl[openai]") from exc
    return chat


class ChatTestServer(ScriptedAPIServer[dict[str, Any]]):
    """``POST /v1/chat/completions`` on 127.0.0.1, scripted by the test.

    A reply is the first choice's ``message`` (``finish_reason`` follows from it), or a
    function of the request body returning one.
    """

    route = "/v1/chat/completions"

    async def __aenter__(self) -> ChatTestServer:
        await super().__aenter__()
        return self

    @property
    def url(self) -> str:
        """The base URL to give the SDK client (``base_url=``), ``/v1`` included."""
        return f"{self._http.url}/v1"

    def reply_text(self, text: str) -> None:
        """Queue an assistant message with text only."""
        self.reply({"role": "assistant", "content": text})

    def reply_tool_calls(self, *calls: tuple[str, str]) -> list[str]:
        """Queue an assistant message calling functions (``(name, arguments JSON)`` pairs);
        returns the call ids."""
        ids = [f"call_{next(_ids):06d}" for _ in calls]
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in zip(ids, calls, strict=True)
        ]
        self.reply({"role": "assistant", "content": None, "tool_calls": tool_calls})
        return ids

    def error(self, status: int, message: str, param: str = "") -> HTTPReply:
        return openai_error(status, message, param)

    def unauthorised(self, request: HTTPRequest) -> str | None:
        return openai_unauthorised(request)

    def params_type(self) -> Any:
        return _types().completion_create_params.CompletionCreateParamsNonStreaming

    def response_model(self) -> type[BaseModel]:
        model: type[BaseModel] = _types().ChatCompletion
        return model

    def respond(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        return {
            "id": f"chatcmpl-{next(_ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": finish, "message": reply}],
        }
