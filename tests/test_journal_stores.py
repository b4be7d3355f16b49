"""Both journal stores behind one suite: a write whose reply was lost is never written twice
(even when another writer appended in between), and ``contains`` finds exactly the entries
that are stored."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from voice_hitl import HumanInputHandler
from voice_hitl.journal import Journal, JournalEntry, JournalStore, verify_chain

KEY = b"store-suite-key"
STORES = ["sqlite", "redis", "redis-cluster", "redis-sentinel"]


@pytest.fixture(params=STORES)
def make_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], JournalStore]]:
    """Opens stores on one shared journal (the same file, or the same Redis prefix)."""
    opened: list[JournalStore] = []

    def make() -> JournalStore:
        store: JournalStore
        if request.param == "sqlite":
            from voice_hitl.journal import SqliteJournalStore

            store = SqliteJournalStore(tmp_path / "j.sqlite3")
        else:
            pytest.importorskip("redis", reason="the Redis journal needs the 'redis' extra")
            from voice_hitl.journal import RedisJournalStore

            url = request.getfixturevalue(request.param.replace("-", "_") + "_url")
            prefix = request.getfixturevalue("redis_prefix") + "journal"
            store = RedisJournalStore(url, prefix=prefix)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


class LostReply:
    """A store whose next append reaches the store, lets ``meanwhile`` run (another process
    appending), then fails as a dropped connection would: the caller never hears it worked."""

    def __init__(self, inner: JournalStore, meanwhile: Callable[[], None]) -> None:
        self.inner = inner
        self.meanwhile: Callable[[], None] | None = meanwhile

    def last(self) -> tuple[int, str] | None:
        return self.inner.last()

    def append(self, entries: Sequence[JournalEntry]) -> None:
        self.inner.append(entries)
        if self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
            raise ConnectionError("connection reset by peer (after the server applied it)")

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        return self.inner.read(request_id)

    def contains(self, entry: JournalEntry) -> bool:
        return self.inner.contains(entry)

    def close(self) -> None:
        self.inner.close()


async def answered(handler: HumanInputHandler, count: int) -> list[str]:
    ids = []
    for n in range(count):
        pending = await handler.create("AskUserQuestion", {"question": f"q{n}"})
        handler.resolve(pending.pending_id, "yes", by="ann", via="api")
        await handler.wait(pending.pending_id)
        ids.append(pending.pending_id)
    return ids


async def test_a_lost_reply_is_not_written_twice(
    make_store: Callable[[], JournalStore],
) -> None:
    other = Journal(make_store(), KEY)  # another process on the same journal
    other.start()

    def another_process_appends() -> None:
        other.record("other-request", "noted", {"note": "appended meanwhile"})
        assert other.flush()

    store = LostReply(make_store(), another_process_appends)
    journal = Journal(store, KEY, retry_interval=0.01)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    first = await answered(handler, 3)
    assert not await asyncio.to_thread(journal.flush)  # the write failed...
    while not await asyncio.to_thread(journal.flush):
        pass  # ... and the next attempt finds it stored (each flush waits for one attempt)
    assert store.meanwhile is None
    second = await answered(handler, 2)
    assert await asyncio.to_thread(journal.flush)
    await asyncio.to_thread(journal.close)
    await asyncio.to_thread(other.close)

    reader = make_store()
    entries = await asyncio.to_thread(reader.read)
    assert verify_chain(entries, KEY) == []
    stories = Counter(e.request_id for e in entries)
    assert stories == {**{rid: 2 for rid in first + second}, "other-request": 1}
    assert all(
        [e.kind for e in entries if e.request_id == rid] == ["opened", "settled"]
        for rid in first + second
    )
    stats = journal.stats
    assert (stats.failures, stats.unsure, stats.written) == (1, 1, 10)
    assert stats.relinked >= 1  # the next batch linked to the other process's entry


async def test_contains_finds_exactly_what_is_stored(
    make_store: Callable[[], JournalStore],
) -> None:
    journal = Journal(make_store(), KEY)
    journal.start()
    journal.record("", "gap", {"dropped": 0, "why": "an entry of no request"})
    journal.record("r1", "noted", {"note": "first"})
    assert await asyncio.to_thread(journal.flush)
    await asyncio.to_thread(journal.close)
    store = make_store()
    gap, noted = await asyncio.to_thread(store.read)
    for entry in (gap, noted):
        assert await asyncio.to_thread(store.contains, entry)
        forged = dataclasses.replace(entry, digest="f" * 64)
        assert not await asyncio.to_thread(store.contains, forged)
    beyond = dataclasses.replace(gap, seq=3)
    assert not await asyncio.to_thread(store.contains, beyond)


@pytest.mark.parametrize("topology", ["redis_cluster_url", "redis_sentinel_url"])
async def test_journal_on_redis_writes_every_entry_on_a_cluster_and_a_sentinel_master(
    topology: str, request: pytest.FixtureRequest, redis_prefix: str
) -> None:
    """``Journal.on_redis`` with a cluster or Sentinel URL writes every entry (none dropped at
    close) into one chain that verifies."""
    url = request.getfixturevalue(topology)
    journal = Journal.on_redis(url, KEY, prefix=redis_prefix + "onredis")
    handler = HumanInputHandler()
    journal.attach(handler)
    ids = await answered(handler, 20)
    await asyncio.to_thread(journal.close)
    assert journal.stats.dropped == 0 and journal.stats.failures == 0
    from voice_hitl.journal import RedisJournalStore

    reader = RedisJournalStore(url, prefix=redis_prefix + "onredis", read_only=True)
    try:
        entries = await asyncio.to_thread(reader.read)
        one = await asyncio.to_thread(reader.read, ids[3])  # through the per-request index
    finally:
        reader.close()
    assert journal.stats.written == len(entries) == 40
    assert verify_chain(entries, KEY) == []
    assert [e.kind for e in one] == ["opened", "settled"]


async def test_a_chain_that_went_back_gets_a_gap_entry(redis_url: str, redis_prefix: str) -> None:
    """A failover to a replica that had not received the newest entries: the head the writer
    reads is behind what it wrote. It writes a gap entry naming them, then goes on."""
    redis = pytest.importorskip("redis", reason="the Redis journal needs the 'redis' extra")
    from voice_hitl.journal import RedisJournalStore

    prefix = redis_prefix + "wentback"
    journal = Journal(RedisJournalStore(redis_url, prefix=prefix), KEY, retry_interval=0.01)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    await answered(handler, 3)  # entries 1..6
    assert await asyncio.to_thread(journal.flush)
    client = redis.Redis.from_url(redis_url)
    try:  # what a promoted replica that had entries 1..4 only would hold
        stream = "{" + prefix + "}:entries"
        items = client.xrange(stream)
        client.xdel(stream, items[-1][0], items[-2][0])
        kept = json.loads(items[-3][1][b"e"])
        client.set("{" + prefix + "}:head", f"{kept['seq']}:{kept['digest']}")
    finally:
        client.close()
    later = await answered(handler, 1)
    await asyncio.to_thread(journal.close)
    reader = RedisJournalStore(redis_url, prefix=prefix, read_only=True)
    try:
        entries = await asyncio.to_thread(reader.read)
    finally:
        reader.close()
    assert verify_chain(entries, KEY) == []
    assert [e.kind for e in entries[4:]] == ["gap", "opened", "settled"]
    assert entries[4].data["missing"] == "5..6" and "went back" in entries[4].data["reason"]
    assert {e.request_id for e in entries[5:]} == set(later)
    assert journal.stats.gaps == 1
