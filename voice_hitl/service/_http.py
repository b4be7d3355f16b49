"""Reading HTTP bodies through the edge check (64 KiB, 32 levels, valid Unicode), and the
refusals that go with them. The live feed reads its messages with the same limits."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from .._edge import MAX_BYTES, EdgeError, load_json
from ._refusals import DeskError

__all__ = ["MAX_BODY", "BadJsonError", "BodyTooLargeError", "read_json"]

MAX_BODY = MAX_BYTES


class BodyTooLargeError(DeskError):
    """The body is over :data:`MAX_BODY`."""

    status, code = 413, "too_large"


class BadJsonError(DeskError):
    """The body is not JSON, not UTF-8, nested too deep or holds a lone surrogate."""

    status, code = 400, "bad_json"


async def read_json(request: Request) -> Any:
    """The request's JSON body, read at most :data:`MAX_BODY` bytes far.

    Raises:
        BodyTooLargeError: Declared or sent bigger than the limit.
        BadJsonError: Not UTF-8 JSON, or refused at the edge (the message says why).

    Cancellation: safe.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise BodyTooLargeError(f"the body is {declared} bytes; the limit is {MAX_BODY}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise BodyTooLargeError(f"the body is over the {MAX_BODY}-byte limit")
    try:
        return load_json(bytes(body), what="the body")
    except EdgeError as exc:
        if exc.code == "too_large":
            raise BodyTooLargeError(exc.message) from None
        raise BadJsonError(exc.message) from None
