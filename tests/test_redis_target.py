"""The Redis URLs the board, the journal and ``serve`` read, and the keys' hash tag."""

from __future__ import annotations

import pytest

from voice_hitl._redis_target import keyspace, parse_target


def test_the_three_forms_are_read() -> None:
    single = parse_target("rediss://u:p@h:6380/2")
    assert (single.kind, single.tls) == ("single", True)
    cluster = parse_target("redis+cluster://a:7000,b:7001")
    assert (cluster.kind, cluster.nodes) == ("cluster", (("a", 7000), ("b", 7001)))
    sentinel = parse_target("redis+sentinel://:secret@s1,s2:26380/mymaster/3")
    assert (sentinel.kind, sentinel.nodes) == ("sentinel", (("s1", 26379), ("s2", 26380)))
    assert (sentinel.service, sentinel.db, sentinel.password) == ("mymaster", 3, "secret")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://h:6379", "must start with one of"),
        ("redis+sentinel://s1:26379", "ends in /service_name"),
        ("redis+sentinel://s1:26379/m/x", "database 'x' is not a number"),
        ("redis+cluster://a:7000/1", "a Cluster URL has no path"),
        ("redis+cluster://a:port", "port 'port' is not a number"),
        ("redis+cluster://:7000", "is not host:port"),
    ],
)
def test_a_bad_url_is_refused_naming_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_target(url)


def test_the_prefix_becomes_the_hash_tag_unless_it_has_one() -> None:
    assert keyspace("voice-hitl:") == "{voice-hitl:}"
    assert keyspace("{vh}:") == "{vh}:"
    assert keyspace("app:{tenant-1}:") == "app:{tenant-1}:"
    assert keyspace("a{}b:") == "{a{}b:}"  # an empty tag is no tag
    with pytest.raises(ValueError, match="must not be empty"):
        keyspace("")
