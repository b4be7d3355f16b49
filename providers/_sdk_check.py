"""Check JSON payloads against a vendor SDK's own types, with no field the SDK does not know.

Requests are checked against the SDK's ``*Params`` TypedDicts (through a pydantic
``TypeAdapter``: lazily validated lists are read out in full, and a key the validated value
dropped is a field the type does not declare). Responses are checked against the SDK's pydantic
models, whose ``extra="allow"`` is walked: an undeclared field anywhere is an error.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

__all__ = ["PayloadError", "check_model", "check_params"]


class PayloadError(ValueError):
    """A payload the SDK's types reject; ``param`` is the dotted path of the offending field."""

    def __init__(self, message: str, *, param: str = "") -> None:
        super().__init__(message)
        self.param = param


@functools.cache
def _adapter(params_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(params_type)


def _materialise(value: Any, path: tuple[str | int, ...] = ()) -> Any:
    """Read lazily validated iterables (pydantic's ``ValidatorIterator``) out into lists; an
    error inside one is raised as :class:`PayloadError` naming its full path."""
    if isinstance(value, Mapping):
        return {k: _materialise(v, (*path, k)) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, (list, tuple)):
        return [_materialise(v, (*path, i)) for i, v in enumerate(value)]
    if type(value).__name__ == "ValidatorIterator":
        try:
            items = list(value)
        except ValidationError as exc:
            where, message = _first_error(exc, path)
            raise PayloadError(message, param=where) from None
        return [_materialise(v, (*path, i)) for i, v in enumerate(items)]
    return value


def _undeclared(original: Any, validated: Any, path: str) -> str | None:
    """The path of the first key in ``original`` that validation dropped, if any."""
    if isinstance(original, Mapping) and isinstance(validated, Mapping):
        for key, value in original.items():
            where = f"{path}.{key}" if path else str(key)
            if key not in validated:
                return where
            found = _undeclared(value, validated[key], where)
            if found is not None:
                return found
    elif isinstance(original, list) and isinstance(validated, list):
        for index, (a, b) in enumerate(zip(original, validated, strict=False)):
            found = _undeclared(a, b, f"{path}.{index}")
            if found is not None:
                return found
    return None


def _field(part: str | int) -> bool:
    """False for the parts of a pydantic location that name a union member, not a field."""
    return isinstance(part, int) or not (part[:1].isupper() or "[" in part or "-" in part)


def _first_error(exc: ValidationError, prefix: tuple[str | int, ...] = ()) -> tuple[str, str]:
    errors = exc.errors()
    # A union reports every member; the shortest path is the field the payload got wrong.
    error = min(errors, key=lambda e: len(e["loc"]))
    where = ".".join(str(p) for p in (*prefix, *error["loc"]) if _field(p))
    return where, f"{where or 'the payload'}: {error['msg']}"


def check_params(params_type: Any, payload: Any) -> dict[str, Any]:
    """Validate a request body against an SDK ``*Params`` TypedDict.

    Returns:
        The validated body (lists read out).

    Raises:
        PayloadError: A field has the wrong type or value, a required one is missing, or a
            field is not declared by the type.
    """
    if not isinstance(payload, dict):
        raise PayloadError(f"the body must be a JSON object, got {type(payload).__name__}")
    try:
        validated = _materialise(_adapter(params_type).validate_python(payload))
    except ValidationError as exc:
        where, message = _first_error(exc)
        raise PayloadError(message, param=where) from None
    undeclared = _undeclared(payload, validated, "")
    if undeclared is not None:
        message = f"{undeclared}: a field the SDK's types do not declare"
        raise PayloadError(message, param=undeclared)
    assert isinstance(validated, dict)
    return validated


def _extra_in(model: Any, path: str) -> str | None:
    if isinstance(model, BaseModel):
        extra = model.model_extra or {}
        if extra:
            key = next(iter(extra))
            return f"{path}.{key}" if path else key
        for name in type(model).model_fields:
            found = _extra_in(getattr(model, name), f"{path}.{name}" if path else name)
            if found is not None:
                return found
    elif isinstance(model, (list, tuple)):
        for index, item in enumerate(model):
            found = _extra_in(item, f"{path}.{index}")
            if found is not None:
                return found
    elif isinstance(model, dict):
        for key, item in model.items():
            found = _extra_in(item, f"{path}.{key}")
            if found is not None:
                return found
    return None


def check_model(model_type: type[BaseModel], payload: Any) -> BaseModel:
    """Validate a response body against an SDK pydantic model, undeclared fields included.

    Raises:
        PayloadError: The body does not validate, or carries a field the model lacks.
    """
    try:
        model = model_type.model_validate(payload)
    except ValidationError as exc:
        where, message = _first_error(exc)
        raise PayloadError(message, param=where) from None
    extra = _extra_in(model, "")
    if extra is not None:
        raise PayloadError(f"{extra}: a field the SDK's types do not declare", param=extra)
    return model
