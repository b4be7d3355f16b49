""":class:`ListingEncoder`: ``GET /v1/requests`` bodies, each open request encoded once.

An open request's wire form never changes while it is open (its claim is not shown), yet every
listing built and encoded it again: with 2,000 open requests and 200 operators listing at
once, ``to_wire`` and the JSON encoder were most of the service's time, and the event loop they
held up made other calls' Redis replies wait past their read timeout. The encoder keeps each
open request's JSON (bytes) and joins them into the body, byte for byte what
``JSONResponse({"requests": [r.to_wire() for r in found]})`` renders.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..board import BoardRequest

__all__ = ["ListingEncoder", "render_json"]


def render_json(content: Any) -> bytes:
    """JSON as Starlette's ``JSONResponse`` renders it."""
    return json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


class ListingEncoder:
    """Encodes lists of requests, keeping the JSON of up to ``size`` open requests.

    An open request is known by its id, worker and creation time (a re-published request is
    the same request); a settled one is encoded every time.
    """

    def __init__(self, size: int = 20_000) -> None:
        self._size = size
        self._open: OrderedDict[tuple[str, str, float], bytes] = OrderedDict()

    def encode(self, request: BoardRequest) -> bytes:
        """One request's JSON (its ``to_wire()``)."""
        if not request.is_open:
            return render_json(request.to_wire())
        key = (request.id, request.worker, request.created_at)
        encoded = self._open.get(key)
        if encoded is None:
            encoded = self._open[key] = render_json(request.to_wire())
            if len(self._open) > self._size:
                self._open.popitem(last=False)
        return encoded

    def body(self, requests: Sequence[BoardRequest]) -> bytes:
        """``{"requests": [...]}`` as bytes."""
        return b'{"requests":[' + b",".join(self.encode(r) for r in requests) + b"]}"
