"""One webhook receiver's counts, kept in the service's process (``Webhooks.lanes()``)."""

from __future__ import annotations

import logging
import time

__all__ = ["Gauge"]

logger = logging.getLogger("voice_hitl.service.webhooks")


class Gauge:
    """A receiver's events ``waiting`` (queued or being delivered), ``delivered``,
    ``retries`` and ``overflowed`` (refused by a full lane, each one a dead letter)."""

    __slots__ = ("delivered", "logged_at", "name", "overflowed", "retries", "since_log", "waiting")

    def __init__(self, name: str) -> None:
        self.name = name
        self.waiting = self.delivered = self.retries = self.overflowed = self.since_log = 0
        self.logged_at = float("-inf")

    def overflow(self) -> None:
        """Count one event refused by a full lane; log a burst once a second."""
        self.overflowed += 1
        self.since_log += 1
        now = time.monotonic()
        if now - self.logged_at >= 1.0:
            logger.warning(
                "webhook receiver %s: queue full (%d waiting), %d event(s) made dead letters "
                "(%d in all)",
                self.name,
                self.waiting,
                self.since_log,
                self.overflowed,
            )
            self.logged_at, self.since_log = now, 0
