"""The journal's tail anchor: signed checkpoints kept outside the entries.

The chain shows an edited entry or one deleted in the middle, but not entries deleted from the
end: what is left is still a sound chain, and the head key of a Redis stream can be set back
by anyone who reads the stream. So each writer keeps a **checkpoint** beside the journal,
updated after every batch it stored: the sequence number and digest of the newest entry, how
many entries it had accepted and not yet written, and whether it is running or closed cleanly.
A checkpoint is signed with the chain's key (HMAC-SHA256), so without the key nobody can make
one that claims a shorter journal; ``verify`` finds the newest checkpoint and checks that the
journal still reaches it, and names every writer that never closed (entries it had accepted
may be missing).

Where checkpoints live: a sidecar file (:class:`FileAnchor`, ``<journal>.anchor`` by default,
one signed checkpoint per line, appended; compacted now and then) or a Redis hash
(:class:`RedisAnchor`, ``{prefix}:anchor`` by default, one field per writer). Each writer's
newest checkpoint counts (its highest entry), so a checkpoint copied back into the file
changes nothing; only cutting the anchor itself back (restoring an old copy of the file, or of
a Redis field) rolls it back. So keep it where whoever can write the journal cannot: a file on
another volume or host, another Redis.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

__all__ = [
    "Checkpoint",
    "FileAnchor",
    "JournalAnchor",
    "RedisAnchor",
    "kept",
    "newest",
    "read_checkpoint",
]

_DOMAIN = b"voice-hitl journal anchor\0"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What one writer last signed about the journal."""

    writer: str
    """The writing process: ``host:pid:random``."""
    seq: int
    """The newest entry's sequence number when it was signed (0: empty journal)."""
    digest: str
    """That entry's digest."""
    state: Literal["open", "closed"]
    """``closed`` once the writer closed cleanly; ``open`` while it runs (or if it died)."""
    unwritten: int
    """Entries the writer had accepted and not yet stored (or dropped) when it signed."""
    at: str
    """When it was signed (ISO 8601 UTC)."""

    def signed(self, key: bytes) -> str:
        """The checkpoint as JSON text with its signature."""
        body = asdict(self)
        return json.dumps({**body, "sig": _sign(key, body)}, sort_keys=True)


def _sign(key: bytes, body: Mapping[str, Any]) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, _DOMAIN + text, hashlib.sha256).hexdigest()


def read_checkpoint(text: str, key: bytes) -> Checkpoint | None:
    """The checkpoint in ``text`` if its signature holds under ``key``; else None.

    Raises:
        ValueError: ``text`` is not a checkpoint at all.
    """
    try:
        item = json.loads(text)
        sig = item.pop("sig")
        point = Checkpoint(**item)
    except (TypeError, KeyError, AttributeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a journal checkpoint ({exc})") from None
    if not isinstance(sig, str) or not hmac.compare_digest(sig, _sign(key, item)):
        return None
    return point


def newest(points: list[Checkpoint]) -> dict[str, Checkpoint]:
    """Each writer's newest checkpoint: its ``closed`` one, else the one at its highest entry
    (an older checkpoint put back in the anchor changes nothing)."""
    chosen: dict[str, Checkpoint] = {}
    for point in points:
        held = chosen.get(point.writer)
        if held is None or (point.state == "closed", point.seq) > (
            held.state == "closed",
            held.seq,
        ):
            chosen[point.writer] = point
    return chosen


def kept(points: list[Checkpoint]) -> list[Checkpoint]:
    """What a compacted anchor keeps: the newest checkpoint overall, and each open writer's."""
    latest = newest(points)
    top = max(latest.values(), key=lambda p: p.seq, default=None)
    return [p for p in latest.values() if p is top or p.state == "open"]


class JournalAnchor(Protocol):
    """Where a journal's checkpoints are kept (blocking calls, from the writer thread)."""

    where: str
    """How to name it in messages."""

    def save(self, writer: str, text: str) -> None:
        """Add ``text``, ``writer``'s newest checkpoint."""

    def load(self) -> list[str]:
        """Every checkpoint text it holds (empty when there is no anchor)."""

    def crowded(self) -> bool:
        """Whether it holds enough old checkpoints to be worth compacting."""

    def rewrite(self, texts: list[str]) -> None:
        """Keep only ``texts`` (the writer chose them with the key: see :func:`kept`)."""

    def close(self) -> None:
        """Release it."""


class FileAnchor:
    """Checkpoints in a sidecar file: one signed checkpoint per line, appended.

    An append is one ``write`` to a file opened with ``O_APPEND`` (tens of microseconds);
    writers in several processes share it under a shared ``flock`` of ``<path>.lock``, and
    the file is compacted (rewritten and renamed over, under the exclusive lock) once it
    passes ``compact_at`` bytes and when a writer closes.

    Args:
        path: The file (``<journal>.anchor`` by default).
        read_only: Never write (what ``voice-hitl journal verify`` opens).
        compact_at: The size in bytes past which a writer compacts it.
    """

    def __init__(
        self, path: str | Path, *, read_only: bool = False, compact_at: int = 1 << 20
    ) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self._read_only = read_only
        self._compact_at = compact_at
        self._fd: int | None = None
        self._lock: int | None = None
        self._size = 0

    def load(self) -> list[str]:
        """Every checkpoint line; empty when the file is missing."""
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{self.path}: not a journal anchor ({exc})") from None
        return [line for line in text.splitlines() if line.strip()]

    def _locked(self, how: int) -> int:
        if self._read_only:
            raise PermissionError(f"{self.path}: opened read-only")
        if self._lock is None:
            self._lock = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock, how)
        return self._lock

    def save(self, writer: str, text: str) -> None:
        """Append ``text`` (one line)."""
        lock = self._locked(fcntl.LOCK_SH)
        try:
            fd = self._fd
            if fd is not None:
                try:
                    moved = os.stat(self.path).st_ino != os.fstat(fd).st_ino
                except FileNotFoundError:
                    moved = True
                if moved:  # another writer compacted it (renamed a new file over it)
                    os.close(fd)
                    fd = self._fd = None
            if fd is None:
                fd = self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(fd, text.encode() + b"\n")
            self._size = os.fstat(fd).st_size
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def crowded(self) -> bool:
        """Past ``compact_at`` bytes (as of this process's last append)."""
        return self._size > self._compact_at

    def rewrite(self, texts: list[str]) -> None:
        """Replace the file with ``texts`` (atomically: a temporary file renamed over it)."""
        lock = self._locked(fcntl.LOCK_EX)
        try:
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text("".join(f"{t}\n" for t in texts))
            os.replace(temporary, self.path)
            self._size = 0
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close its files (idempotent)."""
        for fd in (self._fd, self._lock):
            if fd is not None:
                os.close(fd)
        self._fd = self._lock = None


class RedisAnchor:
    """Checkpoints in a Redis hash (writer -> its newest signed checkpoint).

    Args:
        client: A sync ``redis.Redis``.
        key: The hash (``{prefix}:anchor`` beside a Redis journal).
        read_only: Never write.
    """

    def __init__(self, client: Any, key: str, *, read_only: bool = False) -> None:
        self._client = client
        self._key = key
        self._read_only = read_only
        self.where = f"Redis key {key}"

    def load(self) -> list[str]:
        """Every writer's checkpoint."""
        return [_text(t) for t in self._client.hgetall(self._key).values()]

    def save(self, writer: str, text: str) -> None:
        """Replace ``writer``'s checkpoint."""
        if self._read_only:
            raise PermissionError(f"{self.where}: opened read-only")
        self._client.hset(self._key, writer, text)

    def crowded(self) -> bool:
        """One field per writer: only a close compacts it."""
        return False

    def rewrite(self, texts: list[str]) -> None:
        """Drop the writers whose checkpoint is not among ``texts``."""
        if self._read_only:
            raise PermissionError(f"{self.where}: opened read-only")
        keep = {json.loads(t)["writer"] for t in texts}
        stale = [w for w in map(_text, self._client.hkeys(self._key)) if w not in keep]
        if stale:
            self._client.hdel(self._key, *stale)

    def close(self) -> None:
        """The client belongs to whoever passed it."""


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
