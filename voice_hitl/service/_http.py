"""Reading HTTP bodies within the 64 KiB limit, and the refusals that go with them."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from ._desk import DeskError

__all__ = ["MAX_BODY", "BadJsonError", "BodyTooLargeError", "read_json"]

MAX_BODY = 64 * 1024


class BodyTooLargeError(DeskError):
    """The body is over :data:`MAX_BODY`."""

    status, code = 413, "too_large"


class BadJsonError(DeskError):
    """The body is not JSON."""

    status, code = 400, "bad_json"


async def read_json(request: Request) -> Any:
    """The request's JSON body, read at most :data:`MAX_BODY` bytes far.

    Raises:
        BodyTooLargeError: Declared or sent bigger than the limit.
        BadJsonError: Not UTF-8 JSON.

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
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadJsonError(f"the body is not JSON: {exc}") from None
