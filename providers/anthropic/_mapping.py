"""Sans-I/O mapping between the text channel's model and Anthropic's Messages API JSON.

:func:`to_request` turns an :class:`~voice_hitl.AIContext` into the body of ``POST
/v1/messages``; :func:`from_message` turns a response body into an
:class:`~voice_hitl.AIResponse`. Tool results of one round become one ``user`` message of
``tool_result`` blocks, as the API requires. A call the provider ran itself (served) is
replayed as its ``tool_use`` and its ``tool_result``, so the model keeps reading it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from voice_hitl import AIContext, AIMessage, AIResponse, AIToolCall, ProviderError

__all__ = ["from_message", "to_request"]


def _input_of(call: AIToolCall) -> dict[str, Any]:
    if isinstance(call.arguments, Mapping):
        return dict(call.arguments)
    try:
        value = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {"_unparsed_arguments": call.arguments}
    return value if isinstance(value, dict) else {"_unparsed_arguments": call.arguments}


def _assistant(message: AIMessage) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The assistant turn's blocks, and the results of its served calls."""
    content: list[dict[str, Any]] = []
    served: list[dict[str, Any]] = []
    if message.content:
        content.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        content.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": _input_of(call)}
        )
        if call.served is not None:
            served.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": call.served.result,
                    "is_error": call.served.is_error,
                }
            )
    turn = {"role": "assistant", "content": content} if content else None
    return turn, served


def to_request(context: AIContext, *, model: str, max_tokens: int) -> dict[str, Any]:
    """The ``POST /v1/messages`` body for one round."""
    messages: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    def flush() -> None:
        if results:
            messages.append({"role": "user", "content": list(results)})
            results.clear()

    for message in context.messages:
        if message.role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
            if message.content:
                block["content"] = message.content
            if message.is_error:
                block["is_error"] = True
            results.append(block)
            continue
        flush()
        if message.role == "user":
            messages.append({"role": "user", "content": message.content})
        else:
            turn, served = _assistant(message)
            if turn is not None:
                messages.append(turn)
            results.extend(served)
    flush()
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if context.system_prompt:
        body["system"] = context.system_prompt
    if context.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in context.tools
        ]
    return body


def from_message(body: Mapping[str, Any]) -> AIResponse:
    """An :class:`AIResponse` from a Messages API response body.

    Raises:
        ProviderError: The body is not a message (``code="bad_response"``).
    """
    content = body.get("content")
    if body.get("type") != "message" or not isinstance(content, list):
        raise ProviderError(
            "Anthropic answered something that is not a message", code="bad_response"
        )
    texts: list[str] = []
    calls: list[AIToolCall] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            arguments = dict(block.get("input") or {})
            calls.append(AIToolCall(str(block["id"]), str(block["name"]), arguments))
    return AIResponse("".join(texts), tuple(calls))
