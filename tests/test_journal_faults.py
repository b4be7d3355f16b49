"""Issue 31's journal faults: read commands that wrote to what they read, a deleted tail that
verified, a crash that lost acknowledged answers silently, a wrong key that looked like mass
tampering, and times compared as text."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from voice_hitl import HumanInputHandler
from voice_hitl._cli import main
from voice_hitl.journal import (
    FileAnchor,
    Journal,
    JournalEntry,
    JournalUnavailableError,
    SqliteJournalStore,
)

HERE = Path(__file__).parent
KEY = b"journal-scale-key"  # the key tests/journal_worker.py writes with


async def answered(handler: HumanInputHandler, count: int, room: str = "r1") -> list[str]:
    ids = []
    for n in range(count):
        pending = await handler.create("AskUserQuestion", {"question": f"q{n}"}, room_id=room)
        handler.resolve(pending.pending_id, "yes", by="ann", via="api")
        await handler.wait(pending.pending_id)
        ids.append(pending.pending_id)
    return ids


async def journal_file(path: Path, count: int = 3, **options: object) -> list[str]:
    handler = HumanInputHandler()
    journal = Journal.open(path, KEY, **options)
    journal.attach(handler)
    ids = await answered(handler, count)
    await asyncio.to_thread(journal.close)
    return ids


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def fingerprint(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


# -- 9: read commands never write ----------------------------------------------------------


async def test_read_commands_change_nothing_and_refuse_what_is_not_a_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    empty = tmp_path / "empty" / "zero.sqlite3"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    other = tmp_path / "other" / "app.db"
    other.parent.mkdir()
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE users (name TEXT)")
    db.commit()
    db.close()
    for path, what in ((empty, "an empty file"), (other, "tables users")):
        before = fingerprint(path.parent)
        for action in (["list"], ["show", "x"], ["verify"], ["export"]):
            code, out, err = run(["journal", *action, "--journal", str(path)], capsys)
            assert code == 2 and "intact" not in out, (action, out, err)
            assert f"{path}: not a journal" in err and what in err, err
        assert fingerprint(path.parent) == before  # no schema, no -wal/-shm, nothing
    journal = tmp_path / "j" / "journal.sqlite3"
    journal.parent.mkdir()
    ids = await journal_file(journal)
    before = fingerprint(journal.parent)
    for action in (["list"], ["show", ids[0]], ["verify"], ["export"]):
        code, _, err = run(["journal", *action, "--journal", str(journal)], capsys)
        assert code == 0, err
    assert fingerprint(journal.parent) == before


async def test_redis_read_commands_refuse_a_prefix_that_is_not_a_journal(
    redis_url: str, redis_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    redis = pytest.importorskip("redis", reason="the Redis journal needs the 'redis' extra")
    client = redis.Redis.from_url(redis_url)
    try:
        listing = ["journal", "list", "--redis", redis_url, "--prefix"]
        code, out, err = await asyncio.to_thread(run, [*listing, redis_prefix + "none"], capsys)
        assert code == 2 and f"no journal under prefix '{redis_prefix}none'" in err
        other = "{" + redis_prefix + "other}:entries"  # the journal's keys carry a hash tag
        await asyncio.to_thread(client.set, other, "an app's value")
        code, out, err = await asyncio.to_thread(run, [*listing, redis_prefix + "other"], capsys)
        assert code == 2 and "entries is a Redis string, not a journal's stream" in err, err
        keys = await asyncio.to_thread(client.keys, "*" + redis_prefix + "*")
        assert keys == [other.encode()]  # nothing was written
    finally:
        await asyncio.to_thread(client.delete, other)
        client.close()


# -- 10: a deleted tail is found --------------------------------------------------------


def delete_tail(path: Path, count: int) -> None:
    db = sqlite3.connect(path)
    db.execute("DELETE FROM entries WHERE seq > (SELECT MAX(seq) FROM entries) - ?", (count,))
    db.commit()
    db.close()


def shorten_a_checkpoint(anchor: Path) -> str:
    """Edit the newest checkpoint to claim a one-entry journal; returns its writer."""
    *lines, last = anchor.read_text().splitlines()
    forged = {**json.loads(last), "seq": 1}
    anchor.write_text("".join(f"{line}\n" for line in [*lines, json.dumps(forged)]))
    return str(forged["writer"])


async def test_entries_deleted_from_the_end_of_a_file_are_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    path = tmp_path / "j.sqlite3"
    await journal_file(path, 3)
    await journal_file(path, 0)  # a writer that stored nothing closes cleanly too
    verify = ["journal", "verify", "--journal", str(path)]
    assert run(verify, capsys)[:2] == (0, "chain intact: 6 entries\n")
    delete_tail(path, 2)  # the last request's story, gone
    code, _, err = run(verify, capsys)
    assert code == 1
    assert "entries 5..6 are missing from the end (deleted?)" in err
    assert "reached entry 6" in err
    # A writer that starts on the cut file says so in the chain; the old checkpoint stays
    # until the journal is past it, and the gap entry stays for good.
    await journal_file(path, 2)
    code, _, err = run(verify, capsys)
    assert code == 1 and "a writer found entries 5..6 cut from the end" in err
    # The anchor itself: deleted, or a checkpoint edited to claim a shorter journal.
    anchor = Path(f"{path}.anchor")
    writer = await asyncio.to_thread(shorten_a_checkpoint, anchor)
    code, _, err = run(verify, capsys)
    assert code == 1 and f"checkpoint of writer {writer} is not signed with this key" in err
    await asyncio.to_thread(anchor.unlink)
    code, _, err = run(verify, capsys)
    assert code == 1 and "no checkpoint in the anchor" in err


async def test_the_anchor_is_compacted_and_an_old_checkpoint_put_back_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    anchor_path = tmp_path / "elsewhere.anchor"
    anchor = FileAnchor(anchor_path, compact_at=2000)
    journal = Journal(SqliteJournalStore(path), KEY, anchor=anchor)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    await answered(handler, 1)
    assert await asyncio.to_thread(journal.flush)
    old = (await asyncio.to_thread(anchor_path.read_text)).splitlines()[-1]
    for _ in range(30):  # a batch, and a checkpoint, each
        await answered(handler, 1)
        assert await asyncio.to_thread(journal.flush)
        assert (await asyncio.to_thread(anchor_path.stat)).st_size < 2000 + 2 * len(old)
    await asyncio.to_thread(journal.close)
    await asyncio.to_thread(delete_tail, path, 2)
    with await asyncio.to_thread(anchor_path.open, "a") as file:
        file.write(old + "\n")  # a checkpoint of entry 2, saved earlier, put back
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    code, _, err = run(["journal", "verify", "--journal", str(path)], capsys)
    assert code == 1 and "no checkpoint in the anchor" in err  # not the default place
    verify = ["journal", "verify", "--journal", str(path), "--anchor", str(anchor_path)]
    code, _, err = run(verify, capsys)
    assert code == 1 and "entries 61..62 are missing from the end" in err, err


async def test_a_redis_tail_deleted_with_its_head_key_set_back_is_found(
    redis_url: str,
    redis_prefix: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redis = pytest.importorskip("redis", reason="the Redis journal needs the 'redis' extra")
    prefix = redis_prefix + "journal"
    handler = HumanInputHandler()
    journal = Journal.on_redis(redis_url, KEY, prefix=prefix)
    journal.attach(handler)
    await answered(handler, 3)
    await asyncio.to_thread(journal.close)
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    verify = ["journal", "verify", "--redis", redis_url, "--prefix", prefix]
    assert (await asyncio.to_thread(run, verify, capsys))[:2] == (0, "chain intact: 6 entries\n")
    client = redis.Redis.from_url(redis_url)
    try:
        stream = "{" + prefix + "}:entries"
        items = client.xrange(stream)
        client.xdel(stream, items[-1][0], items[-2][0])  # no secret needed for any of this
        kept = json.loads(items[-3][1][b"e"])
        client.set("{" + prefix + "}:head", f"{kept['seq']}:{kept['digest']}")
        code, _, err = await asyncio.to_thread(run, verify, capsys)
        assert code == 1 and "entries 5..6 are missing from the end (deleted?)" in err, err
    finally:
        client.close()


# -- 12: a wrong key, times ----------------------------------------------------------------


async def test_a_wrong_key_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    await journal_file(path, 20)
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", "not-the-key")
    code, _, err = run(["journal", "verify", "--journal", str(path)], capsys)
    assert code == 1
    (line,) = err.splitlines()
    assert "the key does not match this journal" in line and "40 entries" in line
    assert "wrong key?" in line and "edited" not in line
    # One edited entry under the right key is still named as such.
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET data = replace(data, 'yes', 'no') WHERE seq = 4")
    db.commit()
    db.close()
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    code, _, err = run(["journal", "verify", "--journal", str(path)], capsys)
    assert code == 1 and err.splitlines() == [
        "voice-hitl journal verify: entry 4: its content does not match its digest (edited?)"
    ]


def write_entries(path: Path, times: Sequence[str]) -> None:
    """A journal whose requests opened at ``times`` (written through a real journal)."""
    journal = Journal(SqliteJournalStore(path), KEY)
    journal.start()
    for n, at in enumerate(times):
        journal.record(f"req-{n}", "opened", {"tool": "T", "room": "r"}, at=_parse(at))
    assert journal.flush()
    journal.close()


def _parse(text: str) -> object:
    from datetime import datetime

    return datetime.fromisoformat(text)


async def test_since_and_until_are_instants_and_nonsense_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.sqlite3"
    await asyncio.to_thread(
        write_entries, path, ["2026-05-01T08:30:00+00:00", "2026-05-01T09:30:00+00:00"]
    )
    listing = ["journal", "list", "--journal", str(path)]
    # 09:00+01:00 is 08:00 UTC: both requests opened after it (as text, "08:30" < "09:00").
    code, out, _ = run([*listing, "--since", "2026-05-01T09:00:00+01:00"], capsys)
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["req-0", "req-1"]
    code, out, _ = run([*listing, "--until", "2026-05-01T10:00+01:00"], capsys)
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["req-0"]
    code, out, _ = run([*listing, "--since", "2026-05-01T09:00"], capsys)  # no offset: UTC
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["req-1"]
    with pytest.raises(SystemExit) as exited:
        main([*listing, "--since", "last tuesday"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--since" in err and "'last tuesday' is not an ISO 8601 time" in err


# -- 11: sync durability ---------------------------------------------------------------------


class GatedStore:
    """A SQLite store whose appends wait until the test opens the gate."""

    def __init__(self, path: Path) -> None:
        self.inner = SqliteJournalStore(path)
        self.path = path
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.fail = False

    def last(self) -> tuple[int, str] | None:
        return self.inner.last()

    def append(self, entries: Sequence[JournalEntry]) -> None:
        self.entered.set()
        self.gate.wait(10)
        if self.fail:
            raise ConnectionError("journal store unreachable")
        self.inner.append(entries)

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        return self.inner.read(request_id)

    def contains(self, entry: JournalEntry) -> bool:
        return self.inner.contains(entry)

    def close(self) -> None:
        self.inner.close()


async def test_sync_durability_delivers_only_what_is_stored(tmp_path: Path) -> None:
    store = GatedStore(tmp_path / "j.sqlite3")
    journal = Journal(store, KEY, durability="sync", anchor=False)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    pending = await handler.create("ConfirmAction", {"action": "pay"})
    handler.resolve(pending.pending_id, "yes", by="ann")
    waiting = asyncio.create_task(handler.wait(pending.pending_id))
    assert await asyncio.to_thread(store.entered.wait, 10)  # the writer is held at the gate
    for _ in range(20):
        await asyncio.sleep(0)
    assert not waiting.done() and store.inner.read() == []  # only the write can release it
    store.gate.set()
    assert await waiting == "yes"
    kinds = [e.kind for e in store.inner.read(pending.pending_id)]
    assert kinds == ["opened", "settled"]  # stored before the call read the answer
    await asyncio.to_thread(journal.close)


async def test_sync_durability_fails_the_call_when_the_store_cannot_take_it(
    tmp_path: Path,
) -> None:
    store = GatedStore(tmp_path / "j.sqlite3")
    store.gate.set()
    store.fail = True
    journal = Journal(store, KEY, durability="sync", sync_timeout=0.2, retry_interval=0.05)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    pending = await handler.create("ConfirmAction", {"action": "pay"})
    handler.resolve(pending.pending_id, "yes")
    with pytest.raises(JournalUnavailableError, match=r"could not be recorded within 0\.2s"):
        await handler.wait(pending.pending_id)  # a ToolFailedError: the model reads it
    assert journal.stats.late == 1
    store.fail = False  # the store is back: the entries are written after all
    assert await asyncio.to_thread(journal.flush)
    assert [e.kind for e in store.inner.read()] == ["opened", "settled"]
    await asyncio.to_thread(journal.close)


def burst_then_kill(path: Path, durability: str, acks: int) -> set[str]:
    """Run the burst worker until it has acknowledged ``acks`` calls; SIGKILL it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "journal_worker.py"), "burst", str(path), durability],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    acked: set[str] = set()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("ack "):
                acked.add(line.split()[1])
                if len(acked) >= acks:
                    break
        proc.send_signal(signal.SIGKILL)
        for line in proc.stdout:  # what it acknowledged before it died
            if line.startswith("ack "):
                acked.add(line.split()[1])
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    return acked


@pytest.mark.parametrize("durability", ["sync", "fast"])
def test_a_crash_mid_burst(
    tmp_path: Path,
    durability: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "j.sqlite3"
    acked = burst_then_kill(path, durability, 2000)
    reader = SqliteJournalStore(path, read_only=True)
    settled = {e.request_id for e in reader.iterate() if e.kind == "settled"}
    reader.close()
    lost = acked - settled
    if durability == "sync":
        assert not lost  # every answer a call read is in the journal
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    code, out, err = run(["journal", "verify", "--journal", str(path)], capsys)
    assert code == 3, (out, err)  # intact, but the writer never closed: it says so
    assert "but entries may be missing" in out
    assert "did not close (still running, or stopped without closing)" in err
    # The next writer on the file notes the unclosed one in its stats.
    journal = Journal.open(path, KEY)
    assert journal.flush()
    assert len(journal.stats.unclosed) == 1 and "did not close" in journal.stats.unclosed[0]
    journal.close()
