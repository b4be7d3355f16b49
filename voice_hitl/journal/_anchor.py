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
one JSON object, replaced atomically under a lock file) or a Redis hash (:class:`RedisAnchor`,
``{prefix}:anchor`` by default). Keep it where whoever can write the journal cannot: a file on
another volume or host, another Redis. An anchor in the same store as the journal stops the
tail from being cut and the head set back, but not someone who saved an old checkpoint and
puts it back (a rollback of the anchor itself).
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

__all__ = ["Checkpoint", "FileAnchor", "JournalAnchor", "RedisAnchor", "read_checkpoint"]

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


def _seq_state(text: str) -> tuple[int, str]:
    """A checkpoint's sequence number and state, unverified (for pruning only)."""
    try:
        item = json.loads(text)
        return int(item["seq"]), str(item["state"])
    except (TypeError, KeyError, ValueError):
        return -1, "closed"


def _pruned(records: dict[str, str]) -> dict[str, str]:
    """Keep the newest checkpoint and every open writer's; drop other closed writers'."""
    if not records:
        return records
    newest = max(records, key=lambda w: _seq_state(records[w])[0])
    return {
        w: text for w, text in records.items() if w == newest or _seq_state(text)[1] == "open"
    }


class JournalAnchor(Protocol):
    """Where a journal's checkpoints are kept (blocking calls, from the writer thread)."""

    where: str
    """How to name it in messages."""

    def save(self, writer: str, text: str) -> None:
        """Keep ``text`` as ``writer``'s checkpoint (replacing its previous one)."""

    def load(self) -> dict[str, str]:
        """Every writer's checkpoint text (empty when there is no anchor)."""

    def exists(self) -> bool:
        """Whether the anchor has been written at all."""

    def close(self) -> None:
        """Release it."""


class FileAnchor:
    """Checkpoints in a sidecar file (JSON: writer -> signed checkpoint).

    Args:
        path: The file (``<journal>.anchor`` by default); ``<path>.lock`` serialises writers.
        read_only: Never write (what ``voice-hitl journal verify`` opens).
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self._read_only = read_only

    def exists(self) -> bool:
        """Whether the file is there."""
        return self.path.exists()

    def load(self) -> dict[str, str]:
        """Every writer's checkpoint; empty when the file is missing.

        Raises:
            ValueError: The file is not an anchor.
        """
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        try:
            records = json.loads(text)
            if not isinstance(records, dict) or not all(
                isinstance(v, str) for v in records.values()
            ):
                raise ValueError("not an object of checkpoints")
        except ValueError as exc:
            raise ValueError(f"{self.path}: not a journal anchor ({exc})") from None
        return records

    def save(self, writer: str, text: str) -> None:
        """Replace ``writer``'s checkpoint (atomically: a temporary file renamed over it)."""
        if self._read_only:
            raise PermissionError(f"{self.path}: opened read-only")
        with open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                records = self.load()
            except ValueError:
                records = {}  # an unreadable anchor is replaced; verify reports the gap
            records[writer] = text
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(_pruned(records), indent=0, sort_keys=True))
            os.replace(temporary, self.path)

    def close(self) -> None:
        """Nothing to release (each save opens and closes the file)."""


class RedisAnchor:
    """Checkpoints in a Redis hash (writer -> signed checkpoint).

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

    def exists(self) -> bool:
        """Whether the hash is there."""
        return bool(self._client.exists(self._key))

    def load(self) -> dict[str, str]:
        """Every writer's checkpoint."""
        raw = self._client.hgetall(self._key)
        return {_text(w): _text(t) for w, t in raw.items()}

    def save(self, writer: str, text: str) -> None:
        """Replace ``writer``'s checkpoint; on a close, drop closed writers' older ones."""
        if self._read_only:
            raise PermissionError(f"{self.where}: opened read-only")
        self._client.hset(self._key, writer, text)
        if _seq_state(text)[1] == "closed":
            records = self.load()
            stale = set(records) - set(_pruned(records))
            if stale:
                self._client.hdel(self._key, *stale)

    def close(self) -> None:
        """The client belongs to whoever passed it."""


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
