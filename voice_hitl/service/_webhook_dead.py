"""Dead letters: the webhook events the service could not deliver, kept in its process.

``voice-hitl webhooks dead`` lists them (``GET /v1/webhooks/dead``) and ``... retry`` sends
them again with the same event id. :class:`DeadLetters` keeps the newest ``limit``; older ones
are dropped, counted and logged (one line a second at most).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..board._model import iso

__all__ = ["FULL", "DeadLetter", "DeadLetters"]

logger = logging.getLogger("voice_hitl.service.webhooks")

FULL = "the receiver's delivery queue was full"


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """An event that was not delivered: to whom, how often it was tried, and the last error."""

    subscription: str
    event: Mapping[str, Any]
    attempts: int
    error: str
    at: float

    @property
    def id(self) -> str:
        """``<event id>:<subscription>`` (an event goes to each subscription on its own)."""
        return f"{self.event['id']}:{self.subscription}"

    @property
    def place(self) -> tuple[str, str]:
        """The request's room and channel (who may see this dead letter)."""
        request = self.event.get("request") or {}
        return str(request.get("room") or ""), str(request.get("channel") or "")

    def to_wire(self) -> dict[str, Any]:
        """As ``GET /v1/webhooks/dead`` shows it."""
        request = self.event.get("request") or {}
        return {
            "id": self.id,
            "subscription": self.subscription,
            "event_id": self.event["id"],
            "type": self.event["type"],
            "request_id": request.get("id"),
            "room": request.get("room"),
            "attempts": self.attempts,
            "error": self.error,
            "at": iso(self.at),
        }


class DeadLetters:
    """The newest ``limit`` dead letters, oldest first (module docstring)."""

    def __init__(self, limit: int) -> None:
        self._letters: OrderedDict[str, DeadLetter] = OrderedDict()
        self._limit = limit
        self._dropped_logged_at = float("-inf")
        self.dropped = 0
        """Dead letters dropped (oldest first) past ``limit``."""

    def letters(self) -> list[DeadLetter]:
        """The dead letters, oldest first."""
        return list(self._letters.values())

    def take(self, dead_id: str) -> DeadLetter | None:
        """Remove and return the dead letter ``dead_id`` (None if there is none)."""
        return self._letters.pop(dead_id, None)

    def add(self, letter: DeadLetter) -> None:
        """Keep ``letter`` (logged, unless its receiver's queue was full: that is logged
        once a second per receiver where it happens)."""
        self._letters[letter.id] = letter
        while len(self._letters) > self._limit:
            _, old = self._letters.popitem(last=False)
            self.dropped += 1
            if letter.at - self._dropped_logged_at >= 1.0:  # one line a second at most
                self._dropped_logged_at = letter.at
                logger.warning(
                    "webhooks: dead letter %s dropped, over the limit of %d (%d dropped in all)",
                    old.id,
                    self._limit,
                    self.dropped,
                )
        if letter.error != FULL:
            logger.warning(
                "webhook %s for %s: dead letter after %d attempt(s): %s",
                letter.event["type"],
                letter.subscription,
                letter.attempts,
                letter.error,
            )
