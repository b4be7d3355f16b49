"""``WireTaps``: observers of the frames a provider exchanges with its model's server.

A provider that talks to its model over a wire (the OpenAI Realtime and Gemini Live
WebSockets) offers ``provider.wire_taps``; one without a wire (the local cascade, LiveKit,
the mocks) leaves it ``None``. A tap is called on the event loop with one
:class:`WireFrame` per frame, both ways, and must not block (a call recorder queues it). With
no tap attached a frame costs one truth test.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal, NamedTuple

__all__ = ["WireDirection", "WireFrame", "WireTap", "WireTaps"]

logger = logging.getLogger("voice_hitl.wire")

WireDirection = Literal["in", "out"]
"""``in``: from the model's server; ``out``: to it."""


class WireFrame(NamedTuple):
    """One frame on a provider's wire.

    Attributes:
        session_id: The ``SessionConfig.session_id`` of the session that carried it.
        connection: Which connection of that session (1, then 2 after a reconnect...).
        direction: ``in`` from the server, ``out`` to it.
        data: The frame as sent or received (text or bytes).
        at: When, on the ``time.monotonic()`` clock.
    """

    session_id: str
    connection: int
    direction: WireDirection
    data: str | bytes
    at: float


WireTap = Callable[[WireFrame], None]
"""Called with each frame, on the event loop; must not block."""


class WireTaps:
    """The taps of one provider; false while none is attached.

    A tap that raises is logged and stays attached; the frame goes on to the wire.
    """

    def __init__(self) -> None:
        self._taps: list[WireTap] = []

    def __bool__(self) -> bool:
        return bool(self._taps)

    def __len__(self) -> int:
        return len(self._taps)

    def add(self, tap: WireTap) -> Callable[[], None]:
        """Hand every frame of every session from now on to ``tap``; returns a remover
        (idempotent)."""
        self._taps.append(tap)

        def remove() -> None:
            if tap in self._taps:
                self._taps.remove(tap)

        return remove

    def emit(
        self, session_id: str, connection: int, direction: WireDirection, data: str | bytes
    ) -> None:
        """Hand one frame to every tap (the provider calls this; guard it with ``if taps``)."""
        frame = WireFrame(session_id, connection, direction, data, time.monotonic())
        for tap in list(self._taps):
            try:
                tap(frame)
            except Exception:
                logger.exception("wire tap %r failed on session %r", tap, session_id)
