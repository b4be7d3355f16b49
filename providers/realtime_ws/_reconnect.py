"""``ReconnectPolicy``: how a websocket realtime session retries a lost connection."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ReconnectPolicy"]


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    """How a session reconnects after losing its connection.

    Attempt ``n`` (from 0) waits ``min(max_delay, initial_delay * 2**n)`` seconds first.

    Attributes:
        max_attempts: Attempts before the session gives up and ends (0: never reconnect).
        initial_delay: The first wait, in seconds.
        max_delay: The longest wait, in seconds.
        open_timeout: The bound on each connection handshake, in seconds (it also bounds a
            protocol's own opening exchange, such as Gemini's ``setup``).
    """

    max_attempts: int = 5
    initial_delay: float = 0.25
    max_delay: float = 8.0
    open_timeout: float = 10.0

    def __post_init__(self) -> None:
        if self.max_attempts < 0:
            raise ValueError(f"max_attempts must be >= 0, got {self.max_attempts}")
        if self.initial_delay < 0 or self.max_delay < 0 or self.open_timeout <= 0:
            raise ValueError("delays must be >= 0 and open_timeout > 0")

    def delay(self, attempt: int) -> float:
        """The wait before reconnect attempt ``attempt`` (counted from 0)."""
        return float(min(self.max_delay, self.initial_delay * 2**attempt))
