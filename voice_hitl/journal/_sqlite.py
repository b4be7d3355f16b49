"""The embedded journal store: one SQLite file in WAL mode (stdlib ``sqlite3``).

Every method blocks: the :class:`~voice_hitl.journal.Journal` calls them from its writer
thread, and the CLI from a plain process, never from an event loop.

Opened ``read_only`` (what ``voice-hitl journal`` does), the file is opened with SQLite's
``mode=ro``: nothing is created, no schema is added, WAL is not switched on, and a file that
is not a journal (empty, another program's database, not SQLite) is refused by name.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import quote

from ._entry import JournalEntry
from ._errors import ChainMoved, NotAJournalError

__all__ = ["SqliteJournalStore"]

_COLUMNS = ["seq", "request_id", "at", "kind", "data", "prev", "digest"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY,
    request_id TEXT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    prev TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_request ON entries (request_id, seq);
"""


class SqliteJournalStore:
    """Journal entries in one SQLite file.

    Args:
        path: The file (created with its folder when missing, unless ``read_only``).
        read_only: Open it with ``mode=ro``: never create or change anything; a file that is
            not a journal raises :class:`NotAJournalError` on first use.
        synchronous: SQLite's ``synchronous`` setting for a writer: ``NORMAL`` (a committed
            entry survives a crash of the process, not of the machine) or ``FULL`` (each
            commit waits for the disk).
    """

    def __init__(
        self, path: str | Path, *, read_only: bool = False, synchronous: str = "NORMAL"
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
        self.path = Path(path)
        self.read_only = read_only
        self._synchronous = synchronous
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._open_read_only() if self.read_only else self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self._synchronous}")
        db.executescript(_SCHEMA)
        return db

    def _open_read_only(self) -> sqlite3.Connection:
        uri = f"file:{quote(str(self.path.absolute()))}?mode=ro"
        if _wal_at_rest(self.path):
            # A WAL file no process has open: SQLite would create -wal and -shm files to read
            # it. Nothing can be pending in a WAL that is not there, so read the file in place.
            uri += "&immutable=1"
        try:
            db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise NotAJournalError(f"{self.path}: cannot be opened read-only ({exc})") from None
        try:
            columns = [row[1] for row in db.execute("PRAGMA table_info(entries)")]
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
        except sqlite3.DatabaseError as exc:
            db.close()
            raise NotAJournalError(f"{self.path}: not a journal: {exc}") from None
        if columns != _COLUMNS:
            db.close()
            what = "an empty file" if not tables else f"tables {', '.join(sorted(tables)[:5])}"
            raise NotAJournalError(
                f"{self.path}: not a journal (no journal 'entries' table; it holds {what})"
            )
        return db

    def last(self) -> tuple[int, str] | None:
        """The sequence number and digest of the newest entry, if any."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT seq, digest FROM entries ORDER BY seq DESC LIMIT 1")
                .fetchone()
            )
        return None if row is None else (int(row[0]), str(row[1]))

    def append(self, entries: Sequence[JournalEntry]) -> None:
        """Write ``entries`` in one transaction (all or none).

        Raises:
            ChainMoved: The newest stored entry is not the one they link to (another process
                wrote to the file first); nothing was written.
        """
        rows = [
            (
                e.seq,
                e.request_id,
                e.at,
                e.kind,
                json.dumps(dict(e.data), default=str),
                e.prev,
                e.digest,
            )
            for e in entries
        ]
        if not rows:
            return
        first = entries[0]
        expected = None if first.seq == 1 else (first.seq - 1, first.prev)
        with self._lock:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")  # one writer at a time, across processes too
            try:
                row = db.execute(
                    "SELECT seq, digest FROM entries ORDER BY seq DESC LIMIT 1"
                ).fetchone()
                head = None if row is None else (int(row[0]), str(row[1]))
                if head != expected:
                    raise ChainMoved(head)
                db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        """Every entry in sequence order, or one request's."""
        query = "SELECT seq, request_id, at, kind, data, prev, digest FROM entries"
        args: tuple[str, ...] = ()
        if request_id is not None:
            query += " WHERE request_id = ?"
            args = (request_id,)
        with self._lock:
            rows = self._connection().execute(query + " ORDER BY seq", args).fetchall()
        return [
            JournalEntry(int(r[0]), r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows
        ]

    def iterate(self, chunk: int = 2000) -> Iterator[JournalEntry]:
        """Every entry in sequence order, read ``chunk`` at a time (constant memory)."""
        after = 0
        query = (
            "SELECT seq, request_id, at, kind, data, prev, digest FROM entries"
            " WHERE seq > ? ORDER BY seq LIMIT ?"
        )
        while True:
            with self._lock:
                rows = self._connection().execute(query, (after, chunk)).fetchall()
            for r in rows:
                yield JournalEntry(int(r[0]), r[1], r[2], r[3], json.loads(r[4]), r[5], r[6])
            if len(rows) < chunk:
                return
            after = int(rows[-1][0])

    def contains(self, entry: JournalEntry) -> bool:
        """Whether this very entry (its sequence number and digest) is stored."""
        with self._lock:
            row = (
                self._connection()
                .execute("SELECT digest FROM entries WHERE seq = ?", (entry.seq,))
                .fetchone()
            )
        return row is not None and str(row[0]) == entry.digest

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _wal_at_rest(path: Path) -> bool:
    """A WAL-mode SQLite file without a ``-wal`` file beside it (no writer has it open)."""
    try:
        with open(path, "rb") as file:
            header = file.read(20)
    except OSError:
        return False
    wal = header.startswith(b"SQLite format 3\0") and header[18:20] == b"\x02\x02"
    return wal and not Path(f"{path}-wal").exists()
