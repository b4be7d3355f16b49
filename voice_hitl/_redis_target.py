"""Where a board or a journal finds Redis: one server, a Cluster, or a Sentinel-watched master.

URLs (one parser for the board, the journal and ``voice-hitl serve``):

- ``redis://[user:password@]host:port[/db]``, ``rediss://...`` (TLS), ``unix://path``: one
  server (or a proxy in front of one), as redis-py reads them;
- ``redis+cluster://[user:password@]host:port[,host:port...]`` (``rediss+cluster://``): a Redis
  Cluster, any of its nodes as seeds;
- ``redis+sentinel://[user:password@]host:port[,host:port...]/service[/db]``
  (``rediss+sentinel://``): the master Sentinel names ``service``, found again after every
  failover. The sentinels' port defaults to 26379; the password is the master's.

Keys: every key of one board (or one journal) carries one hash tag, chosen here from the
prefix (:func:`keyspace`), so each Lua script's keys are in one slot of a cluster. A prefix
that already holds a tag (``{vh}:``) is used as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

__all__ = [
    "RedisTarget",
    "aclose_client",
    "async_client",
    "close_client",
    "async_replicas",
    "is_cluster",
    "keyspace",
    "parse_target",
    "sync_client",
]

_TAG = re.compile(r"\{[^{}]+\}")
_KINDS = {
    "redis": ("single", False),
    "rediss": ("single", True),
    "unix": ("single", False),
    "redis+cluster": ("cluster", False),
    "rediss+cluster": ("cluster", True),
    "redis+sentinel": ("sentinel", False),
    "rediss+sentinel": ("sentinel", True),
}


def keyspace(prefix: str) -> str:
    """``prefix`` with a hash tag: as it is when it holds one (``{vh}:``), else the whole
    prefix becomes the tag (``voice-hitl:`` → ``{voice-hitl:}``)."""
    if not prefix:
        raise ValueError("the key prefix must not be empty")
    return prefix if _TAG.search(prefix) else "{" + prefix + "}"


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """A parsed Redis URL (see the module docstring)."""

    kind: Literal["single", "cluster", "sentinel"]
    url: str
    nodes: tuple[tuple[str, int], ...] = ()
    service: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False


def parse_target(url: str) -> RedisTarget:
    """Read a Redis URL.

    Raises:
        ValueError: Not one of the forms of the module docstring (the message says which part).
    """
    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in _KINDS:
        raise ValueError(
            f"{url!r} is not a Redis URL: it must start with one of "
            + ", ".join(f"{k}://" for k in _KINDS)
        )
    kind, tls = _KINDS[scheme.lower()]
    if kind == "single":
        from redis.connection import parse_url

        parse_url(url)  # type: ignore[no-untyped-call]  # raises ValueError naming the problem
        return RedisTarget("single", url, tls=tls)
    parts = urlsplit(url)
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username, _, password = userinfo.partition(":")
    default_port = 26379 if kind == "sentinel" else 6379
    nodes = tuple(_node(item, default_port, url) for item in hosts.split(","))
    path = [p for p in parts.path.split("/") if p]
    service, db = "", 0
    if kind == "sentinel":
        if not path or len(path) > 2:
            raise ValueError(f"{url!r}: a Sentinel URL ends in /service_name or /service_name/db")
        service = unquote(path[0])
        if len(path) == 2:
            db = _number(path[1], "database", url)
    elif path:
        raise ValueError(f"{url!r}: a Cluster URL has no path (a cluster has database 0 only)")
    return RedisTarget(
        kind,  # type: ignore[arg-type]
        url,
        nodes,
        service,
        db,
        unquote(username) or None,
        unquote(password) or None,
        tls,
    )


def _node(item: str, default_port: int, url: str) -> tuple[str, int]:
    host, colon, port = item.strip().rpartition(":")
    if not colon:
        host, port = item.strip(), str(default_port)
    if not host:
        raise ValueError(f"{url!r}: {item!r} is not host:port")
    return host.strip("[]"), _number(port, "port", url)


def _number(text: str, what: str, url: str) -> int:
    if not text.isdigit():
        raise ValueError(f"{url!r}: {what} {text!r} is not a number")
    return int(text)


def is_cluster(client: Any) -> bool:
    """Whether ``client`` is a redis-py Cluster client (sync or asyncio)."""
    from redis.asyncio.cluster import RedisCluster as AsyncCluster
    from redis.cluster import RedisCluster

    return isinstance(client, AsyncCluster | RedisCluster)


def async_client(url: str, *, timeout: float, max_connections: int) -> Any:
    """An asyncio client for ``url`` that replies in ``str``, never retries behind the
    caller's back, and waits up to ``timeout`` for a connection or a reply.

    Raises:
        ValueError: ``url`` is not a Redis URL.
    """
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    target = parse_target(url)
    common: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
    }
    if target.kind == "single":
        import redis.asyncio as aioredis

        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            **common,
        )
        return aioredis.Redis.from_pool(pool)
    auth: dict[str, Any] = {
        "username": target.username,
        "password": target.password,
        "ssl": target.tls,
    }
    if target.kind == "cluster":
        from redis.asyncio.cluster import ClusterNode, RedisCluster

        return RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in target.nodes],
            max_connections=max_connections,
            **auth,
            **common,
        )
    from redis.asyncio.sentinel import Sentinel

    sentinel = Sentinel(
        list(target.nodes),
        sentinel_kwargs={"socket_timeout": timeout, "socket_connect_timeout": timeout},
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
    )
    return sentinel.master_for(
        target.service,
        db=target.db,
        max_connections=max_connections,
        retry=Retry(NoBackoff(), 0),
        **auth,
        **common,
    )


def sync_client(url: str, *, timeout: float = 5.0) -> Any:
    """A blocking client for ``url`` (bytes replies), for the journal's writer thread.

    Raises:
        ValueError: ``url`` is not a Redis URL.
    """
    import redis

    target = parse_target(url)
    connect = min(timeout, 2.0)
    if target.kind == "single":
        return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=connect)
    auth: dict[str, Any] = {
        "username": target.username,
        "password": target.password,
        "ssl": target.tls,
    }
    common: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": connect}
    if target.kind == "cluster":
        from redis.cluster import ClusterNode, RedisCluster

        nodes = [ClusterNode(host, port) for host, port in target.nodes]  # type: ignore[no-untyped-call]
        return RedisCluster(startup_nodes=nodes, **auth, **common)
    from redis.sentinel import Sentinel

    sentinel = Sentinel(list(target.nodes), sentinel_kwargs=dict(common), **common)
    return sentinel.master_for(target.service, db=target.db, **auth, **common)


async def async_replicas(client: Any, key: str, wanted: int, timeout: float) -> int:
    """How many replicas acknowledged every write the master of ``key`` made so far (up to
    ``wanted``; waits at most ``timeout`` s): a write to ``key`` and ``WAIT`` on one connection.
    Replication is one ordered stream, so whatever this client read before is covered too.

    Cancellation: safe (the marker write is harmless).
    """
    ms = max(1, int(timeout * 1000))
    if not is_cluster(client):
        pipe = client.pipeline(transaction=False)
        pipe.set(key, "1", px=60_000)
        pipe.wait(wanted, ms)
        _, acked = await pipe.execute()
        return int(acked)
    from redis.asyncio.cluster import PipelineCommand

    await client.initialize()
    node = client.get_node_from_key(key)
    commands = [
        PipelineCommand(0, "SET", key, "1", "PX", 60_000),
        PipelineCommand(1, "WAIT", wanted, ms),
    ]
    await node.execute_pipeline(commands)
    for command in commands:
        if isinstance(command.result, BaseException):
            raise command.result
    reply: Any = commands[1].result
    return int(reply)


def _sentinels(client: Any) -> list[Any]:
    """The clients a Sentinel-made master client keeps to the sentinels (none otherwise)."""
    manager = getattr(getattr(client, "connection_pool", None), "sentinel_manager", None)
    return list(getattr(manager, "sentinels", ()))


async def aclose_client(client: Any) -> None:
    """Close an asyncio client made by :func:`async_client`, its sentinel connections too:
    every one of them even when one fails to close (the first error is raised after).

    Cancellation: safe (the closes left still run; the cancellation is raised after).
    """
    first: BaseException | None = None
    for closing in [*_sentinels(client), client]:
        try:
            await closing.aclose()
        except BaseException as exc:  # a cancellation too: every socket closes, then it is raised
            first = first or exc
    if first is not None:
        raise first


def close_client(client: Any) -> None:
    """Close a client made by :func:`sync_client`, its sentinel connections too: every one
    of them even when one fails to close (the first error is raised after)."""
    first: BaseException | None = None
    for closing in [*_sentinels(client), client]:
        try:
            closing.close()
        except Exception as exc:  # every socket closes; the first error wins
            first = first or exc
    if first is not None:
        raise first
