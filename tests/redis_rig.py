"""A real Redis server for the tests that need one, and a key prefix each test owns.

Where the server comes from, in order: ``REDIS_URL``; the server this machine kind runs at
127.0.0.1:6379; a throwaway ``redis-server`` on a free port when the binary is on PATH.
Otherwise the tests skip with the reason, unless ``VOICE_HITL_REQUIRE_REDIS=1`` (set by
``.ci/run``), which turns the skip into a failure. Each test gets its own key prefix and
deletes only the keys under it.

Use it from a test module with ``from redis_rig import redis_prefix, redis_url  # noqa: F401``
or through ``tests/conftest.py``, which makes both fixtures available everywhere.
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
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

__all__ = ["RedisServer", "free_port", "redis_prefix", "redis_url", "start_redis_server"]

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
    port: int | None = None, timeout: float = 10.0, *, persist: bool = False
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
