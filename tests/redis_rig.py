"""A real Redis server for the tests that need one, and a key prefix each test owns.

Where the server comes from, in order: ``REDIS_URL``; the server this machine kind runs at
127.0.0.1:6379; a throwaway ``redis-server`` on a free port when the binary is on PATH.
Otherwise the tests skip with the reason, unless ``VOICE_HITL_REQUIRE_REDIS=1`` (set by
``.ci/run``), which turns the skip into a failure. Each test gets its own key prefix and
deletes only the keys under it.

Use it from a test module with ``from redis_rig import redis_prefix, redis_url  # noqa: F401``
or through ``tests/conftest.py``, which makes both fixtures available everywhere.

Two more shapes, always throwaway servers on free ports (the binaries are required, as above):
:func:`start_redis_cluster` (3 masters, no replicas; ``redis_cluster_url`` for the session) and
:func:`start_sentinel_group` (a master, one replica, three sentinels; ``redis_sentinel_url`` for
the session; a test that kills the master starts its own group).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import pytest

__all__ = [
    "RedisCluster",
    "RedisServer",
    "SentinelGroup",
    "free_port",
    "redis_cluster_url",
    "redis_prefix",
    "redis_sentinel_url",
    "redis_url",
    "start_redis_cluster",
    "start_redis_server",
    "start_sentinel_group",
]

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_ping(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class RedisServer:
    """A ``redis-server`` process this test run started (and must stop)."""

    port: int
    process: subprocess.Popen[bytes]
    workdir: str

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    args: tuple[str, ...] = ()

    def kill(self) -> None:
        """Kill the server at once, keeping its folder (a crash)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def restart(self, timeout: float = 10.0) -> None:
        """Start it again on the same port and folder; waits until it answers PING."""
        self.kill()
        self.process = subprocess.Popen(
            list(self.args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _wait_for(self, timeout)

    def stop(self) -> None:
        """Stop the server and wait for it (idempotent)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _wait_for(server: RedisServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not _answers_ping("127.0.0.1", server.port):
        if server.process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise TimeoutError(f"redis-server on port {server.port} did not start")
        time.sleep(0.05)


def start_redis_server(
    port: int | None = None,
    timeout: float = 10.0,
    *,
    persist: bool = False,
    extra: tuple[str, ...] = (),
    sentinel: bool = False,
) -> RedisServer:
    """Start a throwaway ``redis-server`` and wait until it answers PING.

    With ``persist`` it keeps an append-only file (fsync on every write) in its folder, so a
    :meth:`RedisServer.restart` after a :meth:`RedisServer.kill` finds the data again.

    Raises:
        FileNotFoundError: ``redis-server`` is not on PATH.
        TimeoutError: It did not answer within ``timeout`` seconds.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError("redis-server is not on PATH (Debian package redis-server)")
    port = free_port() if port is None else port
    workdir = tempfile.mkdtemp(prefix="voice-hitl-redis-")
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    if persist:
        args += ["--appendonly", "yes", "--appendfsync", "always", "--dir", workdir]
    else:
        args += ["--appendonly", "no", "--dir", workdir]
    if sentinel:  # a sentinel keeps its state in a config file of its own
        conf = os.path.join(workdir, "sentinel.conf")
        with open(conf, "w", encoding="utf-8") as file:
            file.write(f"port {port}\nbind 127.0.0.1\ndir {workdir}\n" + "\n".join(extra) + "\n")
        args = [binary, conf, "--sentinel"]
    else:
        args += list(extra)
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = RedisServer(port, process, workdir, tuple(args))
    _wait_for(server, timeout)
    return server


def _unavailable(reason: str) -> None:
    if os.environ.get("VOICE_HITL_REQUIRE_REDIS") == "1":
        pytest.fail(f"Redis is required here (VOICE_HITL_REQUIRE_REDIS=1) but {reason}")
    pytest.skip(f"no Redis server: {reason}")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis server the tests may use (see the module docstring)."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    if _answers_ping("127.0.0.1", 6379):
        yield DEFAULT_URL
        return
    try:
        server = start_redis_server()
    except (FileNotFoundError, TimeoutError) as exc:
        _unavailable(f"REDIS_URL is unset, nothing answers on 127.0.0.1:6379, and {exc}")
        return
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix only this test uses; its keys are deleted afterwards (and no others)."""
    prefix = f"voice-hitl-test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    with contextlib.suppress(ImportError):
        import redis

        client = redis.Redis.from_url(redis_url)
        try:
            # the board's and the journal's keys carry the prefix as a hash tag: {prefix...}
            keys = list(client.scan_iter(match=f"{prefix}*", count=500))
            keys += list(client.scan_iter(match="{" + prefix + "*", count=500))
            for start in range(0, len(keys), 500):
                client.delete(*keys[start : start + 500])
        finally:
            client.close()


def _redis_cli(*args: str) -> str:
    binary = shutil.which("redis-cli")
    if binary is None:
        raise FileNotFoundError("redis-cli is not on PATH (Debian package redis-tools)")
    done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"redis-cli {' '.join(args)}: {done.stderr or done.stdout}")
    return done.stdout


def _until(check: Callable[[], bool], what: str, timeout: float) -> None:
    """Poll ``check`` (a server-side state change) until it holds; TimeoutError after
    ``timeout`` naming ``what``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} (waited {timeout:g}s)")
        time.sleep(0.05)


@dataclass
class RedisCluster:
    """A 3-master Redis Cluster of throwaway servers."""

    servers: list[RedisServer]

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{s.port}" for s in self.servers)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


def _cluster_ok(port: int) -> bool:
    try:
        return "cluster_state:ok" in _redis_cli("-p", str(port), "cluster", "info")
    except RuntimeError:
        return False


def _cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free and valid too."""
    while True:
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


def start_redis_cluster(masters: int = 3, timeout: float = 20.0) -> RedisCluster:
    """Start ``masters`` cluster-enabled servers and join them (``redis-cli --cluster create``,
    no replicas); returns once every node says ``cluster_state:ok``.

    Raises:
        FileNotFoundError: ``redis-server`` or ``redis-cli`` is not on PATH.
        TimeoutError: The cluster did not form within ``timeout`` seconds.
    """
    if shutil.which("redis-cli") is None:
        raise FileNotFoundError("redis-cli is not on PATH (Debian package redis-tools)")
    servers: list[RedisServer] = []
    cluster = RedisCluster(servers)
    try:
        for _ in range(masters):
            extra = ("--cluster-enabled", "yes", "--cluster-node-timeout", "2000")
            servers.append(start_redis_server(_cluster_port(), timeout=timeout, extra=extra))
        nodes = [f"127.0.0.1:{s.port}" for s in servers]
        _redis_cli("--cluster", "create", *nodes, "--cluster-replicas", "0", "--cluster-yes")
        for server in servers:
            _until(lambda port=server.port: _cluster_ok(port), "the cluster did not form", timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster


_QUICK_SYNC = ("--repl-diskless-sync-delay", "0")  # a replica syncs at once, not after 5 s


@dataclass
class SentinelGroup:
    """A master, one replica and three sentinels watching them as ``service``."""

    master: RedisServer
    replica: RedisServer
    sentinels: list[RedisServer]
    service: str = "vhmaster"

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{self.service}"

    def master_port(self) -> int | None:
        """The master's port as the first sentinel that answers names it."""
        for sentinel in self.sentinels:
            try:
                out = _redis_cli(
                    "-p", str(sentinel.port), "sentinel", "get-master-addr-by-name", self.service
                ).split()
            except RuntimeError:
                continue
            if len(out) == 2:
                return int(out[1])
        return None

    def wait_for_switch(self, away_from: int, timeout: float = 30.0) -> int:
        """Wait until every sentinel names a master other than ``away_from`` and that master
        accepts writes (the sentinels' ``+switch-master``, polled with a deadline)."""

        def switched() -> bool:
            ports = set()
            for sentinel in self.sentinels:
                if sentinel.process.poll() is not None:
                    continue
                out = _redis_cli(
                    "-p", str(sentinel.port), "sentinel", "get-master-addr-by-name", self.service
                ).split()
                ports.add(int(out[1]) if len(out) == 2 else away_from)
            if len(ports) != 1 or away_from in ports:
                return False
            role = _redis_cli("-p", str(ports.pop()), "role").split()
            return bool(role) and role[0] == "master"

        _until(switched, "the sentinels did not promote the replica", timeout)
        port = self.master_port()
        assert port is not None
        return port

    def wait_for_replica(self, master_port: int, timeout: float = 30.0) -> None:
        """Wait until the master on ``master_port`` has a replica in sync (a killed master
        restarted is made one by the sentinels)."""

        def synced() -> bool:
            info = _redis_cli("-p", str(master_port), "info", "replication")
            return "connected_slaves:1" in info and "state=online" in info

        _until(synced, "no replica came back in sync", timeout)

    def stop(self) -> None:
        for server in [*self.sentinels, self.replica, self.master]:
            server.stop()


def start_sentinel_group(
    service: str = "vhmaster", timeout: float = 20.0, *, for_failover: bool = False
) -> SentinelGroup:
    """Start a master, a replica of it and three sentinels (quorum 2, a master is down after
    500 ms); returns once the replica is in sync and every sentinel names the master (and,
    with ``for_failover``, knows the replica and the other sentinels: a few seconds).

    Raises:
        FileNotFoundError: ``redis-server`` or ``redis-cli`` is not on PATH.
        TimeoutError: The group did not come up within ``timeout`` seconds.
    """
    if shutil.which("redis-cli") is None:
        raise FileNotFoundError("redis-cli is not on PATH (Debian package redis-tools)")
    started: list[RedisServer] = []
    try:
        master = start_redis_server(timeout=timeout, extra=_QUICK_SYNC)
        started.append(master)
        replica = start_redis_server(
            timeout=timeout, extra=("--replicaof", "127.0.0.1", str(master.port), *_QUICK_SYNC)
        )
        started.append(replica)
        _until(
            lambda: "master_link_status:up" in _redis_cli("-p", str(replica.port), "info"),
            "the replica did not sync",
            timeout,
        )
        conf = (
            f"sentinel monitor {service} 127.0.0.1 {master.port} 2",
            f"sentinel down-after-milliseconds {service} 500",
            f"sentinel failover-timeout {service} 3000",
            f"sentinel parallel-syncs {service} 1",
        )
        sentinels = [start_redis_server(timeout=timeout, extra=conf, sentinel=True) for _ in "abc"]
        started += sentinels

        def all_see_everyone() -> bool:
            for sentinel in sentinels:
                info = _redis_cli("-p", str(sentinel.port), "sentinel", "master", service)
                fields = info.split()
                pairs = dict(zip(fields[::2], fields[1::2], strict=False))
                if pairs.get("ip") != "127.0.0.1" or not for_failover:
                    continue  # it answers for the master: enough to find it
                if pairs.get("num-slaves") != "1" or pairs.get("num-other-sentinels") != "2":
                    return False
            return True

        _until(all_see_everyone, "the sentinels did not find each other", timeout)
    except BaseException:
        for server in started:
            server.stop()
        raise
    return SentinelGroup(master, replica, sentinels, service)


class _Throwaway(Protocol):
    @property
    def url(self) -> str: ...

    def stop(self) -> None: ...


def _throwaway_url(start: Callable[[], _Throwaway], what: str) -> Iterator[str]:
    """Start a throwaway deployment, yield its URL, stop it (fails under
    ``VOICE_HITL_REQUIRE_REDIS=1`` when it cannot start, else skips)."""
    try:
        rig = start()
    except (FileNotFoundError, TimeoutError, RuntimeError) as exc:
        _unavailable(f"no {what}: {exc}")
        return
    try:
        yield rig.url
    finally:
        rig.stop()


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """A throwaway 3-master cluster for the session (fails under
    ``VOICE_HITL_REQUIRE_REDIS=1`` when the binaries are missing, else skips)."""
    yield from _throwaway_url(start_redis_cluster, "Redis Cluster")


@pytest.fixture(scope="session")
def redis_sentinel_url() -> Iterator[str]:
    """A throwaway master + replica + 3 sentinels for the session (see above)."""
    yield from _throwaway_url(start_sentinel_group, "Sentinel group")
