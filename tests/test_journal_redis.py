"""The journal on Redis Streams: many processes, one verifiable chain; tampering detected;
the server killed mid-run leaves the calls alone and the gap recorded."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from redis_rig import start_redis_server

from voice_hitl import HumanInputHandler
from voice_hitl._cli import main
from voice_hitl.journal import Journal, RedisJournalStore, verify_chain

redis = pytest.importorskip("redis", reason="the Redis journal needs the 'redis' extra")

HERE = Path(__file__).parent
KEY = b"journal-scale-key"
WORKERS = 4
PER_WORKER = 2_500


def _run_workers(url: str, prefix: str) -> list[list[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(HERE / "journal_worker.py"),
                url,
                prefix,
                f"w{n}",
                str(PER_WORKER),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for n in range(WORKERS)
    ]
    lines = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err.decode()[-2000:]
        lines.append(out.decode().split())
    return lines


@pytest.mark.timeout(120)
def test_ten_thousand_requests_from_four_processes_form_one_chain(
    redis_url: str, redis_prefix: str
) -> None:
    prefix = redis_prefix + "journal"
    reports = _run_workers(redis_url, prefix)
    written = sum(int(r[1]) for r in reports)
    assert all(r[0] == "done" and r[3] == "0" for r in reports)  # no failed write
    store = RedisJournalStore(redis_url, prefix=prefix)
    try:
        entries = store.read()
        assert len(entries) == written == WORKERS * PER_WORKER * 2
        assert verify_chain(entries, KEY) == []
        assert store.head_problem(entries) is None
        kinds: dict[str, list[str]] = {}
        for entry in entries:
            kinds.setdefault(entry.request_id, []).append(entry.kind)
        assert len(kinds) == WORKERS * PER_WORKER
        assert all(story == ["opened", "settled"] for story in kinds.values())
        rooms = Counter(e.data["room"] for e in entries if e.kind == "opened")
        assert rooms == {f"w{n}": PER_WORKER for n in range(WORKERS)}
        # one request's story through its index, in order
        some = entries[len(entries) // 2].request_id
        story = store.read(some)
        assert [e.kind for e in story] == ["opened", "settled"]
        assert story == [e for e in entries if e.request_id == some]
    finally:
        store.close()


def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


async def _journal_some(url: str, prefix: str, count: int) -> None:
    handler = HumanInputHandler()
    journal = Journal.on_redis(url, KEY, prefix=prefix)
    journal.attach(handler)
    for index in range(count):
        pending = await handler.create("AskUserQuestion", {"question": f"q{index}"})
        handler.resolve(pending.pending_id, "yes", by="ann")
        await handler.wait(pending.pending_id)
    await asyncio.to_thread(journal.close)


async def test_an_edited_or_deleted_entry_or_tail_is_detected(
    redis_url: str,
    redis_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = redis_prefix + "journal"
    await _journal_some(redis_url, prefix, 5)
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    verify = ["journal", "verify", "--redis", redis_url, "--prefix", prefix]
    assert await asyncio.to_thread(main, verify) == 0
    assert "chain intact: 10 entries" in capsys.readouterr().out
    client = _client(redis_url)
    stream = "{" + prefix + "}:entries"
    try:
        ids = [i for i, _ in client.xrange(stream)]
        # tail: the last entry deleted (the chain before it is intact; the head says more)
        client.xdel(stream, ids[-1])
        assert await asyncio.to_thread(main, verify) == 1
        err = capsys.readouterr().err
        assert "head is entry 10 but the stream ends at 9: entries after it were deleted" in err
        # edit: entry 3 replaced by a forged copy (a stream entry cannot change in place)
        ((_, fields),) = client.xrange(stream, ids[2], ids[2])
        forged = json.loads(fields[b"e"])
        forged["data"]["by"] = "mallory"
        client.xdel(stream, ids[2])
        client.xadd(stream, {"e": json.dumps(forged)})
        assert await asyncio.to_thread(main, verify) == 1
        err = capsys.readouterr().err
        assert "entries 3 are missing" in err or "entry 4: entries 3" in err
        assert "does not match its digest (edited?)" in err
    finally:
        client.close()


@pytest.mark.timeout(60)
async def test_the_server_killed_mid_run_leaves_calls_alone_and_records_the_gap() -> None:
    try:
        server = await asyncio.to_thread(start_redis_server, persist=True)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    try:
        handler = HumanInputHandler(retention=0)
        store = RedisJournalStore(server.url, prefix="j")
        journal = Journal(store, KEY, max_buffered=50, retry_interval=0.05)
        journal.start()
        journal.attach(handler)

        async def calls(count: int) -> None:
            for _ in range(count):
                pending = await handler.create("ConfirmAction", {"action": "x"}, timeout=5)
                assert handler.resolve(pending.pending_id, "yes")
                assert await handler.wait(pending.pending_id, timeout=5) == "yes"

        await calls(20)
        assert await asyncio.to_thread(journal.flush)
        await asyncio.to_thread(server.kill)
        await calls(100)  # 200 entries while the journal is down: every call settles
        assert not await asyncio.to_thread(journal.flush, 2.0)  # nothing can be written
        await asyncio.to_thread(server.restart)
        assert await asyncio.to_thread(journal.flush, 20.0)
        await asyncio.to_thread(journal.close)
        stats = journal.stats
        assert stats.failures >= 1 and stats.gaps == 1
        assert stats.dropped == 200 - 50
        reader = RedisJournalStore(server.url, prefix="j")
        entries = await asyncio.to_thread(reader.read)
        reader.close()
        assert verify_chain(entries, KEY) == []
        (gap,) = [e for e in entries if e.kind == "gap"]
        assert gap.data["dropped"] == 150 and "Error" in gap.data["reason"]
        assert len(entries) == 40 + 1 + 50
    finally:
        await asyncio.to_thread(server.stop)
