"""The records of a human-input request: its status, its outcome, the view hooks receive."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from ._exceptions import HumanInputRejectedError
from ._types import ChannelType

__all__ = ["Outcome", "OutcomeKind", "PendingInput", "PendingInputEvent", "PendingInputStatus"]


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


@dataclass(frozen=True, slots=True)
class Outcome:
    """A settled request's outcome, replayable by ``wait()``."""

    kind: OutcomeKind
    text: str

    def unwrap(self) -> str:
        """Return the answer, or raise what ``wait()`` raises for this outcome."""
        kind = self.kind
        if kind is OutcomeKind.ANSWERED:
            return self.text
        if kind is OutcomeKind.REJECTED:
            raise HumanInputRejectedError(self.text)
        if kind is OutcomeKind.TIMED_OUT:
            raise TimeoutError(self.text)
        raise RuntimeError(self.text)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True, eq=False)
class PendingInput:
    """A request for human input, as the handler tracks it.

    ``status`` and ``result`` change as the request settles; everything else is fixed when
    ``create()`` returns.
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
    created_at: datetime = field(default_factory=_now)
    actor_id: str | None = None

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
