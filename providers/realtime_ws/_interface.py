"""What a websocket session drives (:class:`WireProtocol`) and where it stands
(:class:`SessionState`).

Both providers' sans-I/O protocols are ``WireProtocol``s: the session tells them about the
connection, feeds them frames, drains their events and frames, and passes the channel's
intents on. They import neither asyncio nor websockets.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol

from voice_hitl.voice._provider_events import PCM16, ProviderEvent

__all__ = ["SessionState", "WireProtocol"]


class WireProtocol(Protocol):
    """What a session needs of a sans-I/O protocol (both providers' protocols are one)."""

    def connection_made(self) -> None:
        """A (new) connection is open: queue what opens the conversation on it."""

    def connection_lost(self, reason: str, unsent: Sequence[str] = ()) -> None:
        """The connection is gone; ``unsent`` frames were handed out but never written."""

    def receive(self, data: str | bytes) -> None:
        """Feed one server frame; never raises for bad input."""

    def events(self) -> list[ProviderEvent]:
        """The events produced since the last call."""
        ...

    def outgoing(self) -> list[str]:
        """The frames to write since the last call, in order."""
        ...

    def append_audio(self, frame: PCM16) -> bool:
        """Queue caller audio; False when it cannot go now (it is dropped)."""
        ...

    def inject_context(self, text: str) -> None:
        """Queue context the model reads without answering."""

    def say(self, text: str) -> None:
        """Queue a turn in which the model speaks ``text``."""


class SessionState(enum.Enum):
    """Where a session is in its life; a closed session does not reopen."""

    UNOPENED = "unopened"
    OPEN = "open"
    CLOSED = "closed"
