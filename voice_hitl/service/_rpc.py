"""The live feed's JSON-RPC 2.0 messages, sans I/O: text in, typed calls out, text back.

Server → client notifications (no ``id``):

- ``requests.snapshot`` ``{"requests": [...]}``: every open request the operator may see, sent
  when the feed starts (and again after the service reconnects to its board);
- ``request.opened`` ``{"request": {...}}``;
- ``request.settled`` ``{"request": {...}}``: answered or rejected (``request.settled`` says by
  whom, when, how);
- ``request.withdrawn`` ``{"request": {...}}``: timed out, withdrawn by the call (session end,
  close, barge-in) or abandoned (its worker stopped).
- ``request.escalated`` ``{"request": {...}, "escalation": {...}}``: the call's handler
  escalated an open request (who takes it over, time left); the console may ignore it.

Client → server methods (with an ``id``; the reply carries the same ``id``):

- ``answer`` ``{"id": "<request id>", "answer": <value>, "idempotency_key"?}`` →
  ``{"request": {...}}`` once the call took the answer
- ``reject`` ``{"id": "<request id>", "reason": "...", "idempotency_key"?}`` →
  ``{"request": {...}}`` once the call took the rejection
- ``list`` ``{"room"?, "channel"?, "tool"?, "for"?}`` → ``{"requests": [...]}``

Errors use JSON-RPC's codes for malformed messages (-32700 parse error, -32600 invalid request,
-32601 unknown method, -32602 invalid params) and the HTTP status as the code for the desk's
refusals (401, 404, 409, 422, 503) with the same body as the HTTP API in ``data``. Batches are
not supported (-32600). A message is read through the same edge check as an HTTP body
(:mod:`voice_hitl._edge`: 64 KiB, 32 levels, valid Unicode): a bigger one gets -32600 with
``data`` ``{"status": 413}``, a lone surrogate or too deep nesting -32600 with the reason,
and the client stays connected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._edge import EdgeError, load_json
from ..board import BoardEscalated, BoardEvent, BoardOpened, BoardRequest, BoardStatus

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RpcCall",
    "RpcError",
    "error_reply",
    "event_notification",
    "parse_message",
    "result_reply",
    "snapshot_notification",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

METHODS = frozenset({"answer", "reject", "list"})
_FILTERS = ("room", "channel", "tool", "for")


@dataclass(frozen=True, slots=True)
class RpcCall:
    """A method call from the client, with its params checked for shape."""

    id: str | int | None
    method: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RpcError:
    """A message that cannot be served; :meth:`reply` is the error response to send."""

    id: str | int | None
    code: int
    message: str
    data: Any = None

    def reply(self) -> str:
        """The JSON-RPC error response."""
        return error_reply(self.id, self.code, self.message, self.data)


def _dumps(message: Mapping[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def parse_message(text: str | bytes) -> RpcCall | RpcError:
    """Read one client message.

    Returns:
        An :class:`RpcCall` whose params have the method's required keys, or an
        :class:`RpcError` saying what is wrong (never raises).
    """
    try:
        raw = load_json(text, what="the message")
    except EdgeError as exc:
        if exc.code == "not_json":
            return RpcError(None, PARSE_ERROR, exc.message)
        data = {"status": 413} if exc.code == "too_large" else None
        return RpcError(None, INVALID_REQUEST, exc.message, data)
    if isinstance(raw, list):
        return RpcError(None, INVALID_REQUEST, "batches are not supported; send one call")
    if not isinstance(raw, dict):
        return RpcError(None, INVALID_REQUEST, "a call must be a JSON object")
    call_id = raw.get("id")
    if call_id is not None and (isinstance(call_id, bool) or not isinstance(call_id, str | int)):
        return RpcError(None, INVALID_REQUEST, "'id' must be a string or an integer")
    if raw.get("jsonrpc") != "2.0":
        return RpcError(call_id, INVALID_REQUEST, "'jsonrpc' must be \"2.0\"")
    method = raw.get("method")
    if not isinstance(method, str):
        return RpcError(call_id, INVALID_REQUEST, "'method' must be a string")
    if method not in METHODS:
        known = ", ".join(sorted(METHODS))
        return RpcError(call_id, METHOD_NOT_FOUND, f"unknown method {method!r} (known: {known})")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        return RpcError(call_id, INVALID_PARAMS, "'params' must be an object")
    problem = _check_params(method, params)
    if problem is not None:
        return RpcError(call_id, INVALID_PARAMS, problem)
    return RpcCall(call_id, method, params)


def _check_params(method: str, params: Mapping[str, Any]) -> str | None:
    if method == "list":
        for key in _FILTERS:
            if key in params and not isinstance(params[key], str):
                return f"'{key}' must be a string"
        return None
    if not isinstance(params.get("id"), str) or not params["id"]:
        return "'id' (the request id) must be a non-empty string"
    if method == "answer" and "answer" not in params:
        return "'answer' is required"
    if method == "reject" and "reason" not in params:
        return "'reason' is required"
    if "idempotency_key" in params and not isinstance(params["idempotency_key"], str):
        return "'idempotency_key' must be a string"
    return None


def result_reply(call_id: str | int | None, result: Any) -> str:
    """A JSON-RPC success response."""
    return _dumps({"jsonrpc": "2.0", "id": call_id, "result": result})


def error_reply(call_id: str | int | None, code: int, message: str, data: Any = None) -> str:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _dumps({"jsonrpc": "2.0", "id": call_id, "error": error})


def _notification(method: str, params: Mapping[str, Any]) -> str:
    return _dumps({"jsonrpc": "2.0", "method": method, "params": params})


def event_notification(event: BoardEvent) -> str:
    """The notification for a board event (method names in the module docstring)."""
    request = event.request
    if isinstance(event, BoardOpened):
        method = "request.opened"
    elif isinstance(event, BoardEscalated):
        params = {"request": request.to_wire(), "escalation": dict(event.escalation)}
        return _notification("request.escalated", params)
    elif request.status in (BoardStatus.ANSWERED, BoardStatus.REJECTED):
        method = "request.settled"
    else:
        method = "request.withdrawn"
    return _notification(method, {"request": request.to_wire()})


def snapshot_notification(requests: Sequence[BoardRequest]) -> str:
    """``requests.snapshot`` with every given open request."""
    return _notification("requests.snapshot", {"requests": [r.to_wire() for r in requests]})
