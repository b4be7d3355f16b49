"""A request's story over the operator API (``GET /v1/requests/{id}/story``), the board events
``voice-hitl serve`` journals, and the journal options of ``serve``."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from service_rig import ANN, BOB, ask_colour, rig

from voice_hitl.board import BoardOpened, BoardSettled, BoardStatus, MemoryBoard
from voice_hitl.journal import Journal, SqliteJournalStore, verify_chain
from voice_hitl.service._story import board_entry, journal_key

KEY = b"story-key"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_story_of_an_answered_request(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path / "j.sqlite3", KEY)
    async with rig(journal=journal) as r:
        request_id = await ask_colour(r.bridge)
        response = await r.client.post(
            f"/v1/requests/{request_id}/answer", json={"answer": "red"}, headers=auth(ANN)
        )
        assert response.status_code == 200
        assert await r.handler.wait(request_id) is not None
        assert await asyncio.to_thread(journal.flush)
        response = await r.client.get(f"/v1/requests/{request_id}/story", headers=auth(ANN))
        assert response.status_code == 200
        body = response.json()
        assert body["id"] == request_id
        kinds = [e["kind"] for e in body["entries"]]
        assert kinds[0] == "opened" and "settled" in kinds
        opened = body["entries"][0]["data"]
        assert opened["room"] == "room-7"
        assert opened["context"]["transcript"][0]["text"] == "paint it"
        settled = next(e for e in body["entries"] if e["kind"] == "settled")["data"]
        assert (settled["outcome"], settled["by"], settled["via"]) == ("answered", "ann", "api")
        # outside Bob's rooms; unknown ids; no token
        assert (
            await r.client.get(f"/v1/requests/{request_id}/story", headers=auth(BOB))
        ).status_code == 404
        missing = await r.client.get("/v1/requests/nope/story", headers=auth(ANN))
        assert missing.status_code == 404 and "no request 'nope'" in missing.text
        assert (await r.client.get(f"/v1/requests/{request_id}/story")).status_code == 401
    await asyncio.to_thread(journal.close)
    assert verify_chain(SqliteJournalStore(tmp_path / "j.sqlite3").read(), KEY) == []


async def test_without_a_journal_the_story_is_a_clear_404() -> None:
    async with rig() as r:
        request_id = await ask_colour(r.bridge)
        response = await r.client.get(f"/v1/requests/{request_id}/story", headers=auth(ANN))
        assert response.status_code == 404
        assert "keeps no journal" in response.json()["error"]["message"]
        r.handler.release(request_id)


async def test_board_events_become_board_entries() -> None:
    board = MemoryBoard()
    async with rig(board=board) as r:
        request_id = await ask_colour(r.bridge)
        request = await board.get(request_id)
        assert request is not None
        rid, posted = board_entry(BoardOpened(request))
        assert rid == request_id and posted["event"] == "posted"
        assert posted["room"] == "room-7" and posted["worker"] == "w-test"
        settled = request.settled(
            BoardStatus.ANSWERED, '{"answer": "red"}', 1.0, by="ann", via="cli"
        )
        _, data = board_entry(BoardSettled(settled))
        assert (data["event"], data["by"], data["via"]) == ("answered", "ann", "cli")
        r.handler.release(request_id)


def test_serve_keeps_its_journal_key_beside_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOICE_HITL_JOURNAL_KEY", raising=False)
    path = tmp_path / "data" / "journal.sqlite3"
    key = journal_key(path)
    key_file = path.with_name("journal.sqlite3.key")
    assert len(key) == 64 and key_file.read_text().strip().encode() == key
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert journal_key(path) == key  # the same key next time
    with pytest.raises(ValueError, match="needs its chain key"):
        journal_key(None)
    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", "from-env")
    assert journal_key(None) == b"from-env"


def test_serve_opens_the_journal_its_options_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redis_url: str, redis_prefix: str
) -> None:
    from voice_hitl.service._serve import _open_journal

    monkeypatch.setenv("VOICE_HITL_JOURNAL_KEY", "k")
    options = {"no_journal": False, "journal_redis": False, "prefix": redis_prefix}
    off, named = _open_journal(SimpleNamespace(**{**options, "no_journal": True}), redis_url)
    assert off is None and named == "off"
    file_args = SimpleNamespace(**options, journal=str(tmp_path / "j.sqlite3"))
    journal, named = _open_journal(file_args, redis_url)
    assert journal is not None and named.endswith("j.sqlite3")
    journal.close()
    redis_args = SimpleNamespace(**{**options, "journal_redis": True})
    journal, named = _open_journal(redis_args, redis_url)
    assert journal is not None and f"{redis_prefix}journal" in named
    journal.record("r1", "board", {"event": "posted"})
    assert journal.flush()
    journal.close()
