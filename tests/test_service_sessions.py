"""Console sessions and operator tokens (issue 47, item 6): sign-in opens a server-side session
that sign-out ends (the token used to stay valid: GET /v1/me 200 after sign-out); tokens are
stored hashed, rotated and revoked from the CLI, and a running service rereads its file."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path

import httpx
import pytest

from voice_hitl._cli import main
from voice_hitl.board import MemoryBoard
from voice_hitl.service import Operators, create_app, load_operators
from voice_hitl.service._auth import watch_operators
from voice_hitl.service._sessions import Sessions


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def add(path: Path, name: str, *scope: str) -> str:
    code, out, err = cli("operators", "add", name, "--operators", str(path), *scope)
    assert code == 0, err
    return out.strip().splitlines()[-1]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_sign_out_ends_the_session_and_rotation_ends_the_token_and_its_sessions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "operators.json"
    ann, bob = add(path, "ann"), add(path, "bob", "--rooms", "room-b")
    stored = path.read_text()
    assert ann not in stored and bob not in stored  # only digests are kept
    assert (path.stat().st_mode & 0o777) == 0o600
    now = [1_000_000.0]
    app = create_app(
        MemoryBoard(), load_operators(path), sessions=Sessions(3600, clock=lambda: now[0])
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://service") as client:
        opened = await client.post("/v1/sessions", headers=bearer(ann))
        assert opened.status_code == 201, opened.text
        session = opened.json()["session"]
        assert session.startswith("vhs_") and opened.json()["operator"]["name"] == "ann"
        assert opened.headers["Cache-Control"] == "no-store"
        assert (await client.get("/v1/me", headers=bearer(session))).json()["name"] == "ann"
        # a session opens no other; an operator token cannot be "signed out"
        assert (await client.post("/v1/sessions", headers=bearer(session))).status_code == 401
        refused = await client.delete("/v1/sessions/current", headers=bearer(ann))
        assert refused.status_code == 422 and "rotate" in refused.text

        gone = await client.delete("/v1/sessions/current", headers=bearer(session))
        assert gone.status_code == 204
        after = await client.get("/v1/me", headers=bearer(session))
        assert after.status_code == 401 and "signed out" in after.json()["error"]["message"]
        assert (
            await client.delete("/v1/sessions/current", headers=bearer(session))
        ).status_code == 204
        assert (await client.get("/v1/me", headers=bearer(ann))).status_code == 200

        # expiry, on the sessions' clock
        session = (await client.post("/v1/sessions", headers=bearer(ann))).json()["session"]
        now[0] += 3600
        assert (await client.get("/v1/me", headers=bearer(session))).status_code == 401

        # rotation: the old token and the sessions it opened end; the new token works
        session = (await client.post("/v1/sessions", headers=bearer(bob))).json()["session"]
        bob_session = (await client.get("/v1/me", headers=bearer(session))).json()
        assert bob_session["rooms"] == ["room-b"]
        code, out, _ = cli("operators", "rotate", "bob", "--operators", str(path))
        new_bob = out.strip().splitlines()[-1]
        assert code == 0 and new_bob != bob
        app.state.desk.operators = load_operators(path)  # what the service's watcher does
        assert (await client.get("/v1/me", headers=bearer(bob))).status_code == 401
        ended = await client.get("/v1/me", headers=bearer(session))
        assert ended.status_code == 401 and "rotated or revoked" in ended.text
        assert (await client.get("/v1/me", headers=bearer(new_bob))).status_code == 200

        # revocation
        session = (await client.post("/v1/sessions", headers=bearer(new_bob))).json()["session"]
        assert cli("operators", "revoke", "bob", "--operators", str(path))[0] == 0
        app.state.desk.operators = load_operators(path)
        assert (await client.get("/v1/me", headers=bearer(new_bob))).status_code == 401
        assert (await client.get("/v1/me", headers=bearer(session))).status_code == 401


def test_tokens_in_clear_are_read_with_a_deprecation_and_migrated_in_place(
    tmp_path: Path,
) -> None:
    path = tmp_path / "operators.json"
    plain = {
        "operators": [
            {"name": "ann", "token": "ann-token-0001"},
            {"name": "cy", "token_sha256": "0" * 64},
        ]
    }
    path.write_text(json.dumps(plain))
    before = load_operators(path)
    assert before.plaintext == ("ann",) and before.find("ann-token-0001") is not None
    code, listing, _ = cli("operators", "list", "--operators", str(path))
    assert code == 0 and "ann  rooms *  channels *  token in clear (deprecated)" in listing
    code, out, _ = cli("operators", "migrate", "--operators", str(path))
    assert code == 0 and "ann" in out and "cy" not in out
    assert "ann-token-0001" not in path.read_text()
    after = load_operators(path)
    assert after.plaintext == () and after.find("ann-token-0001") is not None
    assert cli("operators", "migrate", "--operators", str(path))[1].startswith("no token")


def test_operators_commands_refuse_clearly(tmp_path: Path) -> None:
    path = tmp_path / "operators.json"
    code, _, err = cli("operators", "rotate", "ann", "--operators", str(path))
    assert code == 2 and "no operators file" in err
    add(path, "ann")
    code, _, err = cli("operators", "add", "ann", "--operators", str(path))
    assert code == 2 and "exists already" in err
    code, _, err = cli("operators", "revoke", "zed", "--operators", str(path))
    assert code == 2 and "no operator 'zed'" in err
    code, _, err = cli("operators", "revoke", "ann", "--operators", str(path))
    assert code == 2 and "last operator" in err
    path.write_text("{not json")
    code, _, err = cli("operators", "list", "--operators", str(path))
    assert code == 2 and "not JSON" in err


async def test_a_running_service_rereads_a_rotated_operators_file(tmp_path: Path) -> None:
    path = tmp_path / "operators.json"
    ann = add(path, "ann")
    applied: asyncio.Queue[Operators] = asyncio.Queue()
    watcher = asyncio.create_task(watch_operators(path, applied.put_nowait, interval=0.01))
    try:
        await asyncio.sleep(0)  # the watcher's first step: it notes the file as it is now
        cli("operators", "rotate", "ann", "--operators", str(path))
        operators = await applied.get()
        assert operators.find(ann) is None and len(operators) == 1
        path.write_text("{not json")  # a broken file keeps the operators in force
        path.write_text(json.dumps({"operators": [{"name": "x", "token": "long-enough"}]}))
        operators = await applied.get()
        assert operators.find("long-enough") is not None
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


@pytest.mark.parametrize("header", [None, "", "Basic abc", "Bearer ", "Bearer vhs_unknown"])
async def test_sign_in_and_out_refuse_what_is_not_a_token(header: str | None) -> None:
    app = create_app(MemoryBoard(), Operators.from_tokens({}))
    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": header} if header is not None else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://service") as client:
        assert (await client.post("/v1/sessions", headers=headers)).status_code == 401
        out = await client.delete("/v1/sessions/current", headers=headers)
        # a bare "Bearer" reads as a token named so: not a session, nothing to sign out
        expected = {"Bearer vhs_unknown": 204, "Bearer ": 422}.get(header or "", 401)
        assert out.status_code == expected
