"""A loopback OpenAI Chat Completions API for tests: every request and reply checked by the
SDK's own types (``CompletionCreateParamsNonStreaming`` and ``ChatCompletion`` of
``openai.types.chat``); the shell is :mod:`providers._scripted_api`."""

from __future__ import annotations

import time
from typing import Any

from providers._scripted_api import next_id

from ._testing import OpenAIScriptedServer

__all__ = ["ChatTestServer"]


class ChatTestServer(OpenAIScriptedServer[dict[str, Any]]):
    """``POST /v1/chat/completions`` on 127.0.0.1, scripted by the test.

    A reply is the first choice's ``message`` (``finish_reason`` follows from it), or a
    function of the request body returning one.
    """

    route = "/v1/chat/completions"
    params_type_name = (
        "openai.types.chat.completion_create_params.CompletionCreateParamsNonStreaming"
    )
    response_model_name = "openai.types.chat.ChatCompletion"

    def reply_text(self, text: str) -> None:
        """Queue an assistant message with text only."""
        self.reply({"role": "assistant", "content": text})

    def reply_tool_calls(self, *calls: tuple[str, str]) -> list[str]:
        """Queue an assistant message calling functions (``(name, arguments JSON)`` pairs);
        returns the call ids."""
        ids = [next_id("call_") for _ in calls]
        tool_calls = [
            {"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in zip(ids, calls, strict=True)
        ]
        self.reply({"role": "assistant", "content": None, "tool_calls": tool_calls})
        return ids

    def respond(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        return {
            "id": next_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": finish, "message": reply}],
        }
