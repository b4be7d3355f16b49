"""Sans-I/O mapping between the text channel's model and OpenAI's Chat Completions JSON.

:func:`to_chat_request` turns an :class:`~voice_hitl.AIContext` into the body of ``POST
/v1/chat/completions``; :func:`from_chat_completion` reads the first choice of a response body
into an :class:`~voice_hitl.AIResponse`. A served call is replayed as the assistant's tool call
and a ``tool`` message with its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voice_hitl import AIContext, AIResponse, AIToolCall, ProviderError

from ._mapping import arguments_text

__all__ = ["from_chat_completion", "to_chat_request"]


def to_chat_request(context: AIContext, *, model: str) -> dict[str, Any]:
    """The ``POST /v1/chat/completions`` body for one round."""
    messages: list[dict[str, Any]] = []
    if context.system_prompt:
        messages.append({"role": "system", "content": context.system_prompt})
    for message in context.messages:
        if message.role == "user":
            messages.append({"role": "user", "content": message.content})
        elif message.role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
        else:
            turn: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                turn["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": arguments_text(call)},
                    }
                    for call in message.tool_calls
                ]
            messages.append(turn)
            for call in message.tool_calls:
                if call.served is not None:
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": call.served.result}
                    )
    body: dict[str, Any] = {"model": model, "messages": messages}
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in context.tools
        ]
    return body


def from_chat_completion(body: Mapping[str, Any]) -> AIResponse:
    """An :class:`AIResponse` from a Chat Completions response body (its first choice).

    Raises:
        ProviderError: The body is not a completion with a choice (``code="bad_response"``).
    """
    choices = body.get("choices")
    if body.get("object") != "chat.completion" or not isinstance(choices, list) or not choices:
        raise ProviderError(
            "OpenAI answered something that is not a chat completion", code="bad_response"
        )
    message = choices[0].get("message") or {}
    calls = [
        AIToolCall(str(c["id"]), str(c["function"]["name"]), str(c["function"]["arguments"]))
        for c in message.get("tool_calls") or ()
        if c.get("type") == "function"
    ]
    return AIResponse(str(message.get("content") or ""), tuple(calls))
