"""The records of a human-input request: its status, its outcome, the view hooks receive."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from .._exceptions import HumanInputRejectedError
from .._types import ChannelType

__all__ = [
    "OutcomeKind",
    "PendingInput",
    "PendingInputEvent",
    "PendingInputStatus",
    "NO_CONTEXT",
    "unwrap",
    "utc_now",
]

NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})
"""The empty ``context`` of a request whose door said nothing more."""


class PendingInputStatus(enum.StrEnum):
    """Where a request stands."""

    PENDING = "pending"
    RESOLVED = "resolved"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"


class OutcomeKind(enum.Enum):
    """How a request ended."""

    ANSWERED = "answered"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"
    GIVEN_UP = "given_up"  # closed, released or withdrawn by the handler


def unwrap(kind: OutcomeKind, text: str) -> str:
    """Return the answer of a settled request, or raise what ``wait()`` raises for it."""
    if kind is OutcomeKind.ANSWERED:
        return text
    if kind is OutcomeKind.REJECTED:
        raise HumanInputRejectedError(text)
    if kind is OutcomeKind.TIMED_OUT:
        raise TimeoutError(text)
    raise RuntimeError(text)


def utc_now() -> datetime:
    """The creation time a request records (timezone-aware UTC)."""
    return datetime.now(UTC)


@dataclass(slots=True, eq=False)
class PendingInput:
    """A request for human input, as the handler tracks it.

    ``status`` and ``result`` change as the request settles; everything else is fixed when
    ``create()`` returns. ``deadline`` is when the wait times out (None: not known or
    unbounded); ``context`` is what the door knew (e.g. ``transcript``, the call's last lines).
    """

    pending_id: str
    tool_name: str
    arguments: dict[str, Any]
    room_id: str = ""
    tool_call_id: str = ""
    channel_id: str = ""
    channel_type: ChannelType = ChannelType.AI
    status: PendingInputStatus = PendingInputStatus.PENDING
    result: str | None = None
    detached: bool = False
    created_at: datetime = field(default_factory=utc_now)
    actor_id: str | None = None
    deadline: datetime | None = None
    context: Mapping[str, Any] = field(default_factory=lambda: NO_CONTEXT)

    def to_event(self) -> PendingInputEvent:
        """The frozen view handed to ``ON_USER_INPUT_REQUIRED`` hooks."""
        return PendingInputEvent(
            pending_id=self.pending_id,
            tool_name=self.tool_name,
            arguments=MappingProxyType(dict(self.arguments)),
            room_id=self.room_id,
            tool_call_id=self.tool_call_id,
            channel_id=self.channel_id,
            channel_type=self.channel_type,
            actor_id=self.actor_id,
            created_at=self.created_at,
            deadline=self.deadline,
            context=self.context,
        )


@dataclass(frozen=True, slots=True)
class PendingInputEvent:
    """What ``ON_USER_INPUT_REQUIRED`` hooks receive: who asks what, and where."""

    pending_id: str
    tool_name: str
    arguments: MappingProxyType[str, Any]
    room_id: str
    tool_call_id: str
    channel_id: str
    channel_type: ChannelType
    actor_id: str | None
    created_at: datetime | None = None
    deadline: datetime | None = None
    context: Mapping[str, Any] = field(default_factory=lambda: NO_CONTEXT)
