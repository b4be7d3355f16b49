"""A request board: open human-input requests that other processes see and answer.

:class:`BoardBridge` connects a worker's :class:`~voice_hitl.HumanInputHandler` to a
:class:`RequestBoard`: it publishes every request the handler opens (tool, arguments, answer
spec, room, channel, actor, addressed people, deadline, the owning worker, the call's last
transcript lines), delivers an answer given anywhere to the handler exactly once, shows
withdrawals at once, and heartbeats so a dead worker's requests are abandoned.

Backends: :class:`MemoryBoard` (embedded, one process) and :class:`RedisBoard` (extra
``redis``; imported on first use, so this package does not need the Redis client).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._public import publish
from ._bridge import BoardBridge
from ._memory import MemoryBoard
from ._model import (
    BoardClaim,
    BoardClaimed,
    BoardError,
    BoardEscalated,
    BoardEvent,
    BoardOpened,
    BoardOutcomeUnknownError,
    BoardRequest,
    BoardSettled,
    BoardStatus,
    BoardUnavailableError,
    ClaimResult,
    SettleResult,
    request_from_pending,
    spec_to_wire,
)
from ._protocol import RequestBoard

if TYPE_CHECKING:
    from ._redis import RedisBoard

__all__ = [
    "BoardBridge",
    "BoardClaim",
    "BoardClaimed",
    "BoardEscalated",
    "BoardError",
    "BoardEvent",
    "BoardOpened",
    "BoardOutcomeUnknownError",
    "BoardRequest",
    "BoardSettled",
    "BoardStatus",
    "BoardUnavailableError",
    "ClaimResult",
    "MemoryBoard",
    "RedisBoard",
    "RequestBoard",
    "SettleResult",
    "request_from_pending",
    "spec_to_wire",
]


def __getattr__(name: str) -> Any:
    if name == "RedisBoard":
        from ._redis import RedisBoard

        RedisBoard.__module__ = __name__
        return RedisBoard
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


publish(__name__, globals(), [n for n in __all__ if n != "RedisBoard"])
