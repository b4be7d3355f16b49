"""``Journal``: every request's story, appended in order, off the event loop.

The journal is a request observer (:meth:`~voice_hitl.HumanInputHandler.add_observer`). On the
call path it only puts the event on a queue; a writer thread turns events into entries, links
them into the keyed chain and writes them in batches. When the store fails, the call goes on:
the entries wait in memory (up to ``max_buffered``) and are written once the store is back;
any that had to be dropped are recorded as a ``gap`` entry, logged and counted.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .._lifecycle import RequestEvent
from ._entry import GENESIS, JournalEntry, digest_of
from ._errors import ChainMoved

if TYPE_CHECKING:
    from .._human_input import HumanInputHandler

__all__ = ["Journal", "JournalStats", "JournalStore", "record_of"]

logger = logging.getLogger("voice_hitl.journal")

_STOP = object()
_RELINKS = 1000


class JournalStore(Protocol):
    """Where entries are kept (blocking calls, made from the journal's writer thread)."""

    def last(self) -> tuple[int, str] | None:
        """The newest entry's sequence number and digest."""

    def append(self, entries: Sequence[JournalEntry]) -> None:
        """Write entries atomically, in order, if the newest stored entry is the one the first
        links to; else raise :class:`ChainMoved` (another writer appended first)."""

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        """Entries in sequence order (all, or one request's)."""

    def close(self) -> None:
        """Release the store."""


Record = tuple[str, str, str, dict[str, Any]]  # request id, at, kind, data


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.astimezone(UTC).isoformat()


def record_of(event: RequestEvent) -> Record:
    """What the journal keeps of one lifecycle event."""
    at = _iso(event.at) or ""
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
            "deadline": _iso(r.deadline),
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


@dataclass
class JournalStats:
    """What the writer did: entries written, failed writes, entries dropped, gaps recorded,
    batches re-linked because another writer appended first."""

    written: int = 0
    failures: int = 0
    dropped: int = 0
    gaps: int = 0
    relinked: int = 0
    last_error: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class Journal:
    """Keeps every lifecycle event of the requests it observes, tamper-evident.

    Args:
        store: Where entries go (e.g. :class:`SqliteJournalStore`).
        key: The application's key for the chain (the same kind of key as receipts).
        batch: The most entries written in one transaction.
        max_buffered: Entries kept in memory while the store fails; older ones are dropped
            (and recorded as a gap) beyond it.
        retry_interval: Seconds between write attempts while the store fails.
    """

    def __init__(
        self,
        store: JournalStore,
        key: bytes,
        *,
        batch: int = 512,
        max_buffered: int = 100_000,
        retry_interval: float = 0.5,
    ) -> None:
        if not key:
            raise ValueError("the journal needs a non-empty key for its chain")
        if batch < 1 or max_buffered < 1 or not retry_interval > 0:
            raise ValueError("batch and max_buffered must be >= 1 and retry_interval > 0")
        self.store = store
        self.stats = JournalStats()
        self._key = key
        self._batch = batch
        self._max_buffered = max_buffered
        self._retry = retry_interval
        self._gather = 0.01  # seconds the writer lets events gather after a wake-up
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._records: list[Record] = []
        self._chain: tuple[int, str] | None = None  # (last seq, last digest) once known
        self._dropped_since: str | None = None
        self._dropped_pending = 0

    @classmethod
    def open(cls, path: str | Path, key: bytes, **options: Any) -> Journal:
        """A started journal on a SQLite file (the embedded default)."""
        from ._sqlite import SqliteJournalStore

        journal = cls(SqliteJournalStore(path), key, **options)
        journal.start()
        return journal

    @classmethod
    def on_redis(
        cls, url: str, key: bytes, *, prefix: str | None = None, **options: Any
    ) -> Journal:
        """A started journal on a Redis stream that many processes share."""
        from ._redis import DEFAULT_PREFIX, RedisJournalStore

        store = RedisJournalStore(url, prefix=prefix or DEFAULT_PREFIX)
        journal = cls(store, key, **options)
        journal.start()
        return journal

    def start(self) -> None:
        """Start the writer thread (once)."""
        if self._thread is not None:
            raise RuntimeError("the journal is already started")
        self._thread = threading.Thread(target=self._run, name="voice-hitl-journal", daemon=True)
        self._thread.start()

    def attach(self, handler: HumanInputHandler) -> Callable[[], None]:
        """Journal every request of ``handler``; returns a function that detaches it."""
        return handler.add_observer(self)

    def __call__(self, event: RequestEvent) -> None:
        """The observer: queue the event (nothing else happens on the call path)."""
        self._queue.put(event)

    def record(
        self, request_id: str, kind: str, data: Mapping[str, Any], at: datetime | None = None
    ) -> None:
        """Append an entry that is not a request event (e.g. what a board saw); thread-safe.

        ``data`` must be JSON-serialisable (anything else is written as its ``str``).
        """
        when = _iso(at or datetime.now(UTC)) or ""
        self._queue.put((request_id, when, kind, dict(data)))

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Block until what was queued before this call has been written (or tried).

        Returns:
            True when nothing is left unwritten. Call it from a thread, not the event loop
            (``await asyncio.to_thread(journal.flush)``).
        """
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout) and not self._records

    def close(self, timeout: float | None = 10.0) -> None:
        """Write what is queued, stop the writer and close the store (idempotent; blocks)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            thread.join(timeout)
        self.store.close()

    # -- the writer thread ---------------------------------------------------------------

    def _run(self) -> None:
        stop = False
        while not stop:
            waiting = bool(self._records)
            try:
                item = self._queue.get(timeout=self._retry if waiting else None)
            except queue.Empty:
                item = None
            else:
                time.sleep(self._gather)  # let a batch gather: one wake-up per batch
            markers: list[threading.Event] = []
            while item is not None:
                if item is _STOP:
                    stop = True
                elif isinstance(item, threading.Event):
                    markers.append(item)
                elif isinstance(item, tuple):
                    self._records.append(item)
                else:
                    self._records.append(record_of(item))  # type: ignore[arg-type]
                if len(self._records) >= self._batch * 4:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            self._write_all()
            for marker in markers:
                marker.set()

    def _write_all(self) -> None:
        while self._records:
            if not self._write(self._records[: self._batch]):
                self._bound_buffer()
                return
            del self._records[: self._batch]

    def _linked(self, records: list[Record]) -> list[JournalEntry]:
        """The records as entries linked to the chain's head as this writer knows it."""
        if self._chain is None:
            self._chain = self.store.last() or (0, GENESIS)
        seq, prev = self._chain
        entries: list[JournalEntry] = []
        for request_id, at, kind, data in records:
            seq += 1
            digest = digest_of(self._key, seq, request_id, at, kind, data, prev)
            entries.append(JournalEntry(seq, request_id, at, kind, data, prev, digest))
            prev = digest
        return entries

    def _write(self, records: list[Record]) -> bool:
        try:
            if self._dropped_pending:
                gap = {"dropped": self._dropped_pending, "since": self._dropped_since}
                gap["reason"] = self.stats.last_error
                records = [("", datetime.now(UTC).isoformat(), "gap", gap), *records]
            for attempt in range(_RELINKS + 1):  # another writer may append first: re-link
                if attempt == _RELINKS:
                    raise RuntimeError(f"the chain kept moving ({_RELINKS} re-links in a row)")
                entries = self._linked(records)
                try:
                    self.store.append(entries)
                except ChainMoved as moved:
                    self._chain = moved.head or (0, GENESIS)
                    with self.stats._lock:
                        self.stats.relinked += 1
                else:
                    break
            seq, prev = entries[-1].seq, entries[-1].digest
        except Exception as exc:
            with self.stats._lock:
                self.stats.failures += 1
                self.stats.last_error = f"{type(exc).__name__}: {exc}"
            if self.stats.failures == 1 or self.stats.failures % 100 == 0:
                logger.error("journal write failed (%d so far): %s", self.stats.failures, exc)
            return False
        if self._dropped_pending:
            self.stats.gaps += 1
            self._dropped_pending = 0
            self._dropped_since = None
        self._chain = (seq, prev)
        self.stats.written += len(entries)
        return True

    def _bound_buffer(self) -> None:
        extra = len(self._records) - self._max_buffered
        if extra > 0:
            del self._records[:extra]
            if self._dropped_since is None:
                self._dropped_since = datetime.now(UTC).isoformat()
            self._dropped_pending += extra
            self.stats.dropped += extra
            logger.error("journal unavailable: %d entries dropped (recorded as a gap)", extra)
