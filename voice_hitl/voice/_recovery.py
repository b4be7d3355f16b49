"""Recovering a tool call the model spoke instead of issuing.

Some realtime models say ``call:NAME{key: value, ...}`` aloud rather than calling the tool. A
final assistant transcription that *ends* with such a sentence, for a tool in the toolset, is
turned back into a call. Everything else is left alone: recovery never fires on ordinary speech.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..tools._tools import AITool

__all__ = ["RecoveredCall", "recover_tool_call"]

_CALL = re.compile(
    r"(?P<before>.*?)(?:^|(?<=[\s.,;:!?]))call:\s*(?P<name>[A-Za-z_][\w\-]*)\s*"
    r"\{(?P<body>[^{}]*)\}\s*[.!]?\s*$",
    re.DOTALL,
)
_KEY = re.compile(r"(?:^|,)\s*(?P<key>[A-Za-z_]\w*)\s*:")
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


@dataclass(frozen=True, slots=True)
class RecoveredCall:
    """A call found in speech: the speech before it, the tool, its arguments, a fresh id."""

    spoken_text: str
    name: str
    arguments: dict[str, Any]
    call_id: str


def recover_tool_call(text: str, toolset: Mapping[str, AITool]) -> RecoveredCall | None:
    """Find a ``call:NAME{...}`` sentence at the end of ``text`` for a tool in ``toolset``.

    Arguments are split on the tool's declared parameter names and coerced to the schema's
    boolean/integer/number types. An undeclared key is kept, so schema validation rejects it.
    """
    if "call:" not in text:
        return None
    match = _CALL.match(text)
    if match is None:
        return None
    tool = toolset.get(match["name"])
    if tool is None:
        return None
    properties = tool.parameters.get("properties", {})
    if not isinstance(properties, Mapping):
        properties = {}
    arguments = _split_arguments(match["body"], properties)
    if arguments is None:
        return None
    return RecoveredCall(
        match["before"].strip(), tool.name, arguments, f"recovered-{secrets.token_hex(6)}"
    )


def _split_arguments(body: str, properties: Mapping[str, Any]) -> dict[str, Any] | None:
    body = body.strip()
    if not body:
        return {}
    starts: list[tuple[int, int, str]] = []  # (segment start, value start, key)
    for key_match in _KEY.finditer(body):
        key = key_match["key"]
        first = not starts and key_match.start() == 0
        if not first and key not in properties:
            previous = properties.get(starts[-1][2], {}) if starts else {}
            # Inside a free-text value, an undeclared "word:" is part of the text.
            if not isinstance(previous, Mapping) or previous.get("type", "string") == "string":
                continue
        starts.append((key_match.start(), key_match.end(), key))
    if not starts or starts[0][0] != 0:
        return None  # the body does not start with a key: not a call
    arguments: dict[str, Any] = {}
    for index, (_, value_start, key) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(body)
        raw = body[value_start:end].strip()
        schema = properties.get(key, {})
        arguments[key] = _coerce(raw, schema if isinstance(schema, Mapping) else {})
    return arguments


def _coerce(raw: str, schema: Mapping[str, Any]) -> Any:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        raw = raw[1:-1]
    kind = schema.get("type")
    lowered = raw.lower()
    if kind == "boolean":
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    elif kind == "integer":
        try:
            return int(raw)
        except ValueError:
            pass
    elif kind == "number":
        try:
            return float(raw)
        except ValueError:
            pass
    elif kind in ("array", "object"):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            pass
    return raw
