"""The Redis rig itself: a real server, a prefix per test, and only its own keys deleted."""

from __future__ import annotations

import redis
from redis_rig import start_redis_server


def test_prefix_keys_are_the_tests_own(redis_url: str, redis_prefix: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        client.set(f"{redis_prefix}a", "1")
        assert client.get(f"{redis_prefix}a") == b"1"
        assert redis_prefix.startswith("voice-hitl-test:")
    finally:
        client.close()


def test_a_throwaway_server_starts_and_stops() -> None:
    server = start_redis_server()
    try:
        client = redis.Redis(port=server.port)
        assert client.ping()
        client.close()
    finally:
        server.stop()
    assert server.process.poll() is not None
