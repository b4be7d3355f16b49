"""``ProtocolQueues``: the two queues every sans-I/O realtime protocol drains.

A protocol appends the events it makes to ``_events`` and the frames it wants written to
``_outbox`` (``_write_json`` encodes a message compactly, ``_append_audio`` caller audio);
its session drains both with :meth:`ProtocolQueues.events` and
:meth:`ProtocolQueues.outgoing` after every step.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from voice_hitl.voice._provider_events import PCM16, ProviderEvent

from ._wire import encode_pcm16

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

    def _append_audio(
        self,
        frame: PCM16,
        rate: int,
        wire_rate: int,
        ready: bool,
        message: Callable[[str], dict[str, Any]],
    ) -> bool:
        """Queue caller audio at ``rate`` Hz as ``message(base64 PCM16 at wire_rate)`` when
        ``ready`` (an empty frame queues nothing); False, dropping it, when not.

        Raises:
            ValueError: ``frame`` is not 1-D int16 (checked even when it is dropped).
        """
        audio = encode_pcm16(frame, rate, wire_rate)
        if not ready:
            return False
        if audio:
            self._write_json(message(audio))
        return True

    def _write_json(self, message: dict[str, Any]) -> str:
        """Queue ``message`` as compact JSON; returns the frame."""
        text = json.dumps(message, separators=(",", ":"))
        self._outbox.append(text)
        return text
