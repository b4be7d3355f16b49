"""What the journal keeps of one request lifecycle event: a record (request id, time, kind,
data) that the writer turns into a chained entry."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..human._lifecycle import RequestEvent

__all__ = ["Record", "iso", "record_of"]

Record = tuple[str, str, str, dict[str, Any]]  # request id, at, kind, data


def iso(at: datetime | None) -> str | None:
    return None if at is None else at.astimezone(UTC).isoformat()


def record_of(event: RequestEvent) -> Record:
    """What the journal keeps of one lifecycle event."""
    at = iso(event.at) or ""
    if event.type == "opened":
        r = event.request
        data: dict[str, Any] = {
            "tool": r.tool_name,
            "arguments": dict(r.arguments),
            "room": r.room_id,
            "channel": r.channel_id,
            "channel_type": str(r.channel_type),
            "tool_call_id": r.tool_call_id,
            "actor": r.actor_id,
            "deadline": iso(r.deadline),
            "context": dict(r.context),
        }
    elif event.type == "notified":
        data = {"denied": event.denied, "error": event.error}
    elif event.type == "noted":
        data = {"note": event.note, **dict(event.data)}
    elif event.type == "settled":
        data = {
            "outcome": event.outcome,
            "text": event.text,
            "detail": event.detail,
            "by": event.by,
            "via": event.via,
        }
    else:
        data = {
            "tool_call_id": event.tool_call_id,
            "outcome": event.outcome,
            "text": event.text,
            "detail": event.detail,
        }
    return event.pending_id, at, event.type, data
