"""The service's journal: what the board saw, and each request's story for the console.

``voice-hitl serve`` journals every board event (a request posted, settled, abandoned) as a
``board`` entry. Workers that journal their own requests into the same store (the Redis
journal under the same prefix) add the rest of the story: notified, escalated, delivered, the
transcript lines before the question. ``GET /v1/requests/{id}/story`` returns it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from ..board import BoardEscalated, BoardEvent, BoardOpened, BoardRequest, BoardStatus
from ..journal import Journal, JournalEntry, JournalUnavailableError
from ._desk import WriteAhead
from ._refusals import NotRecordedError

__all__ = [
    "KEY_ENV",
    "board_entry",
    "journal_board",
    "journal_decisions",
    "journal_key",
    "place_of",
    "story_of",
]

KEY_ENV = "VOICE_HITL_JOURNAL_KEY"


def board_entry(event: BoardEvent) -> tuple[str, dict[str, Any]]:
    """The request id and the ``board`` entry's data for one board event."""
    request = event.request
    if isinstance(event, BoardOpened):
        data: dict[str, Any] = {
            "event": "posted",
            "tool": request.tool,
            "arguments": dict(request.arguments),
            "room": request.room,
            "channel": request.channel,
            "worker": request.worker,
            "addressed": list(request.addressed),
        }
    elif isinstance(event, BoardEscalated):
        data = {
            "event": "escalated",
            "room": request.room,
            "channel": request.channel,
            "escalation": dict(event.escalation),
        }
    else:
        data = {
            "event": str(request.status),
            "room": request.room,
            "channel": request.channel,
            "text": request.text,
            "by": request.settled_by,
            "via": request.settled_via,
        }
    return request.id, data


def journal_board(journal: Journal) -> Any:
    """A board-event listener that journals each event (queues it; never blocks)."""

    def listener(event: BoardEvent) -> None:
        request_id, data = board_entry(event)
        journal.record(request_id, "board", data)

    return listener


def journal_decisions(journal: Journal) -> WriteAhead:
    """The desk's write-ahead for a ``sync`` journal: each operator decision is stored as a
    ``board`` entry ``decided`` (status, text, by, via) before the request is claimed, so the
    call can only take an answer the journal holds. A decision refused as not recorded may
    still reach the journal later (the entry stays queued); it was never sent."""

    async def write_ahead(
        request: BoardRequest, status: BoardStatus, text: str, by: str, via: str
    ) -> None:
        data = {
            "event": "decided",
            "status": str(status),
            "room": request.room,
            "channel": request.channel,
            "text": text,
            "by": by,
            "via": via,
        }
        stored = journal.record(request.id, "board", data, stored=True)
        try:
            # Bounded here too: the writer's own deadline cannot fire while a write hangs.
            async with asyncio.timeout(journal.sync_timeout):
                await asyncio.wrap_future(stored)
        except (JournalUnavailableError, TimeoutError) as exc:
            why = str(exc) or f"not stored within {journal.sync_timeout:g} s"
            raise NotRecordedError(
                f"the answer to request {request.id} was not sent: the journal could not store "
                f"it first ({why}); nothing was delivered, retry later"
            ) from exc

    return write_ahead


async def story_of(journal: Journal, request_id: str) -> list[JournalEntry]:
    """One request's entries, read off the event loop."""
    return await asyncio.to_thread(journal.store.read, request_id)


def place_of(story: list[JournalEntry]) -> tuple[str, str]:
    """The room and channel a story belongs to (from its first entry that says)."""
    for entry in story:
        data = entry.data
        if "room" in data or "channel" in data:
            return str(data.get("room") or ""), str(data.get("channel") or "")
    return "", ""


def journal_key(path: Path | None) -> bytes:
    """The chain's key: ``$VOICE_HITL_JOURNAL_KEY``, else a key file next to a SQLite journal
    (``<journal>.key``, created with a random key, readable by its owner only).

    Raises:
        ValueError: No key in the environment and no file journal to keep one beside.
    """
    key = os.environ.get(KEY_ENV, "")
    if key:
        return key.encode()
    if path is None:
        raise ValueError(f"the Redis journal needs its chain key in ${KEY_ENV}")
    key_file = path.with_name(path.name + ".key")
    if not key_file.exists():
        key_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32))
    return key_file.read_text().strip().encode()
