"""Pieces of the Live API's JSON that need care: audio blobs, function declarations and
function responses.

The Live API takes caller audio as 16 kHz PCM16 and speaks 24 kHz PCM16, both base64 inside
JSON. Resampling uses the project's shared linear resampler (deterministic frame by frame).
"""

from __future__ import annotations

import json
import re
from typing import Any

from providers.realtime_ws import decode_pcm16, encode_pcm16
from voice_hitl.tools._tools import AITool
from voice_hitl.voice._provider_events import PCM16

__all__ = [
    "INPUT_RATE",
    "classify_close",
    "OUTPUT_RATE",
    "decode_audio",
    "encode_audio",
    "function_declaration",
    "function_response",
    "input_mime_type",
    "rate_of",
    "response_text",
]

INPUT_RATE = 16_000
"""The PCM rate the Live API expects for caller audio."""

OUTPUT_RATE = 24_000
"""The PCM rate the Live API speaks in (unless a blob's MIME type says otherwise)."""

_RATE = re.compile(r"rate=(\d+)")


def input_mime_type() -> str:
    """The MIME type of the caller audio the provider sends."""
    return f"audio/pcm;rate={INPUT_RATE}"


def rate_of(mime_type: str | None, default: int = OUTPUT_RATE) -> int:
    """The sample rate named by an ``audio/pcm;rate=N`` MIME type (``default`` if none)."""
    match = _RATE.search(mime_type or "")
    return int(match.group(1)) if match else default


def encode_audio(frame: PCM16, rate: int) -> str:
    """Base64 of ``frame`` (at ``rate`` Hz) as little-endian PCM16 at 16 kHz.

    Raises:
        ValueError: ``frame`` is not a one-dimensional int16 array.
    """
    return encode_pcm16(frame, rate, INPUT_RATE)


def decode_audio(data: str, wire_rate: int, rate: int) -> PCM16:
    """Decode base64 PCM16 at ``wire_rate`` (either base64 alphabet: protobuf JSON may use
    the URL-safe one) and resample it to ``rate`` Hz.

    Raises:
        ValueError: ``data`` is not base64, or not whole 16-bit samples.
    """
    return decode_pcm16(data, wire_rate, rate, url_safe=True)


def function_declaration(tool: AITool) -> dict[str, Any]:
    """The ``functionDeclarations`` entry of ``tool``.

    The tool's JSON Schema goes as ``parametersJsonSchema`` (full JSON Schema, e.g.
    ``additionalProperties``), not as the OpenAPI subset of ``parameters``.
    """
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    if tool.parameters:
        declaration["parametersJsonSchema"] = tool.parameters
    return declaration


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def function_response(call_id: str, name: str, output: str, *, is_error: bool) -> dict[str, Any]:
    """One ``functionResponses`` entry: ``{"output": ...}``, or ``{"error": ...}`` for an error.

    A JSON object or array result is sent structured; any other text as a string. An error
    written as ``{"error": X}`` is sent as ``{"error": X}``; other error text as the error.
    """
    value = _json_value(output)
    if is_error:
        detail = value["error"] if isinstance(value, dict) and "error" in value else output
        response: dict[str, Any] = {"error": detail}
    else:
        response = {"output": value if isinstance(value, dict | list) else output}
    return {"id": call_id, "name": name, "response": response}


def response_text(response: dict[str, Any]) -> tuple[str, bool]:
    """What a ``functionResponses[].response`` says, as (text, is_error): the inverse of
    :func:`function_response` (used by the test server and tests)."""
    if "error" in response:
        return json.dumps({"error": response["error"]}), True
    value = response.get("output", response)
    return (value if isinstance(value, str) else json.dumps(value)), False


def classify_close(code: int | None, reason: str) -> tuple[str, bool]:
    """Map a close of the Live socket to (error code, fatal).

    The Live API reports errors by closing the socket: 1007 for an invalid request (a bad
    ``setup``), 1008 for a policy failure (a bad key, no permission, quota), 1011 for a
    server-side failure. Fatal closes are not retried; the others are (a reconnect may help).
    """
    lowered = reason.lower()
    if "quota" in lowered or "resource_exhausted" in lowered or "exhausted" in lowered:
        return "insufficient_quota", True
    if code == 1007:
        return "invalid_request", True
    if code == 1008:
        unauthorized = "key" in lowered or "permission" in lowered or "auth" in lowered
        return ("unauthorized" if unauthorized else "policy_violation"), True
    if code == 1011:
        return "server_error", False
    if code in (1000, 1001):
        return "server_closed", False
    return "connection_lost", False
