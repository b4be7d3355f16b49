"""Realtime events checked against the ``openai`` SDK's own pydantic types, both ways.

Each event's ``type`` picks its SDK model (``openai.types.realtime``: the members of
``RealtimeClientEvent`` and ``RealtimeServerEvent``). The event must validate against that
model in pydantic's strict mode, and — because the SDK's models accept any extra field — every
object in it is walked: a field the SDK does not declare is an error too. A client event that
fails gets the code the real server answers with (``unknown_parameter``,
``missing_required_parameter``, ``invalid_value``) and the dotted ``param`` it names.

On top of the types, client events keep a few limits the SDK documents in prose: audio is
base64, at most one output modality, speech speed 0.25-1.5, at most 16 metadata pairs.

Needs the ``openai`` package (extra ``openai``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import warnings
from collections.abc import Mapping
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

__all__ = [
    "ClientEventError",
    "ServerEventError",
    "client_event_models",
    "server_event_models",
    "validate_client_event",
    "validate_server_event",
]

_FIELD = re.compile(r"^[a-z_][a-z0-9_]*$")


class ClientEventError(ValueError):
    """A client event the SDK's types (or the server's limits) reject; ``code`` and ``param``
    mirror the real server's ``error`` object."""

    def __init__(self, message: str, *, code: str, param: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.param = param


class ServerEventError(ValueError):
    """A server event the SDK's types reject (``param`` names the offending field)."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def _realtime_types() -> Any:
    try:
        from openai.types import realtime
    except ImportError as exc:  # pragma: no cover - the extra is part of CI
        raise RuntimeError(
            "checking Realtime events needs the openai SDK: install voice-hitl[openai]"
        ) from exc
    return realtime


def _by_type(union: Any) -> dict[str, type[BaseModel]]:
    members = get_args(get_args(union)[0])  # Annotated[Union[...], PropertyInfo]
    table: dict[str, type[BaseModel]] = {}
    for model in members:
        (literal,) = get_args(model.model_fields["type"].annotation)
        table[literal] = model
    return table


@functools.cache
def client_event_models() -> Mapping[str, type[BaseModel]]:
    """Every client event type the SDK defines, mapped to its model."""
    return _by_type(_realtime_types().RealtimeClientEvent)


@functools.cache
def server_event_models() -> Mapping[str, type[BaseModel]]:
    """Every server event type the SDK defines, mapped to its model."""
    from openai.types.realtime import realtime_server_event

    return _by_type(realtime_server_event.RealtimeServerEvent)


# -- the strict check ---------------------------------------------------------------------------


class _Problem(Exception):
    def __init__(self, kind: str, param: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.param = param
        self.detail = detail


def _dotted(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _undeclared(model: BaseModel, path: list[str | int]) -> None:
    extra = model.model_extra or {}
    if extra:
        key = sorted(extra)[0]
        raise _Problem("unknown", _dotted([*path, key]), f"{type(model).__name__} has no {key!r}")
    for name, field in type(model).model_fields.items():
        _walk(getattr(model, name), [*path, field.alias or name])


def _walk(value: Any, path: list[str | int]) -> None:
    if isinstance(value, BaseModel):
        _undeclared(value, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, [*path, index])


def _data_path(data: Any, loc: tuple[str | int, ...], missing: bool) -> list[str | int]:
    """The part of a pydantic error location that is in the data (union variant tags such as
    ``RealtimeConversationItemUserMessage`` or ``literal['x']`` are dropped)."""
    path: list[str | int] = []
    cursor = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        in_dict = isinstance(cursor, dict) and isinstance(part, str) and part in cursor
        in_list = isinstance(cursor, list) and isinstance(part, int) and part < len(cursor)
        if in_dict or in_list:
            cursor = cursor[part]
            path.append(part)
        elif last and missing and isinstance(part, str) and _FIELD.match(part):
            path.append(part)
    return path


def _best_error(exc: ValidationError, data: Any) -> _Problem:
    """The error of the union member the data meant: members whose ``type`` literal does not
    match are skipped (the SDK's unions are discriminated on ``type``, pydantic's are not)."""
    errors = exc.errors()
    tags = [
        err
        for err in errors
        if err["type"] == "literal_error" and err["loc"] and err["loc"][-1] == "type"
    ]
    wrong_members = {tuple(err["loc"][:-1]) for err in tags}

    def in_wrong_member(loc: tuple[Any, ...]) -> bool:
        return any(loc[: len(prefix)] == prefix for prefix in wrong_members if prefix)

    # No member's type matched: the type is what is wrong.
    chosen = [err for err in errors if not in_wrong_member(tuple(err["loc"]))] or tags
    first = chosen[0]
    missing = first["type"] == "missing"
    param = _dotted(_data_path(data, tuple(first["loc"]), missing))
    return _Problem("missing" if missing else "invalid", param, first["msg"])


def _check(model: type[BaseModel], data: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            parsed = model.model_validate(data, strict=True)
        except ValidationError as exc:
            raise _best_error(exc, data) from None
    _undeclared(parsed, [])


# -- client events ------------------------------------------------------------------------------


def _limits(data: dict[str, Any]) -> None:
    kind = data["type"]
    if kind == "input_audio_buffer.append":
        try:
            base64.b64decode(data["audio"], validate=True)
        except (binascii.Error, ValueError):
            raise _Problem("invalid", "audio", "audio is not valid base64") from None
    for key in ("session", "response"):
        body = data.get(key)
        if not isinstance(body, dict):
            continue
        modalities = body.get("output_modalities")
        if isinstance(modalities, list) and len(modalities) > 1:
            raise _Problem(
                "invalid", f"{key}.output_modalities", "at most one output modality ('audio' "
                "includes its transcript)"
            )
        metadata = body.get("metadata")
        if isinstance(metadata, dict) and len(metadata) > 16:
            raise _Problem("invalid", f"{key}.metadata", "at most 16 metadata pairs")
        output = (body.get("audio") or {}).get("output") or {}
        speed = output.get("speed") if isinstance(output, dict) else None
        if isinstance(speed, int | float) and not 0.25 <= speed <= 1.5:
            raise _Problem("invalid", f"{key}.audio.output.speed", "speed is 0.25 to 1.5")


_CLIENT_CODES = {
    "unknown": ("unknown_parameter", "Unknown parameter: '{param}'."),
    "missing": ("missing_required_parameter", "Missing required parameter: '{param}'."),
    "invalid": ("invalid_value", "Invalid value for '{param}': {detail}."),
}


def validate_client_event(data: Any) -> str:
    """Check one decoded client message against the SDK's ``RealtimeClientEvent`` types;
    returns its ``type``.

    Raises:
        ClientEventError: Not an object, an event type the SDK does not define, a shape its
            model rejects, a field it does not declare, or a documented limit exceeded.
    """
    if not isinstance(data, dict):
        raise ClientEventError(
            f"a client event must be a JSON object, not {type(data).__name__}",
            code="invalid_value",
            param=None,
        )
    kind = data.get("type")
    models = client_event_models()
    if not isinstance(kind, str) or kind not in models:
        supported = ", ".join(repr(t) for t in sorted(models))
        raise ClientEventError(
            f"Invalid value for 'type': {kind!r}. Supported values are: {supported}.",
            code="invalid_value",
            param="type",
        )
    try:
        _check(models[kind], data)
        _limits(data)
    except _Problem as problem:
        code, template = _CLIENT_CODES[problem.kind]
        message = template.format(param=problem.param, detail=problem.detail)
        raise ClientEventError(
            f"{message} ({kind})", code=code, param=problem.param or None
        ) from None
    return kind


def validate_server_event(data: Any) -> str:
    """Check one server event against the SDK's ``RealtimeServerEvent`` types; returns its
    ``type``.

    Raises:
        ServerEventError: Not an object, an event type the SDK does not define, a shape its
            model rejects, or a field it does not declare.
    """
    if not isinstance(data, dict):
        raise ServerEventError(f"a server event must be an object, not {type(data).__name__}")
    kind = data.get("type")
    models = server_event_models()
    if not isinstance(kind, str) or kind not in models:
        raise ServerEventError(f"the SDK defines no server event {kind!r}", param="type")
    try:
        _check(models[kind], data)
    except _Problem as problem:
        raise ServerEventError(
            f"server event {kind!r}: {problem.kind} '{problem.param}': {problem.detail}",
            param=problem.param,
        ) from None
    return kind
