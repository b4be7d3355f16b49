"""The journal: every request's story in order, a keyed chain that shows edits and deletions,
calls untouched by a failing store, and the ``voice-hitl journal`` commands."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from doors import DOORS, human_tools, voice_rig

from voice_hitl import HumanInputHandler
from voice_hitl._cli import main
from voice_hitl.journal import (
    Journal,
    JournalEntry,
    JournalStore,
    SqliteJournalStore,
    verify_chain,
)

KEY = b"app-key"


async def flushed(journal: Journal) -> None:
    assert await asyncio.to_thread(journal.flush)


async def answered_request(handler: HumanInputHandler, answer: str = "red") -> str:
    pending = await handler.create("AskUserQuestion", {"question": "Colour?"}, room_id="r1")
    handler.resolve(pending.pending_id, answer, by="ann", via="operator")
    await handler.wait(pending.pending_id)
    return pending.pending_id


async def test_a_requests_story_is_kept_in_order_and_the_chain_verifies(tmp_path: Path) -> None:
    handler = HumanInputHandler()
    journal = Journal.open(tmp_path / "j.sqlite3", KEY)
    journal.attach(handler)
    ids = [await answered_request(handler, f"a{n}") for n in range(20)]
    await flushed(journal)
    entries = journal.store.read()
    assert verify_chain(entries, KEY) == []
    for n, request_id in enumerate(ids):
        story = journal.store.read(request_id)
        assert [e.kind for e in story] == ["opened", "settled"]
        assert story[0].data["tool"] == "AskUserQuestion" and story[0].data["room"] == "r1"
        assert story[1].data == {
            "outcome": "answered",
            "text": f"a{n}",
            "detail": "",
            "by": "ann",
            "via": "operator",
        }
    assert [e.seq for e in entries] == list(range(1, 41))
    await asyncio.to_thread(journal.close)


async def test_an_edited_or_deleted_entry_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    handler = HumanInputHandler()
    journal = Journal.open(path, KEY)
    journal.attach(handler)
    for _ in range(3):
        await answered_request(handler)
    await asyncio.to_thread(journal.close)
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET data = replace(data, 'red', 'blue') WHERE seq = 2")
    db.commit()
    problems = verify_chain(SqliteJournalStore(path).read(), KEY)
    assert [(p.seq, "edited" in p.problem) for p in problems] == [(2, True)]
    db.execute("DELETE FROM entries WHERE seq = 4")
    db.commit()
    db.close()
    problems = verify_chain(SqliteJournalStore(path).read(), KEY)
    assert any(p.seq == 5 and "missing" in p.problem for p in problems)
    assert verify_chain(SqliteJournalStore(path).read(), b"other key") != []


class FlakyStore:
    """A store that fails its first ``failures`` writes (a journal server that is down)."""

    def __init__(self, inner: JournalStore, failures: int) -> None:
        self.inner = inner
        self.failures = failures

    def last(self) -> tuple[int, str] | None:
        return self.inner.last()

    def append(self, entries: Sequence[JournalEntry]) -> None:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("journal store unreachable")
        self.inner.append(entries)

    def read(self, request_id: str | None = None) -> list[JournalEntry]:
        return self.inner.read(request_id)

    def contains(self, entry: JournalEntry) -> bool:
        return self.inner.contains(entry)

    def close(self) -> None:
        self.inner.close()


async def test_a_failing_store_never_touches_the_call_and_the_gap_is_recorded(
    tmp_path: Path,
) -> None:
    store = FlakyStore(SqliteJournalStore(tmp_path / "j.sqlite3"), failures=3)
    journal = Journal(store, KEY, max_buffered=4, retry_interval=0.01)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    ids = [await answered_request(handler) for _ in range(5)]  # the calls all complete
    assert len(ids) == 5
    while not await asyncio.to_thread(journal.flush):
        pass  # each flush waits for one more write attempt (the store recovers after 3)
    entries = store.read()
    assert verify_chain(entries, KEY) == []
    assert journal.stats.failures >= 1
    gaps = [e for e in entries if e.kind == "gap"]
    assert len(gaps) == 1 and gaps[0].data["dropped"] == journal.stats.dropped > 0
    assert "unreachable" in gaps[0].data["reason"]
    assert len([e for e in entries if e.kind != "gap"]) == 10 - journal.stats.dropped
    await asyncio.to_thread(journal.close)


async def test_close_keeps_trying_a_failing_store_then_counts_what_is_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The store is back after 3 failed writes: closing waits for it and loses nothing.
    store = FlakyStore(SqliteJournalStore(tmp_path / "a.sqlite3"), failures=3)
    journal = Journal(store, KEY, retry_interval=0.01)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    await answered_request(handler)
    await asyncio.to_thread(journal.close, 10.0)
    assert (journal.stats.written, journal.stats.dropped, store.failures) == (2, 0, 0)
    assert [e.kind for e in SqliteJournalStore(tmp_path / "a.sqlite3").read()] == [
        "opened",
        "settled",
    ]
    # The store stays down: closing gives up within its timeout, says so and counts them.
    down = FlakyStore(SqliteJournalStore(tmp_path / "b.sqlite3"), failures=10**9)
    journal = Journal(down, KEY, retry_interval=0.01)
    journal.start()
    handler = HumanInputHandler()
    journal.attach(handler)
    await answered_request(handler)
    await asyncio.to_thread(journal.close, 0.5)
    assert (journal.stats.written, journal.stats.dropped) == (0, 2)
    assert "journal closed with 2 entries not written" in caplog.text
    assert "unreachable" in caplog.text


@pytest.mark.parametrize("door", DOORS)
async def test_every_door_is_journaled_with_what_the_model_read(tmp_path: Path, door: str) -> None:
    human = human_tools()
    journal = Journal.open(tmp_path / "j.sqlite3", KEY)
    journal.attach(human.handler)
    rig = voice_rig(door, human)
    kit, voice, provider, observed = rig.kit, rig.voice, rig.provider, rig.observed
    session = await voice.start_session("room-1", participant_id="caller-7")
    provider.simulate_transcription(session, "move my money", role="user")
    reading = rig.driver.call(session, "AskUserQuestion", {"question": "How much?"})
    request = await observed.requests.get()
    human.handler.resolve(request.pending_id, "500", by="caller-7", via="speech")
    await reading
    await observed.reports.get()
    await flushed(journal)
    story = journal.store.read(request.pending_id)
    assert [e.kind for e in story] == ["opened", "notified", "settled", "delivered"]
    transcript = story[0].data["context"]["transcript"]
    assert transcript[-1]["text"] == "move my money"
    assert story[3].data["outcome"] == "ok" and story[3].data["text"] == "500"
    await kit.aclose()
    await asyncio.to_thread(journal.close)


async def test_journal_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    handler = HumanInputHandler()
    journal = Journal.open(path, KEY)
    journal.attach(handler)
    first = await answered_request(handler, "red")
    pending = await handler.create("ConfirmAction", {"action": "pay"}, room_id="r2")
    handler.reject(pending.pending_id, "no")
    await asyncio.to_thread(journal.close)
    capsys.readouterr()
    assert main(["journal", "list", "--journal", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "answered by ann via operator" in out[0]
    assert main(["journal", "list", "--journal", str(path), "--outcome", "rejected"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert pending.pending_id in line and "ConfirmAction" in line
    assert main(["journal", "show", first, "--journal", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "opened" in shown and "settled" in shown and '"red"' in shown
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", KEY.decode())
    assert main(["journal", "verify", "--journal", str(path)]) == 0
    assert "chain intact: 4 entries" in capsys.readouterr().out
    export = tmp_path / "out.jsonl"
    assert main(["journal", "export", "--journal", str(path), "--out", str(export)]) == 0
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    assert [r["seq"] for r in rows] == [1, 2, 3, 4]
    db = sqlite3.connect(path)
    db.execute("DELETE FROM entries WHERE seq = 2")
    db.commit()
    db.close()
    assert main(["journal", "verify", "--journal", str(path)]) == 1
    assert "missing" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["journal", "list", "--journal", "/nonexistent/j.sqlite3"], "no such file"),
        (["journal", "show", "nope", "--journal", "{db}"], "no request 'nope'"),
        (["journal", "verify", "--journal", "{db}"], "key is not set"),
        (["journal", "list", "--journal", "{junk}"], "junk.sqlite3: not a journal"),
        (["journal", "export", "--journal", "{db}", "--out", "/nonexistent/x"], "--out"),
    ],
)
async def test_journal_command_errors_are_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.delenv("VOICE_HITL_JOURNAL_KEY", raising=False)
    db = tmp_path / "j.sqlite3"
    store = SqliteJournalStore(db)
    store.last()  # creates the (empty) journal
    store.close()
    junk = tmp_path / "junk.sqlite3"
    junk.write_text("not a database")
    argv = [a.format(db=db, junk=junk) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
