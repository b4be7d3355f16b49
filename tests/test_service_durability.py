"""``voice-hitl serve --journal-durability sync``: an operator's answer is stored in the
service's journal before the call can take it; ``fast`` (the default) does not wait."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from service_rig import ANN, TOKENS, ask_colour, operator_client

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.journal import Journal, JournalEntry, SqliteJournalStore
from voice_hitl.service import create_app

KEY = b"durability-key"


class GatedStore(SqliteJournalStore):
    """A SQLite journal whose writes wait while ``gate`` is clear (a slow or stuck disk);
    ``writing`` is set when a write is waiting."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.gate = threading.Event()
        self.writing = threading.Event()

    def append(self, entries: Sequence[JournalEntry]) -> None:
        self.writing.set()
        self.gate.wait(30)
        super().append(entries)


@dataclass
class Site:
    store: GatedStore
    handler: HumanInputHandler
    bridge: BoardBridge
    board: MemoryBoard
    client: httpx.AsyncClient


@contextlib.asynccontextmanager
async def service(tmp_path: Path, **journal_options: Any) -> AsyncIterator[Site]:
    """A worker and the service on a MemoryBoard; the service journals into a GatedStore
    (closed gate) with ``journal_options``."""
    store = GatedStore(tmp_path / "j.sqlite3")
    journal = Journal(store, KEY, **journal_options)
    journal.start()
    board = MemoryBoard()
    handler = HumanInputHandler()
    app = create_app(board, TOKENS, journal=journal)
    try:
        async with (
            BoardBridge(handler, board, worker_id="w-sync") as bridge,
            operator_client(app, ANN) as client,
        ):
            yield Site(store, handler, bridge, board, client)
            await handler.close()
    finally:
        store.gate.set()
        await asyncio.to_thread(journal.close)


async def test_sync_stores_the_answer_before_the_call_can_take_it(tmp_path: Path) -> None:
    async with service(tmp_path, durability="sync") as s:
        rid = await ask_colour(s.bridge)
        answering = asyncio.create_task(
            s.client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"})
        )
        assert await asyncio.to_thread(s.store.writing.wait, 10)
        # The decision waits for the disk: nothing is claimed, the call has nothing yet.
        record = await s.board.get(rid)
        assert record is not None and record.is_open and record.claim is None
        pending = s.handler.get(rid)
        assert pending is not None and pending.status == "pending"
        s.store.gate.set()
        response = await answering
        assert response.status_code == 200, response.json()
        assert await s.handler.wait(rid) is not None
        decided = next(e for e in s.store.read(rid) if e.data.get("event") == "decided")
        assert (decided.data["status"], decided.data["by"]) == ("answered", "ann")


async def test_sync_refuses_an_answer_the_journal_cannot_store(tmp_path: Path) -> None:
    async with service(tmp_path, durability="sync", sync_timeout=0.2) as s:
        rid = await ask_colour(s.bridge)
        response = await s.client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"})
        assert response.status_code == 503
        error = response.json()["error"]
        assert error["code"] == "not_recorded" and "not sent" in error["message"]
        record = await s.board.get(rid)
        assert record is not None and record.is_open and record.claim is None
        pending = s.handler.get(rid)
        assert pending is not None and pending.status == "pending"


async def test_fast_does_not_wait_for_the_journal(tmp_path: Path) -> None:
    async with service(tmp_path) as s:
        rid = await ask_colour(s.bridge)
        response = await s.client.post(f"/v1/requests/{rid}/answer", json={"answer": "red"})
        assert response.status_code == 200
        assert await s.handler.wait(rid) is not None


def test_serve_opens_the_journal_with_the_durability_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voice_hitl.service._serve import _open_journal

    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", "k")
    options = {"no_journal": False, "journal_redis": False, "prefix": "p:"}
    for durability, synchronous in (("fast", "NORMAL"), ("sync", "FULL")):
        path = tmp_path / f"{durability}.sqlite3"
        args = SimpleNamespace(**options, journal=str(path), journal_durability=durability)
        journal, named = _open_journal(args, "redis://127.0.0.1:1/0")
        assert journal is not None and journal.durability == durability
        assert isinstance(journal.store, SqliteJournalStore)
        assert journal.store._synchronous == synchronous
        assert named == (str(path) if durability == "fast" else f"{path} (sync)")
        journal.close()
    no_journal = SimpleNamespace(**{**options, "no_journal": True}, journal_durability="sync")
    with pytest.raises(ValueError, match="needs a journal"):
        _open_journal(no_journal, "redis://127.0.0.1:1/0")


def test_the_serve_help_names_the_durability_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from voice_hitl._cli import main

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "--journal-durability {fast,sync}" in out
    with pytest.raises(SystemExit):
        main(["serve", "--journal-durability", "always"])
    assert "invalid choice: 'always'" in capsys.readouterr().err
