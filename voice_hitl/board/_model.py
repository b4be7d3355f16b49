"""What a request board holds: :class:`BoardRequest`, its status, and the board's events.

A request on the board is the operator's view of one open :class:`~voice_hitl.PendingInput`:
what is asked (tool, arguments, the :class:`~voice_hitl.speech.AnswerSpec` as JSON), where
(room, channel, channel type, actor), whom it addresses, when it opened and times out, which
worker owns it, and the call's last transcript lines. Its status moves once, from ``open`` to
one settled status; the settle records when, by whom and how.

Times are POSIX seconds (floats); :meth:`BoardRequest.to_wire` renders them as ISO 8601 UTC.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from .._edge import scrub
from .._exceptions import VoiceHitlError
from ..human._pending import PendingInputEvent
from ..speech import AnswerSpec, AnswerSpecError

__all__ = [
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
    "SettleResult",
    "iso",
    "request_from_pending",
    "spec_to_wire",
]


class BoardError(VoiceHitlError):
    """Root of the request board's errors."""


class BoardUnavailableError(BoardError, ConnectionError):
    """The board's server cannot be reached right now, or refused the command (READONLY,
    OOM, LOADING, MOVED, CLUSTERDOWN, ...): the caller may retry."""


class BoardOutcomeUnknownError(BoardUnavailableError):
    """A step reached the board's master, but fewer replicas than ``min_replicas``
    acknowledged it in time: a failover now could lose it. Whether it stands is unknown
    (the operator service answers 504 ``outcome_unknown``; a retry tells)."""


class BoardStatus(enum.StrEnum):
    """Where a request on the board stands."""

    OPEN = "open"
    ANSWERED = "answered"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"
    WITHDRAWN = "withdrawn"
    ABANDONED = "abandoned"
    """The worker that owned it stopped sending heartbeats."""


def iso(seconds: float | None) -> str | None:
    """POSIX seconds as ISO 8601 UTC with milliseconds (None stays None)."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class BoardClaim:
    """An operator's answer or rejection waiting for the owning worker to take it.

    ``until`` (POSIX seconds, the board's clock) is when the claim lapses unless the worker
    took it; ``taken`` is set by the worker, atomically, before it hands the answer to its
    handler (see :mod:`voice_hitl.board._protocol`).
    """

    token: str
    status: BoardStatus
    text: str
    by: str | None
    via: str | None
    until: float
    taken: bool = False


@dataclass(frozen=True, slots=True)
class BoardRequest:
    """One request as the board shows it (see the module docstring).

    ``text`` is the answer's JSON (``answered``) or the reason (other settled statuses);
    ``detail`` says why a request was withdrawn when that is known.
    """

    id: str
    tool: str
    arguments: Mapping[str, Any]
    worker: str
    created_at: float
    spec: Mapping[str, Any] | None = None
    room: str = ""
    channel: str = ""
    channel_type: str = "ai"
    actor: str | None = None
    addressed: tuple[str, ...] = ()
    approvers: tuple[str, ...] = ()
    quorum: int | None = None
    deadline: float | None = None
    transcript: tuple[Mapping[str, Any], ...] = ()
    status: BoardStatus = BoardStatus.OPEN
    text: str = ""
    detail: str = ""
    settled_at: float | None = None
    settled_by: str | None = None
    settled_via: str | None = None
    claim: BoardClaim | None = None
    """The operator's answer waiting for the worker (open), or the one it took (settled)."""

    @property
    def is_open(self) -> bool:
        """True while nobody has settled it."""
        return self.status is BoardStatus.OPEN

    def static_json(self) -> str:
        """The fields fixed when it opened, as compact JSON (what backends store)."""
        return json.dumps(
            {
                "id": self.id,
                "tool": self.tool,
                "arguments": dict(self.arguments),
                "worker": self.worker,
                "created_at": self.created_at,
                "spec": None if self.spec is None else dict(self.spec),
                "room": self.room,
                "channel": self.channel,
                "channel_type": self.channel_type,
                "actor": self.actor,
                "addressed": list(self.addressed),
                "approvers": list(self.approvers),
                "quorum": self.quorum,
                "deadline": self.deadline,
                "transcript": [dict(line) for line in self.transcript],
            },
            separators=(",", ":"),
            default=str,
        )

    @classmethod
    def from_static_json(cls, data: str) -> BoardRequest:
        """Rebuild an open request from :meth:`static_json`."""
        raw = json.loads(data)
        return cls(
            id=raw["id"],
            tool=raw["tool"],
            arguments=raw["arguments"],
            worker=raw["worker"],
            created_at=float(raw["created_at"]),
            spec=raw.get("spec"),
            room=raw.get("room", ""),
            channel=raw.get("channel", ""),
            channel_type=raw.get("channel_type", "ai"),
            actor=raw.get("actor"),
            addressed=tuple(raw.get("addressed", ())),
            approvers=tuple(raw.get("approvers", ())),
            quorum=raw.get("quorum"),
            deadline=raw.get("deadline"),
            transcript=tuple(raw.get("transcript", ())),
        )

    def settled(
        self,
        status: BoardStatus,
        text: str,
        at: float,
        by: str | None = None,
        via: str | None = None,
        detail: str = "",
    ) -> BoardRequest:
        """This request with a settled status."""
        return replace(
            self,
            status=status,
            text=text,
            detail=detail,
            settled_at=at,
            settled_by=by,
            settled_via=via,
        )

    def to_wire(self) -> dict[str, Any]:
        """The request as the operator API and the live feed show it (ISO times)."""
        wire: dict[str, Any] = {
            "id": self.id,
            "status": str(self.status),
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "spec": None if self.spec is None else dict(self.spec),
            "room": self.room,
            "channel": self.channel,
            "channel_type": self.channel_type,
            "actor": self.actor,
            "addressed": list(self.addressed),
            "approvers": list(self.approvers),
            "quorum": self.quorum,
            "created_at": iso(self.created_at),
            "deadline": iso(self.deadline),
            "worker": self.worker,
            "transcript": [dict(line) for line in self.transcript],
        }
        if not self.is_open:
            wire["settled"] = self.settlement_wire()
        return wire

    def settlement_wire(self) -> dict[str, Any]:
        """How it settled: status, when, by whom, how, and the answer or reason."""
        return {
            "status": str(self.status),
            "at": iso(self.settled_at),
            "by": self.settled_by,
            "via": self.settled_via,
            "text": self.text,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class BoardOpened:
    """A request appeared on the board (or was re-published after the board lost it)."""

    request: BoardRequest
    type: Literal["opened"] = "opened"


@dataclass(frozen=True, slots=True)
class BoardSettled:
    """A request on the board settled (answered, rejected, timed out, withdrawn, abandoned)."""

    request: BoardRequest
    type: Literal["settled"] = "settled"


@dataclass(frozen=True, slots=True)
class BoardClaimed:
    """An operator claimed one of a worker's requests (only a worker's own subscription sees
    it): the worker should take the claim and hand its answer to the handler."""

    request: BoardRequest
    type: Literal["claimed"] = "claimed"


@dataclass(frozen=True, slots=True)
class BoardEscalated:
    """A worker's handler escalated one of its open requests (an ``escalate_to`` policy
    readdressed it); ``escalation`` is the handler's note (who, time left). Only the
    all-requests subscription sees it."""

    request: BoardRequest
    escalation: Mapping[str, Any]
    type: Literal["escalated"] = "escalated"


BoardEvent = BoardOpened | BoardSettled | BoardClaimed | BoardEscalated
"""What a board subscription yields."""


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """What a claim attempt did.

    ``outcome``: ``claimed`` (this claim is on the request, or was already: same token),
    ``busy`` (another operator's claim is waiting), ``settled`` (the request is settled:
    ``request`` says how; it may be this token's claim, taken and settled), ``missing`` (no
    such id).
    """

    outcome: Literal["claimed", "busy", "settled", "missing"]
    request: BoardRequest | None = None


@dataclass(frozen=True, slots=True)
class SettleResult:
    """What a settle attempt did.

    ``won`` is True only for the one settle that changed the request's status; otherwise
    ``request`` shows who settled it first, when and how (None: the board has no such id).
    """

    won: bool
    request: BoardRequest | None = field(default=None)


def spec_to_wire(spec: AnswerSpec) -> dict[str, Any]:
    """An :class:`~voice_hitl.speech.AnswerSpec` as JSON (what an answer control needs)."""
    return {
        "kind": str(spec.kind),
        "question": spec.question,
        "choices": [{"id": c.id, "label": c.label} for c in spec.effective_choices]
        if spec.choices or spec.kind == "confirm"
        else [],
        "default_choice_id": spec.default_choice_id,
        "minimum": spec.minimum,
        "maximum": spec.maximum,
        "length": spec.length,
    }


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, Sequence):
        return tuple(str(item) for item in value if isinstance(item, str | int))
    return ()


def request_from_pending(event: PendingInputEvent, worker: str) -> BoardRequest:
    """The board's view of a request a worker's handler opened.

    The spec comes from :meth:`AnswerSpec.from_tool_call` (None for tools it does not map);
    addressed people from the arguments ``ask`` / ``approvers`` / ``quorum`` (the conference's
    addressing) or the context's ``addressed``; transcript lines from the context's
    ``transcript``. Text is scrubbed (:func:`voice_hitl._edge.scrub`): a lone surrogate a
    program put in the arguments shows as U+FFFD instead of breaking the board.
    """
    arguments: dict[str, Any] = scrub(dict(event.arguments))
    try:
        spec: dict[str, Any] | None = spec_to_wire(
            AnswerSpec.from_tool_call(event.tool_name, arguments)
        )
    except AnswerSpecError:
        spec = None
    context = scrub(dict(event.context))
    quorum = arguments.get("quorum")
    addressed = _names(arguments.get("ask")) or _names(context.get("addressed"))
    transcript = context.get("transcript") or ()
    created = event.created_at.timestamp() if event.created_at is not None else 0.0
    return BoardRequest(
        id=event.pending_id,
        tool=event.tool_name,
        arguments=arguments,
        worker=worker,
        created_at=created,
        spec=spec,
        room=scrub(event.room_id),
        channel=scrub(event.channel_id),
        channel_type=str(event.channel_type),
        actor=scrub(event.actor_id),
        addressed=addressed,
        approvers=_names(arguments.get("approvers")),
        quorum=quorum if isinstance(quorum, int) and not isinstance(quorum, bool) else None,
        deadline=None if event.deadline is None else event.deadline.timestamp(),
        transcript=tuple(dict(line) for line in transcript if isinstance(line, Mapping)),
    )
