"""``Journal``: every request's story, appended in order, off the event loop.

The journal is a request observer (:meth:`~voice_hitl.HumanInputHandler.add_observer`). On the
call path it only puts the event on a queue; a writer thread turns events into entries, links
them into the keyed chain and writes them in batches. When the store fails, the call goes on:
the entries wait in memory (up to ``max_buffered``) and are written once the store is back;
any that had to be dropped are recorded as a ``gap`` entry, logged and counted.

A write that fails with an error (not :class:`ChainMoved`) may still have reached the store:
the connection can drop after the server applied the batch and before the reply came back. The
writer keeps that batch aside and, once the store answers again, asks it whether the batch's
last entry is there (:meth:`JournalStore.contains`) before writing anything else: if it is,
the batch counts as written; if not, it is written again. So a lost reply never duplicates
entries, even when other processes appended in between.

Durability is chosen per journal. ``fast`` (the default): the observer only queues, so a crash
of the process loses what was queued and not yet written (``unwritten``). ``sync``: for a
``settled`` event the observer also returns a future that the writer completes once the entry
is stored, and the handler's ``wait()`` awaits it, so no call reads an answer the journal has
not stored; if the store cannot take it within ``sync_timeout`` the call fails with
:class:`JournalUnavailableError` (the entry stays queued). Either way the writer signs a
checkpoint into the journal's anchor after each stored batch (:mod:`._anchor`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from ..human._lifecycle import RequestEvent
from ._anchor import FileAnchor, JournalAnchor, RedisAnchor
from ._checkpoints import Checkpoints
from ._entry import GENESIS, JournalEntry, digest_of
from ._errors import ChainMoved
from ._record import Record, iso, record_of
from ._store import JournalStats, JournalStore
from ._waiting import Waiting, fail

if TYPE_CHECKING:
    from ..human._human_input import HumanInputHandler

__all__ = ["Durability", "Journal", "default_anchor"]

logger = logging.getLogger("voice_hitl.journal")

_STOP = object()
_RELINKS = 1000


Durability = Literal["fast", "sync"]
"""``fast``: queue and go on; ``sync``: a settled outcome is stored before the call reads it."""


@dataclass(frozen=True, slots=True)
class _Held:
    """A ``settled`` event whose call waits until it is stored (``sync`` durability), or a
    record whose writer waits (:meth:`Journal.record` with ``stored=True``)."""

    event: RequestEvent | Record
    done: Future[None]


@dataclass(frozen=True, slots=True)
class _Unsure:
    """A batch whose write raised: its entries, its records (without the gap entry) and the
    number of dropped entries its gap entry names (0 when it has none)."""

    entries: list[JournalEntry]
    records: list[Record]
    gap: int


def default_anchor(store: JournalStore, *, read_only: bool = False) -> JournalAnchor | None:
    """Where ``store``'s checkpoints go by default: ``<file>.anchor`` beside a SQLite journal,
    the hash ``T:anchor`` beside a Redis one (``T``: its hash-tagged prefix), none for other
    stores."""
    from ._redis import RedisJournalStore
    from ._sqlite import SqliteJournalStore

    if isinstance(store, SqliteJournalStore):
        return FileAnchor(f"{store.path}.anchor", read_only=read_only)
    if isinstance(store, RedisJournalStore):
        return RedisAnchor(store.client, f"{store.keys}:anchor", read_only=read_only)
    return None


class Journal:
    """Keeps every lifecycle event of the requests it observes, tamper-evident.

    Args:
        store: Where entries go (e.g. :class:`SqliteJournalStore`).
        key: The application's key for the chain (the same kind of key as receipts).
        batch: The most entries written in one transaction (at most ``max_buffered``).
        max_buffered: Entries kept in memory while the store fails; beyond it the oldest are
            dropped (and recorded as a gap), except a failed batch that may have reached the
            store, which waits until the store says whether it has it.
        retry_interval: Seconds between write attempts while the store fails.
        durability: ``fast`` (queue and go on) or ``sync`` (a settled outcome is stored before
            the call reads it; see the module docstring).
        sync_timeout: ``sync``: seconds a call waits for its outcome to be stored before it
            fails with :class:`JournalUnavailableError`.
        anchor: Where the writer signs its checkpoints: True for the store's default
            (:func:`default_anchor`), False for none, or a :class:`JournalAnchor`.
    """

    def __init__(
        self,
        store: JournalStore,
        key: bytes,
        *,
        batch: int = 512,
        max_buffered: int = 100_000,
        retry_interval: float = 0.5,
        durability: Durability = "fast",
        sync_timeout: float = 10.0,
        anchor: JournalAnchor | bool = True,
    ) -> None:
        if not key:
            raise ValueError("the journal needs a non-empty key for its chain")
        if batch < 1 or max_buffered < 1 or not retry_interval > 0:
            raise ValueError("batch and max_buffered must be >= 1 and retry_interval > 0")
        if durability not in ("fast", "sync"):
            raise ValueError(f"durability must be 'fast' or 'sync', not {durability!r}")
        if not 0 < sync_timeout < float("inf"):
            raise ValueError(f"sync_timeout must be a finite number of seconds > 0: {sync_timeout}")
        self.store = store
        self.stats = JournalStats()
        self._key = key
        self._batch = min(batch, max_buffered)
        self._max_buffered = max_buffered
        self._retry = retry_interval
        self.durability: Durability = durability
        self._sync_timeout = sync_timeout
        # fast: let a batch gather after a wake-up; sync: calls wait, so write at once (the
        # batch is whatever arrived while the previous one was being written)
        self._gather = 0.01 if durability == "fast" else 0.0
        self._waiting = Waiting(sync_timeout)
        chosen = default_anchor(store) if anchor is True else anchor or None
        self._checkpoints = None if chosen is None else Checkpoints(chosen, key, self.stats)
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._records: list[Record] = []
        self._chain: tuple[int, str] | None = None  # (last seq, last digest) once known
        self._dropped_since: str | None = None
        self._dropped_pending = 0
        self._unsure: _Unsure | None = None  # a batch whose write failed but may be stored
        self._stop_by: float | None = None  # when closing: the writer's last retry

    @property
    def sync_timeout(self) -> float:
        """Seconds a ``sync`` call (or a ``stored`` record's writer) waits for its entry."""
        return self._sync_timeout

    @classmethod
    def open(cls, path: str | Path, key: bytes, **options: Any) -> Journal:
        """A started journal on a SQLite file (the embedded default).

        With ``durability="sync"`` the file is opened with ``synchronous=FULL``: a stored
        outcome survives a crash of the machine too, not only of the process.
        """
        from ._sqlite import SqliteJournalStore

        full = options.get("durability") == "sync"
        store = SqliteJournalStore(path, synchronous="FULL" if full else "NORMAL")
        journal = cls(store, key, **options)
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

    def __call__(self, event: RequestEvent) -> Future[None] | None:
        """The observer: queue the event (nothing else happens on the call path).

        Returns:
            ``sync`` durability, a ``settled`` event: a future done once it is stored (the
            handler's ``wait()`` awaits it); otherwise None.
        """
        if self.durability == "sync" and event.type == "settled":
            done: Future[None] = Future()
            self._queue.put(_Held(event, done))
            return done
        self._queue.put(event)
        return None

    @overload
    def record(
        self,
        request_id: str,
        kind: str,
        data: Mapping[str, Any],
        at: datetime | None = None,
        *,
        stored: Literal[False] = False,
    ) -> None: ...

    @overload
    def record(
        self,
        request_id: str,
        kind: str,
        data: Mapping[str, Any],
        at: datetime | None = None,
        *,
        stored: Literal[True],
    ) -> Future[None]: ...

    def record(
        self,
        request_id: str,
        kind: str,
        data: Mapping[str, Any],
        at: datetime | None = None,
        *,
        stored: bool = False,
    ) -> Future[None] | None:
        """Append an entry that is not a request event (e.g. what a board saw); thread-safe.

        ``data`` must be JSON-serialisable (anything else is written as its ``str``).

        Returns:
            With ``stored``, a future done once the entry is in the store, or failed with
            :class:`JournalUnavailableError` when it is not stored within ``sync_timeout``,
            is dropped, or the journal closes first (the entry then stays queued, as a
            ``sync`` call's does); otherwise None.
        """
        when = iso(at or datetime.now(UTC)) or ""
        record = (request_id, when, kind, dict(data))
        if not stored:
            self._queue.put(record)
            return None
        done: Future[None] = Future()
        self._queue.put(_Held(record, done))
        return done

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Block until what was queued before this call has been written (or tried).

        Returns:
            True when nothing is left unwritten. Call it from a thread, not the event loop
            (``await asyncio.to_thread(journal.flush)``).
        """
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout) and not self._records and self._unsure is None

    @property
    def unwritten(self) -> int:
        """About how many entries are queued or buffered and not yet written: what a crash of
        this process would lose now (thread-safe; markers of pending flushes count too)."""
        unsure = self._unsure
        held = 0 if unsure is None else len(unsure.records)
        return self._queue.qsize() + len(self._records) + held

    def close(self, timeout: float | None = 10.0) -> None:
        """Write what is queued, stop the writer and close the store (idempotent; blocks).

        While the store fails, the writer keeps trying for most of ``timeout`` (``None``: until
        it succeeds); what is still unwritten then is logged as an error and counted in
        ``stats.dropped``.
        """
        thread, self._thread = self._thread, None
        if thread is not None:
            if timeout is not None:
                self._stop_by = time.monotonic() + timeout - min(timeout / 5, 1.0)
            self._queue.put(_STOP)
            thread.join(timeout)
        self.store.close()
        if self._checkpoints is not None:
            self._checkpoints.anchor.close()

    # -- the writer thread ---------------------------------------------------------------

    def _run(self) -> None:
        checkpoints = self._checkpoints
        if checkpoints is not None:
            gap = checkpoints.opening(self.store)
            if gap is not None:
                self._records.append(gap)
        stop = False
        while not stop:
            waiting = bool(self._records) or self._unsure is not None
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
                elif isinstance(item, _Held):
                    held = item.event
                    record = held if isinstance(held, tuple) else record_of(held)
                    self._records.append(record)
                    self._waiting.hold(record, item.done)
                else:
                    self._records.append(record_of(item))  # type: ignore[arg-type]
                if len(self._records) >= self._batch * 4:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            self._write_all()
            if self._waiting:
                self._expire()
            for marker in markers:
                marker.set()
        self._drain()

    def _drain(self) -> None:
        """On close: retry what the failing store did not take, until the close's deadline."""
        while self._records or self._unsure is not None:
            if self._stop_by is not None and time.monotonic() + self._retry > self._stop_by:
                break
            time.sleep(self._retry)
            self._write_all()
        left = len(self._records) + (0 if self._unsure is None else len(self._unsure.records))
        if left:
            with self.stats._lock:
                self.stats.dropped += left
            logger.error(
                "journal closed with %d entries not written (or not confirmed): %s",
                left,
                self.stats.last_error,
            )
        self._waiting.fail_all(
            "The answer could not be recorded (the journal closed first), so it was not acted on"
        )
        if self._checkpoints is not None:
            self._checkpoints.closing(self._chain, left)

    def _write_all(self) -> None:
        if self._unsure is not None and not self._settle_unsure():
            self._bound_buffer()
            return
        while self._records:
            batch = self._records[: self._batch]
            written = self._write(batch)
            if written or self._unsure is not None:
                del self._records[: len(batch)]  # written, or held aside until known
            if not written:
                self._bound_buffer()
                return

    def _settle_unsure(self) -> bool:
        """Find out whether the batch whose write failed is stored; False while unknown."""
        unsure = self._unsure
        assert unsure is not None
        try:
            stored = self.store.contains(unsure.entries[-1])
        except Exception as exc:
            self._failed(exc)
            return False
        self._unsure = None
        if stored:  # only the reply was lost
            with self.stats._lock:
                self.stats.unsure += 1
            self._landed(unsure.entries, unsure.gap, unsure.records)
        else:
            self._records[:0] = unsure.records
        return True

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
        """Write one batch; False when it failed (``_unsure`` set when it may be stored)."""
        gap = self._dropped_pending
        linked = records
        if gap:
            data = {"dropped": gap, "since": self._dropped_since, "reason": self.stats.last_error}
            linked = [("", datetime.now(UTC).isoformat(), "gap", data), *records]
        try:
            for attempt in range(_RELINKS + 1):  # another writer may append first: re-link
                if attempt == _RELINKS:
                    raise RuntimeError(f"the chain kept moving ({_RELINKS} re-links in a row)")
                entries = self._linked(linked)
                try:
                    self.store.append(entries)
                except ChainMoved as moved:
                    lost = self._went_back(moved.head)
                    if lost is not None:
                        linked = [lost, *linked]
                    self._chain = moved.head or (0, GENESIS)
                    with self.stats._lock:
                        self.stats.relinked += 1
                except Exception:
                    self._unsure = _Unsure(entries, list(records), gap)
                    raise
                else:
                    break
        except Exception as exc:
            self._failed(exc)
            return False
        self._landed(entries, gap, records)
        return True

    def _went_back(self, head: tuple[int, str] | None) -> Record | None:
        """A ``gap`` record when the store's head is *behind* what this writer knew was
        stored: entries were lost (a failover to a replica that had not received them, or a
        deleted tail); else None. Chains only grow, so this cannot happen otherwise."""
        known = self._chain[0] if self._chain is not None else 0
        now = head[0] if head is not None else 0
        if now >= known:
            return None
        reason = (
            f"the store's chain went back from entry {known} to {now}: entries it held were "
            "lost (a failover to a replica that had not received them, or a deleted tail)"
        )
        logger.error("journal: %s", reason)
        with self.stats._lock:
            self.stats.gaps += 1
        data = {"missing": f"{now + 1}..{known}", "reason": reason}
        return ("", datetime.now(UTC).isoformat(), "gap", data)

    def _landed(self, entries: list[JournalEntry], gap: int, records: list[Record]) -> None:
        """Account for a batch that is in the store (``gap``: the drops its gap entry names;
        ``records``: its records, whose waiting calls may now go on)."""
        if gap:
            self.stats.gaps += 1
            self._dropped_pending -= gap
            if not self._dropped_pending:
                self._dropped_since = None
        self._chain = (entries[-1].seq, entries[-1].digest)
        self.stats.written += len(entries)
        if self._waiting:
            self._waiting.stored(records)
        if self._checkpoints is not None:
            self._checkpoints.stored(self._chain[0], self._chain[1], self.unwritten)

    def _failed(self, exc: Exception) -> None:
        with self.stats._lock:
            self.stats.failures += 1
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
        if self.stats.failures == 1 or self.stats.failures % 100 == 0:
            logger.error("journal write failed (%d so far): %s", self.stats.failures, exc)

    def _bound_buffer(self) -> None:
        # A batch held aside (maybe stored) counts towards the bound but is never dropped.
        held = 0 if self._unsure is None else len(self._unsure.records)
        extra = min(len(self._records), len(self._records) + held - self._max_buffered)
        if extra > 0:
            if self._waiting:
                why = "The answer could not be recorded (the journal dropped it), so it was not "
                why += "acted on"
                self._waiting.failed(self._records[:extra], why)
            del self._records[:extra]
            if self._dropped_since is None:
                self._dropped_since = datetime.now(UTC).isoformat()
            self._dropped_pending += extra
            self.stats.dropped += extra
            logger.error("journal unavailable: %d entries dropped (recorded as a gap)", extra)

    def _expire(self) -> None:
        """``sync``: fail the calls whose outcome was not stored within ``sync_timeout``."""
        why = (
            f"The answer could not be recorded within {self._sync_timeout:g}s, so it was not "
            "acted on (the journal is unavailable)"
        )
        late = self._waiting.expire()
        if late:
            with self.stats._lock:
                self.stats.late += len(late)
            fail(late, why)  # after counting: a failed call sees itself in the stats
