""":class:`RedisBoard`: the request board on a Redis server, for many workers (extra ``redis``).

Every step that must be atomic (publish, settle, reap) is one Lua script
(:mod:`voice_hitl.board._redis_lua`), so the first settle wins on the server whatever the
number of processes. The board has an *epoch* (a random id under ``P epoch``): a client that
(re)subscribes and finds another epoch than the one it saw, or misses an id on a board with no
epoch, marks the board's state as lost (:meth:`RedisBoard.lost_state`), so a restart without
persistence is told apart from "no such request". The client does not retry behind the
caller's back: a dropped connection, and every error reply (READONLY after a failover, OOM,
LOADING, BUSY, MOVED/ASK, CLUSTERDOWN, a script error), surfaces as
:class:`BoardUnavailableError` naming the reply, and the worker bridge reconnects and
re-publishes.

The same board runs on one server, on a Redis Cluster and on a Sentinel-watched master (URLs:
:mod:`voice_hitl._redis_target`); every key carries one hash tag chosen from the prefix. With
``min_replicas`` the steps an answer's truth rests on (take, settle, restore) and
:meth:`RedisBoard.confirm` wait (``WAIT``) until that many replicas hold them, else raise
:class:`BoardOutcomeUnknownError`.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, TypeVar

from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .._redis_target import aclose_client, async_client, async_replicas, keyspace
from ._model import (
    BoardClaim,
    BoardClaimed,
    BoardEscalated,
    BoardEvent,
    BoardOpened,
    BoardOutcomeUnknownError,
    BoardRequest,
    BoardSettled,
    BoardStatus,
    BoardUnavailableError,
    ClaimResult,
    SettleResult,
)
from ._redis_lua import CLAIM, EPOCH, ESCALATE, PUBLISH, REAP, RELEASE, RESTORE, SETTLE, TAKE
from ._shared_read import SharedRead
from ._tasks import check_cancelled

__all__ = ["RedisBoard"]

logger = logging.getLogger("voice_hitl.board")

_DOWN = (RedisError, OSError)
_READ_ATTEMPTS = 3
T = TypeVar("T")
_RESTORE_BATCH = 500


def _request(fields: Sequence[Any] | Mapping[Any, Any]) -> BoardRequest:
    """A request from its hash (a flat list of names and values, or a dict)."""
    if not isinstance(fields, Mapping):
        fields = {_text(fields[i]): _text(fields[i + 1]) for i in range(0, len(fields) - 1, 2)}
    request = BoardRequest.from_static_json(fields["data"])
    if fields.get("claim"):
        claim = BoardClaim(
            fields["claim"],
            BoardStatus(fields.get("claim_status", "answered")),
            fields.get("claim_text", ""),
            fields.get("claim_by") or None,
            fields.get("claim_via") or None,
            float(fields.get("claim_until") or 0.0),
            fields.get("claim_taken") == "1",
        )
        request = replace(request, claim=claim)
    status = BoardStatus(fields.get("status", "open"))
    if status is BoardStatus.OPEN:
        return request
    return request.settled(
        status,
        fields.get("text", ""),
        float(fields.get("at") or 0.0),
        fields.get("by") or None,
        fields.get("via") or None,
        fields.get("detail", ""),
    )


def _unavailable(exc: BaseException) -> BoardUnavailableError:
    """The error for a command that could not run; a full pool is named as such (Redis is
    up, every connection of this board was busy for the whole timeout), and an error reply
    by its kind (READONLY, OOM, MOVED, ...: Redis answered, but cannot do it now)."""
    if "No connection available" in str(exc):
        return BoardUnavailableError(
            "the board is busy: no Redis connection came free in time (raise max_connections)"
        )
    if isinstance(exc, OSError) or type(exc).__name__ in _UNREACHABLE:
        return BoardUnavailableError(f"Redis is unreachable: {exc}")
    return BoardUnavailableError(f"Redis refused the command ({type(exc).__name__}: {exc})")


_UNREACHABLE = {"ConnectionError", "TimeoutError", "MasterNotFoundError", "MaxConnectionsError"}


def _slow(exc: BaseException) -> bool:
    """A timeout, or no pooled connection free in time: the server may be fine (this process
    was busy); as opposed to a refused or dropped connection."""
    return isinstance(exc, RedisTimeoutError) or "No connection available" in str(exc)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _restore_args(request: BoardRequest, retention: str) -> list[str]:
    """The RESTORE script's arguments after the prefix, for one settled record."""
    claim = request.claim
    claim_fields = (
        ["", "", "", "", "", "", ""]
        if claim is None
        else [
            claim.token,
            str(claim.status),
            claim.text,
            claim.by or "",
            claim.via or "",
            f"{claim.until:.6f}",
            "1" if claim.taken else "0",
        ]
    )
    return [
        request.id,
        request.static_json(),
        request.worker,
        str(request.status),
        request.text,
        request.detail,
        f"{request.settled_at or 0.0:.6f}",
        request.settled_by or "",
        request.settled_via or "",
        retention,
        *claim_fields,
    ]


class RedisBoard:
    """A :class:`~voice_hitl.board.RequestBoard` on a Redis server (5.0 or later).

    Args:
        url: The server, e.g. ``redis://127.0.0.1:6379/0``, ``redis+cluster://h1:7000,h2:7001``
            or ``redis+sentinel://h1:26379,h2:26379/mymaster`` (:mod:`voice_hitl._redis_target`).
        client: A ``redis.asyncio`` client to use instead of ``url`` (a ``Redis``, a
            ``RedisCluster``, or a ``Sentinel(...).master_for(...)``), created with
            ``decode_responses=True``; its owner closes it.
        prefix: The key prefix of this board; every key and channel carries it as a hash tag
            (``voice-hitl:`` becomes ``{voice-hitl:}``; a prefix with a tag is kept).
        retention: Seconds a settled request stays readable.
        timeout: Seconds a single command may take before the board counts as unavailable;
            also how long a command waits for a free connection.
        max_connections: Connections this board opens at most (subscriptions included);
            further commands wait for one to come free, up to ``timeout``, instead of failing
            (redis-py's default pool refuses the 101st command in flight).
        min_replicas: Replicas that must hold a take, a settle or a restore before it counts
            (``WAIT``); 0 (the default, right for a single server) waits for none.
        replica_timeout: Seconds such a step waits for its replicas before it raises
            :class:`BoardOutcomeUnknownError`.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        client: Any = None,
        prefix: str = "voice-hitl:",
        retention: float = 3600.0,
        timeout: float = 5.0,
        max_connections: int = 64,
        min_replicas: int = 0,
        replica_timeout: float = 1.0,
    ) -> None:
        if min_replicas < 0:
            raise ValueError(f"min_replicas must be 0 or more, got {min_replicas!r}")
        self.prefix = prefix
        self.keys = keyspace(prefix)
        """The hash-tagged prefix every key and channel starts with."""
        self.min_replicas = min_replicas
        self._replica_timeout = replica_timeout
        self._route = [f"{self.keys}epoch"]  # KEYS[1]: routes a script to the board's slot
        self._retention_seconds = max(1, int(retention))
        self._retention = str(self._retention_seconds)
        self._epoch: str | None = None  # the board's epoch as this client last saw it
        self._cache: dict[str, BoardRequest] = {}
        self._cache_size = 20_000
        self._owns_client = client is None
        self._redis: Any = (
            async_client(url, timeout=timeout, max_connections=max_connections)
            if client is None
            else client
        )
        self._publish = self._redis.register_script(PUBLISH)
        self._settle = self._redis.register_script(SETTLE)
        self._reap = self._redis.register_script(REAP)
        self._claim = self._redis.register_script(CLAIM)
        self._take = self._redis.register_script(TAKE)
        self._release = self._redis.register_script(RELEASE)
        self._restore = self._redis.register_script(RESTORE)
        self._escalate = self._redis.register_script(ESCALATE)
        self._epoch_script = self._redis.register_script(EPOCH)
        self._listing = SharedRead(self._list_open)

    async def _call(self, script: Any, *args: Any) -> Any:
        """Run a script; again (up to :data:`_READ_ATTEMPTS` times) only when no pooled
        connection came free in time, since then nothing was sent."""
        attempt = 1
        while True:
            try:
                return await script(keys=self._route, args=[self.keys, *args])
            except _DOWN as exc:
                if attempt == _READ_ATTEMPTS or "No connection available" not in str(exc):
                    raise _unavailable(exc) from exc
                check_cancelled()
            attempt += 1

    async def _written(self, script: Any, *args: Any) -> Any:
        """:meth:`_call`, then :meth:`confirm` (the step must be on ``min_replicas``)."""
        reply = await self._call(script, *args)
        await self.confirm()
        return reply

    async def confirm(self) -> None:
        """See :meth:`RequestBoard.confirm`: ``WAIT`` for ``min_replicas`` (none: returns).

        Raises:
            BoardOutcomeUnknownError: Fewer replicas acknowledged within ``replica_timeout``.
            BoardUnavailableError: Redis cannot be reached, or refused.

        Cancellation: safe.
        """
        if not self.min_replicas:
            return
        try:
            acked = await async_replicas(
                self._redis, f"{self.keys}sync", self.min_replicas, self._replica_timeout
            )
        except _DOWN as exc:
            raise _unavailable(exc) from exc
        if acked < self.min_replicas:
            raise BoardOutcomeUnknownError(
                f"only {acked} of {self.min_replicas} replicas acknowledged within "
                f"{self._replica_timeout:g}s: a failover now could lose this step"
            )

    async def publish(self, request: BoardRequest, *, revive: bool = False) -> BoardRequest:
        """See :meth:`RequestBoard.publish`.

        Cancellation: the request may or may not be on the board; publishing again is safe.
        """
        reply = await self._call(
            self._publish, request.id, request.static_json(), request.worker, "1" if revive else "0"
        )
        return _request(reply[1:])

    async def publish_many(
        self, requests: Sequence[BoardRequest], *, revive: bool = False
    ) -> list[BoardRequest]:
        """See :meth:`RequestBoard.publish_many`: one pipelined round trip.

        Cancellation: some may be on the board; publishing again is safe.
        """
        flag = "1" if revive else "0"
        try:
            sha = await self._redis.script_load(PUBLISH)  # a restarted server forgot it
            pipe = self._redis.pipeline(transaction=False)
            for r in requests:
                pipe.evalsha(sha, 1, *self._route, self.keys, r.id, r.static_json(), r.worker, flag)
            replies = await pipe.execute()
        except _DOWN as exc:
            raise _unavailable(exc) from exc
        return [_request(reply[1:]) for reply in replies]

    async def settle(
        self,
        request_id: str,
        status: BoardStatus,
        text: str = "",
        *,
        by: str | None = None,
        via: str | None = None,
        detail: str = "",
        worker: str | None = None,
    ) -> SettleResult:
        """See :meth:`RequestBoard.settle`.

        Cancellation: the settle may or may not have happened; :meth:`get` tells.
        """
        if status is BoardStatus.OPEN:
            raise ValueError("cannot settle a request as 'open'")
        reply = await self._written(
            self._settle,
            request_id,
            str(status),
            text,
            by or "",
            via or "",
            detail,
            worker or "",
            self._retention,
        )
        if reply[0] == "missing":
            return SettleResult(False, None)
        return SettleResult(reply[0] == "won", _request(reply[1:]))

    async def claim(
        self,
        request_id: str,
        status: BoardStatus,
        text: str,
        *,
        token: str,
        window: float,
        by: str | None = None,
        via: str | None = None,
    ) -> ClaimResult:
        """See :meth:`RequestBoard.claim`.

        Cancellation: the claim may or may not be on the board; claiming again with the same
        token is safe.
        """
        if status not in (BoardStatus.ANSWERED, BoardStatus.REJECTED):
            raise ValueError("a claim answers or rejects")
        reply = await self._call(
            self._claim,
            request_id,
            str(status),
            text,
            by or "",
            via or "",
            token,
            f"{max(window, 0.001):.6f}",
            self._retention,
        )
        if reply[0] == "missing":
            return ClaimResult("missing", None)
        return ClaimResult(reply[0], _request(reply[1:]))

    async def take(self, request_id: str, token: str, worker: str) -> bool:
        """See :meth:`RequestBoard.take`.

        Cancellation: the claim may or may not be taken; :meth:`get` tells.
        """
        return bool(await self._written(self._take, request_id, token, worker))

    async def release(self, request_id: str, token: str) -> BoardRequest | None:
        """See :meth:`RequestBoard.release`.

        Cancellation: the claim may or may not be released; :meth:`get` tells.
        """
        reply = await self._call(self._release, request_id, token, self._retention)
        return None if reply[0] == "missing" else _request(reply[1:])

    async def restore(self, requests: Sequence[BoardRequest]) -> int:
        """See :meth:`RequestBoard.restore`: pipelined, :data:`_RESTORE_BATCH` records per
        round trip (10,000 records one by one kept answers waiting for seconds).

        Cancellation: some records may be back; restoring again is safe.
        """
        if any(request.is_open for request in requests):
            raise ValueError("only a settled record can be restored")
        restored = 0
        for start in range(0, len(requests), _RESTORE_BATCH):
            try:
                sha = await self._redis.script_load(RESTORE)  # a restarted server forgot it
                pipe = self._redis.pipeline(transaction=False)
                for request in requests[start : start + _RESTORE_BATCH]:
                    args = _restore_args(request, self._retention)
                    pipe.evalsha(sha, 1, *self._route, self.keys, *args)
                replies = await pipe.execute()
            except _DOWN as exc:
                raise _unavailable(exc) from exc
            restored += sum(1 for reply in replies if reply)
        await self.confirm()
        return restored

    async def lost_state(self) -> float | None:
        """See :meth:`RequestBoard.lost_state` (asked because an id is missing: a board with
        no epoch at all then counts as one that lost its state). Cancellation: safe."""
        return await self._check_epoch(missing=True)

    async def _check_epoch(self, *, missing: bool) -> float | None:
        """Read (or create) the board's epoch, marking a loss this client can tell
        (:data:`~voice_hitl.board._redis_lua.EPOCH`); the loss's age as :meth:`lost_state`."""
        epoch, age = await self._call(
            self._epoch_script, self._epoch or "", secrets.token_hex(8), "1" if missing else "0"
        )
        self._epoch = epoch
        if not age or float(age) >= self._retention_seconds:
            return None
        return float(age)

    async def get(self, request_id: str) -> BoardRequest | None:
        """See :meth:`RequestBoard.get` (a read: retried, see :meth:`_read`).

        Cancellation: safe.
        """
        key = f"{self.keys}req:{request_id}"
        fields = await self._read(lambda: self._redis.hgetall(key))
        return _request(fields) if fields else None

    async def open_requests(self) -> list[BoardRequest]:
        """See :meth:`RequestBoard.open_requests`: callers at the same time share one read
        (:class:`~voice_hitl.board._shared_read.SharedRead`), retried as :meth:`_read` says.

        Cancellation: safe.
        """
        return list(await self._listing())

    async def _list_open(self) -> list[BoardRequest]:
        key = f"{self.keys}open"
        values = await self._read(lambda: self._redis.hvals(key))
        requests = [self._parsed(_text(value)) for value in values]
        requests.sort(key=lambda r: r.created_at)
        return requests

    async def _read(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run an idempotent read, again after a timeout, up to :data:`_READ_ATTEMPTS` times.

        A read that timed out usually met a reply that was there but not yet read: this
        process's own event loop was busy (a loaded machine), or every pooled connection
        was. Reading again is safe and usually quick; a server that refuses connections
        fails at once.

        Raises:
            BoardUnavailableError: Refused, dropped, or timed out every time.
        """
        attempt = 1
        while True:
            try:
                return await command()
            except _DOWN as exc:
                if attempt == _READ_ATTEMPTS or not _slow(exc):
                    raise _unavailable(exc) from exc
                check_cancelled()
            attempt += 1

    def _parsed(self, data: str) -> BoardRequest:
        """An open request from its JSON, parsed once: a listing of 2,000 open requests
        re-parsed them all on every call (the operator service's main cost under load)."""
        request = self._cache.get(data)
        if request is None:
            request = self._cache[data] = BoardRequest.from_static_json(data)
            if len(self._cache) > self._cache_size:
                del self._cache[next(iter(self._cache))]
        return request

    async def escalate(self, request_id: str, escalation: Mapping[str, Any]) -> bool:
        """See :meth:`RequestBoard.escalate`.

        Cancellation: the event may or may not have gone out.
        """
        note = json.dumps(dict(escalation), default=str, ensure_ascii=False)
        return bool(await self._call(self._escalate, request_id, note))

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        """See :meth:`RequestBoard.heartbeat`. Cancellation: safe."""
        try:
            before = await self._redis.set(
                f"{self.keys}hb:{worker}", "1", px=max(1, int(ttl * 1000)), get=True
            )
        except _DOWN as exc:
            raise _unavailable(exc) from exc
        return before is None

    async def reap(self) -> list[BoardRequest]:
        """See :meth:`RequestBoard.reap`.

        Cancellation: the reap may be partial; reaping again finishes it.
        """
        ids = await self._call(self._reap, self._retention)
        reaped = []
        for request_id in ids:
            request = await self.get(request_id)
            if request is not None:
                reaped.append(request)
        return reaped

    @asynccontextmanager
    async def subscribe(
        self, worker: str | None = None
    ) -> AsyncIterator[AsyncIterator[BoardEvent]]:
        """See :meth:`RequestBoard.subscribe`.

        Raises:
            BoardUnavailableError: On entering, or while iterating, when Redis is unreachable.
        """
        channel = f"{self.keys}events" if worker is None else f"{self.keys}events:{worker}"
        # Any: redis-py typed PubSub.aclose only from 8.2 on; this reads the same on both.
        pubsub: Any = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            try:
                await pubsub.subscribe(channel)
            except _DOWN as exc:
                raise _unavailable(exc) from exc
            # Whoever (re)subscribes first after a restart without persistence marks the
            # board's state as lost, so the service tells "being rebuilt" from "no such id".
            await self._check_epoch(missing=False)
            yield self._events(pubsub)
        finally:
            await pubsub.aclose()

    async def _events(self, pubsub: Any) -> AsyncIterator[BoardEvent]:
        while True:
            try:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=None)
            except _DOWN as exc:
                raise BoardUnavailableError(f"Redis subscription lost: {exc}") from exc
            if message is None or message.get("type") != "message":
                continue
            try:
                fields = json.loads(message["data"])
                kind = fields.pop("type", "")
                escalation = fields.pop("escalation", None)
                request = _request(fields)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                # Somebody else's message on the board's channel: named, and skipped.
                logger.warning("not a board event on %s: %s", message.get("channel"), exc)
                continue
            if kind == "opened":
                yield BoardOpened(request)
            elif kind == "claimed":
                yield BoardClaimed(request)
            elif kind == "escalated":
                yield BoardEscalated(request, json.loads(escalation or "{}"))
            else:
                yield BoardSettled(request)

    async def aclose(self) -> None:
        """Close the connection pool it opened (idempotent; a ``client`` passed in belongs to
        its owner). Cancellation: safe."""
        if self._owns_client:
            await aclose_client(self._redis)
