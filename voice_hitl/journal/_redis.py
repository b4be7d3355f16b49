"""The journal on Redis Streams: one stream that many worker processes append to.

Every process's :class:`~voice_hitl.journal.Journal` appends to the same stream and the same
chain. An append is one Lua script, atomic on the server: it checks that the chain's head (a
separate key holding the last sequence number and digest) is the one the writer linked its
batch to, then adds the entries, indexes them per request and moves the head. When another
process appended first, nothing is written and the script returns the current head; the
writer re-links its batch to it and tries again (:class:`ChainMoved`). So the stream holds one
gap-free chain whatever the number of writers, and ``verify`` also checks the stream's last
entry against the head key, which catches a deleted tail. When the connection drops after
the script ran but before its reply came back, the writer looks the batch up
(:meth:`RedisJournalStore.contains`, through the per-request index) before it writes anything
else, so a lost reply never writes a batch twice.

Keys, under the prefix with a hash tag ``T`` (``voice-hitl:journal`` by default, so the keys
are ``{voice-hitl:journal}:entries`` and so on; a prefix that holds a tag is kept as it is):
``T:entries`` (the stream, one field ``e`` holding the entry's JSON), ``T:head`` and
``T:req:ID`` (the stream ids of one request's entries). Nothing is trimmed: a journal keeps
everything. Every key is in one hash slot, so the store runs on one Redis, a Sentinel-watched
master or a Redis Cluster (URLs: :mod:`voice_hitl._redis_target`).

Every method blocks (the sync ``redis`` client): the journal's writer thread and the CLI call
them, never an event loop. Opened ``read_only`` (``voice-hitl journal``), the store only reads:
``append`` refuses, and a prefix with no journal, or whose keys are not a journal's, raises
:class:`NotAJournalError`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from .._redis_target import close_client, keyspace, sync_client
from ._entry import JournalEntry
from ._errors import ChainMoved, NotAJournalError

__all__ = ["RedisJournalStore"]

DEFAULT_PREFIX = "voice-hitl:journal"

_APPEND = """
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then
    return {0, head}
end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do
    local request_id = ARGV[4 + 2 * i]
    local id = redis.call('XADD', KEYS[1], '*', 'e', ARGV[3 + 2 * i])
    if request_id ~= '' then
        redis.call('RPUSH', ARGV[3 + 2 * n] .. request_id, id)
    end
end
redis.call('SET', KEYS[2], ARGV[4 + 2 * n])
return {1, ARGV[4 + 2 * n]}
"""


def _head_text(head: tuple[int, str] | None) -> str:
    return "" if head is None else f"{head[0]}:{head[1]}"


def _parse_head(text: str | bytes | None) -> tuple[int, str] | None:
    if not text:
        return None
    if isinstance(text, bytes):
        text = text.decode()
    seq, _, digest = text.partition(":")
    return int(seq), digest


def _entry_json(entry: JournalEntry) -> str:
    return json.dumps(entry.to_json(), default=str, separators=(",", ":"))


def _entry_from(raw: bytes | str) -> JournalEntry:
    item = json.loads(raw)
    return JournalEntry(
        int(item["seq"]),
        item["request_id"],
        item["at"],
        item["kind"],
        item["data"],
        item["prev"],
        item["digest"],
    )


class RedisJournalStore:
    """Journal entries in a Redis stream shared by many processes.

    Args:
        url: The Redis server (``redis://host:port/db``, ``redis+cluster://h:p,h:p``,
            ``redis+sentinel://h:p,h:p/service``).
        prefix: The journal's key prefix (one journal per prefix), made a hash tag.
        client: A blocking ``redis.Redis``, ``redis.cluster.RedisCluster`` or Sentinel master
            client (replies as bytes) to use instead of connecting to ``url``.
        read_only: Only read (what ``voice-hitl journal`` opens).
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = DEFAULT_PREFIX,
        client: Any = None,
        read_only: bool = False,
    ) -> None:
        if client is None:
            client = sync_client(url, timeout=5.0)
        self.url = url
        self.prefix = prefix.rstrip(":")
        self.keys = keyspace(self.prefix)
        """The hash-tagged prefix of every key (``{prefix}`` unless the prefix has a tag)."""
        self._client = client
        self._lock = threading.Lock()
        self._append = client.register_script(_APPEND)
        self._stream = f"{self.keys}:entries"
        self._head = f"{self.keys}:head"
        self._requests = f"{self.keys}:req:"
        self.read_only = read_only
        self._checked = False

    @property
    def client(self) -> Any:
        """The ``redis.Redis`` client (the anchor beside the journal shares it)."""
        return self._client

    def check(self) -> None:
        """Raise :class:`NotAJournalError` unless the prefix holds a journal (read-only use)."""
        if self._checked:
            return
        kinds = {key: self._client.type(key) for key in (self._stream, self._head)}
        kinds = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in kinds.items()}
        if kinds[self._stream] == "none" and kinds[self._head] == "none":
            raise NotAJournalError(f"no journal under prefix {self.prefix!r} ({self._stream})")
        for key, want in ((self._stream, "stream"), (self._head, "string")):
            if kinds[key] not in (want, "none"):
                raise NotAJournalError(
                    f"{key} is a Redis {kinds[key]}, not a journal's {want}"
                    f" (prefix {self.prefix!r} is not a journal)"
                )
        self._checked = True

    def last(self) -> tuple[int, str] | None:
        """The chain's head: the newest entry's sequence number and digest."""
        with self._lock:
            return _parse_head(self._client.get(self._head))

    def append(self, entries: Sequence[JournalEntry]) -> None:
        """Append ``entries`` atomically, if the chain's head is still what they link to.

        Raises:
            ChainMoved: Another writer appended first; carries the head to re-link to.
        """
        if self.read_only:
            raise PermissionError(f"journal {self.prefix!r} opened read-only")
        if not entries:
            return
        first, last = entries[0], entries[-1]
        expected = "" if first.seq == 1 else f"{first.seq - 1}:{first.prev}"
        args: list[str] = [expected, str(len(entries))]
        for entry in entries:
            args += [_entry_json(entry), entry.request_id]
        args += [self._requests, f"{last.seq}:{last.digest}"]
        with self._lock:
            written, head = self._append(keys=[self._stream, self._head], args=args)
        if not written:
            raise ChainMoved(_parse_head(head))

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        """Entries in chain order: all of them, or one request's (through its index)."""
        if request_id is not None:
            with self._lock:
                if self.read_only:
                    self.check()
                return self._indexed(request_id)
        return list(self.iterate())

    def iterate(self, chunk: int = 5000) -> Iterator[JournalEntry]:
        """Every entry in chain order, read ``chunk`` at a time (constant memory)."""
        start = "-"
        while True:
            with self._lock:
                if self.read_only:
                    self.check()
                found = self._client.xrange(self._stream, start, "+", count=chunk)
            if start != "-":
                found = found[1:]  # the first is the last of the previous chunk
            if not found:
                return
            for _, fields in found:
                yield _entry_from(fields[b"e"])
            start = found[-1][0]

    def contains(self, entry: JournalEntry) -> bool:
        """Whether this very entry (its sequence number and digest) is stored.

        Looked up through its request's index, or (an entry of no request, such as a gap)
        among the newest entries back to its sequence number.
        """
        with self._lock:
            if entry.request_id:
                candidates = self._indexed(entry.request_id)
            else:
                head = _parse_head(self._client.get(self._head))
                if head is None or head[0] < entry.seq:
                    return False
                newest = self._client.xrevrange(
                    self._stream, "+", "-", count=head[0] - entry.seq + 1
                )
                candidates = [_entry_from(fields[b"e"]) for _, fields in newest[-1:]]
        return any(c.seq == entry.seq and c.digest == entry.digest for c in candidates)

    def _indexed(self, request_id: str) -> list[JournalEntry]:
        """One request's entries through its index (one round trip for the entries)."""
        ids = self._client.lrange(self._requests + request_id, 0, -1)
        if not ids:
            return []
        pipe = self._client.pipeline(transaction=False)
        for stream_id in ids:
            pipe.xrange(self._stream, stream_id, stream_id)
        return [_entry_from(fields[b"e"]) for found in pipe.execute() for _, fields in found]

    def head_problem(self, entries: Sequence[JournalEntry] | tuple[int, str] | None) -> str | None:
        """Why the stream's last entry is not the chain's head (a deleted tail), if it is not.

        ``entries``: what was read, or just its last entry's sequence number and digest.
        """
        head = self.last()
        if entries is None or isinstance(entries, tuple):
            tail = entries
        else:
            tail = (entries[-1].seq, entries[-1].digest) if entries else None
        if head == tail:
            return None
        if head is None:
            return "the chain's head key is missing (deleted?)"
        return (
            f"the chain's head is entry {head[0]} but the stream ends at "
            f"{tail[0] if tail else 'nothing'}: entries after it were deleted"
        )

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            close_client(self._client)
