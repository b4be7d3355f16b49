"""The webhook delivery process's pipe: length-prefixed JSON frames, both ways.

Each frame is a 4-byte big-endian length and that many bytes of one UTF-8 JSON object with a
string ``"t"`` (its type). The service sends ``config`` (first), ``e`` (an event for some
lanes) and ``close``; the delivery process answers ``ready``, ``dead`` (a dead letter),
``stats`` (what settled, coalesced) and ``closed``. A frame that is not that is a
:class:`FrameError` naming what is wrong; the side that reads it stops the other.
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

__all__ = ["MAX_FRAME", "FrameError", "encode_frame", "read_frame"]

MAX_FRAME = 16 * 1024 * 1024
_LENGTH = struct.Struct(">I")


class FrameError(ValueError):
    """A frame on the delivery pipe that is not a length-prefixed JSON object with a "t"."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """``message`` as one frame."""
    body = json.dumps(message, separators=(",", ":"), default=str).encode()
    return _LENGTH.pack(len(body)) + body


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next frame's message, or None at a clean end of the stream.

    Raises:
        FrameError: A frame cut short, longer than :data:`MAX_FRAME`, not JSON, or not an
            object with a string ``"t"``.

    Cancellation: safe (a frame half read is lost with the stream).
    """
    try:
        head = await reader.readexactly(_LENGTH.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        cut = len(exc.partial)
        raise FrameError(f"a frame's length was cut short after {cut} byte(s)") from None
    (size,) = _LENGTH.unpack(head)
    if size > MAX_FRAME:
        raise FrameError(f"a frame of {size} bytes, over the limit of {MAX_FRAME} (bytes {head!r})")
    try:
        body = await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise FrameError(f"a frame of {size} bytes was cut short at {len(exc.partial)}") from None
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise FrameError(f"a frame that is not JSON ({exc}): {body[:80]!r}") from None
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise FrameError(f'a frame that is not an object with a string "t": {body[:80]!r}')
    return message
