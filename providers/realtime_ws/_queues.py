"""``ProtocolQueues``: the two queues every sans-I/O realtime protocol drains.

A protocol appends the events it makes to ``_events`` and the frames it wants written to
``_outbox`` (``_write_json`` encodes a message compactly); its session drains both with
:meth:`ProtocolQueues.events` and :meth:`ProtocolQueues.outgoing` after every step.
"""

from __future__ import annotations

import json
from typing import Any

from voice_hitl._provider_events import ProviderEvent

__all__ = ["ProtocolQueues"]


class ProtocolQueues:
    """The event and outgoing-frame queues of a sans-I/O protocol."""

    def __init__(self) -> None:
        self._events: list[ProviderEvent] = []
        self._outbox: list[str] = []

    def events(self) -> list[ProviderEvent]:
        """The voice-hitl events produced since the last call, in order."""
        events, self._events = self._events, []
        return events

    def outgoing(self) -> list[str]:
        """The client JSON messages to send since the last call, in order."""
        out, self._outbox = self._outbox, []
        return out

    def _write_json(self, message: dict[str, Any]) -> str:
        """Queue ``message`` as compact JSON; returns the frame."""
        text = json.dumps(message, separators=(",", ":"))
        self._outbox.append(text)
        return text
