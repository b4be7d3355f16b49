"""Client and server messages checked against the ``google-genai`` SDK's own pydantic types.

``LiveClientMessage`` and ``LiveServerMessage`` forbid unknown fields. The server accepts
either casing of a field (protobuf JSON does); ``strict=True`` also requires the camelCase
wire form the SDK itself writes (``by_alias``): no snake_case keys, no nulls, nothing the
types would drop. Needs the ``google-genai`` package (extra ``gemini``).
"""

from __future__ import annotations

import base64
import json
import warnings
from typing import Any

from pydantic import BaseModel, ValidationError

__all__ = ["MessageError", "validate_client_message", "validate_server_message"]

_CLIENT_KINDS = ("setup", "clientContent", "realtimeInput", "toolResponse")
_CLIENT_SNAKE = {
    "client_content": "clientContent",
    "realtime_input": "realtimeInput",
    "tool_response": "toolResponse",
}


class MessageError(ValueError):
    """A message the SDK's types reject; ``code`` names the kind of problem."""

    def __init__(self, message: str, code: str = "invalid_argument") -> None:
        super().__init__(message)
        self.code = code


def _types() -> Any:
    from google.genai import types

    return types


def _validate(model: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return model.model_validate_json(json.dumps(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise MessageError(f"{where}: {first['msg']}") from None
        except Warning as warning:
            raise MessageError(f"the SDK warns: {warning}") from None


def _same(original: Any, dumped: Any, where: str) -> None:
    if isinstance(dumped, bytes):
        if not isinstance(original, str) or base64.b64decode(original) != dumped:
            raise MessageError(f"{where}: bytes are not the same base64")
        return
    if isinstance(dumped, dict) and isinstance(original, dict):
        if set(original) != set(dumped):
            extra = sorted(set(original) ^ set(dumped))
            raise MessageError(f"{where}: keys differ from the SDK's wire form: {extra}")
        for key, value in original.items():
            _same(value, dumped[key], f"{where}.{key}")
        return
    if isinstance(dumped, list) and isinstance(original, list) and len(dumped) == len(original):
        for index, (a, b) in enumerate(zip(original, dumped, strict=True)):
            _same(a, b, f"{where}[{index}]")
        return
    if original != dumped:
        raise MessageError(f"{where}: {original!r} becomes {dumped!r} in the SDK's wire form")


def _strict(model: BaseModel, data: dict[str, Any]) -> None:
    dumped = model.model_dump(mode="python", by_alias=True, exclude_none=True)
    _same(data, _enums(dumped), "$")


def _enums(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _enums(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_enums(v) for v in value]
    enum_value = getattr(value, "value", None)
    return enum_value if isinstance(enum_value, str) else value


def validate_client_message(data: Any, *, strict: bool = False) -> str:
    """Check a client message against ``google.genai.types.LiveClientMessage``; returns its
    kind (``setup``, ``clientContent``, ``realtimeInput``, ``toolResponse`` or
    ``contextUpdate``).

    Raises:
        MessageError: Not an object with exactly one kind, or the SDK's types reject it
            (or, with ``strict``, its wire form differs from the SDK's camelCase form).
    """
    if not isinstance(data, dict):
        raise MessageError(f"a client message must be a JSON object, not {type(data).__name__}")
    kinds = [_CLIENT_SNAKE.get(key, key) for key in data]
    if len(kinds) != 1 or kinds[0] not in _CLIENT_KINDS:
        raise MessageError(f"a client message has exactly one of {_CLIENT_KINDS}, got {list(data)}")
    model = _validate(_types().LiveClientMessage, data)
    if strict:
        _strict(model, data)
    return kinds[0]


def validate_server_message(data: Any, *, strict: bool = False) -> None:
    """Check a server message against ``google.genai.types.LiveServerMessage``.

    Raises:
        MessageError: Not an object, or the SDK's types reject it (or, with ``strict``, its
            wire form differs from the SDK's camelCase form).
    """
    if not isinstance(data, dict):
        raise MessageError(f"a server message must be a JSON object, not {type(data).__name__}")
    model = _validate(_types().LiveServerMessage, data)
    if strict:
        _strict(model, data)
