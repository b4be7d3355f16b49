"""Sans-I/O mapping between the text channel's model and OpenAI's Responses API JSON.

:func:`to_request` turns an :class:`~voice_hitl.AIContext` into the body of ``POST
/v1/responses`` (stateless: ``store`` is off and the whole conversation is sent each round);
:func:`from_response` turns a response body into an :class:`~voice_hitl.AIResponse`. A remote
MCP call the API ran itself (an ``mcp_call`` item) comes back as a served call: the channel
reports it and never runs it; later rounds replay it as a function call and its output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from voice_hitl import AIContext, AIResponse, AIToolCall, ProviderError, ServedCall

__all__ = ["arguments_text", "from_response", "to_request"]


def arguments_text(call: AIToolCall) -> str:
    """The call's arguments as the JSON text the API carries."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(dict(call.arguments))


def to_request(context: AIContext, *, model: str) -> dict[str, Any]:
    """The ``POST /v1/responses`` body for one round."""
    items: list[dict[str, Any]] = []
    for message in context.messages:
        if message.role == "user":
            items.append({"role": "user", "content": message.content})
        elif message.role == "assistant":
            if message.content:
                items.append({"role": "assistant", "content": message.content})
            for call in message.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": arguments_text(call),
                    }
                )
                if call.served is not None:
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": call.id,
                            "output": call.served.result,
                        }
                    )
        else:
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content,
                }
            )
    body: dict[str, Any] = {"model": model, "input": items, "store": False}
    if context.system_prompt:
        body["instructions"] = context.system_prompt
    if context.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": False,
            }
            for t in context.tools
        ]
    return body


def from_response(body: Mapping[str, Any]) -> AIResponse:
    """An :class:`AIResponse` from a Responses API response body.

    Raises:
        ProviderError: The body is not a response (``code="bad_response"``), or the response
            failed (``code`` is its error code).
    """
    output = body.get("output")
    if body.get("object") != "response" or not isinstance(output, list):
        raise ProviderError(
            "OpenAI answered something that is not a response", code="bad_response"
        )
    error = body.get("error")
    if isinstance(error, Mapping):
        raise ProviderError(
            f"OpenAI response failed: {error.get('message', '')}",
            code=str(error.get("code", "failed")),
        )
    texts: list[str] = []
    calls: list[AIToolCall] = []
    for item in output:
        kind = item.get("type")
        if kind == "message":
            parts = item.get("content", ())
            texts.extend(str(p.get("text", "")) for p in parts if p.get("type") == "output_text")
        elif kind == "function_call":
            name, arguments = str(item["name"]), str(item["arguments"])
            calls.append(AIToolCall(str(item["call_id"]), name, arguments))
        elif kind == "mcp_call":
            failure = item.get("error")
            result = str(failure if failure else item.get("output") or "")
            name, arguments = str(item["name"]), str(item["arguments"])
            served = ServedCall(result, bool(failure))
            calls.append(AIToolCall(str(item["id"]), name, arguments, served))
    return AIResponse("".join(texts), tuple(calls))
