"""Operators files and tokens: each mistake named, scopes kept, and ``serve``'s one-line errors."""

from __future__ import annotations

import hashlib
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from redis_rig import free_port

from voice_hitl.board import BoardRequest
from voice_hitl.service import (
    OPERATORS_ENV,
    OperatorDesk,
    OperatorsError,
    UnauthorizedError,
    load_operators,
    parse_operators,
)


def test_tokens_in_clear_or_as_digests_and_scopes() -> None:
    digest = hashlib.sha256(b"tom-secret-token").hexdigest()
    operators = parse_operators(
        json.dumps(
            {
                "operators": [
                    {"name": "maria", "token": "maria-secret-token"},
                    {
                        "name": "tom",
                        "token_sha256": digest,
                        "rooms": ["sales"],
                        "channels": ["phone"],
                    },
                ]
            }
        ),
        "test",
    )
    maria, tom = operators.find("maria-secret-token"), operators.find("tom-secret-token")
    assert maria is not None and tom is not None and operators.find("nope") is None
    request = BoardRequest("x", "AskUserQuestion", {}, "w", 0.0, room="sales", channel="phone")
    elsewhere = BoardRequest("y", "AskUserQuestion", {}, "w", 0.0, room="ops", channel="phone")
    assert maria.may_see(request) and maria.may_see(elsewhere)
    assert tom.may_see(request) and not tom.may_see(elsewhere)
    desk = OperatorDesk(board=None, operators=operators)  # type: ignore[arg-type]
    assert desk.authenticate("Bearer tom-secret-token") == tom
    assert desk.authenticate("tom-secret-token") == tom
    for bad in (None, "", "Bearer", "Basic tom-secret-token", "Bearer wrong"):
        with pytest.raises(UnauthorizedError):
            desk.authenticate(bad)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{nope", "is not JSON"),
        ("{}", 'needs {"operators": [...]}'),
        ('{"operators": [1]}', "operator #1 must be an object"),
        ('{"operators": [{"token": "long-enough"}]}', "needs a non-empty 'name'"),
        ('{"operators": [{"name": "a", "token": "short"}]}', "8 or more characters"),
        ('{"operators": [{"name": "a", "token": "long-enough", "rooms": "x"}]}', "'rooms'"),
        (
            json.dumps(
                {"operators": [{"name": n, "token": "same-token"} for n in ("a", "b")]}
            ),
            "reuses",
        ),
    ],
)
def test_operators_file_mistakes_are_named(text: str, says: str) -> None:
    with pytest.raises(OperatorsError, match=None) as error:
        parse_operators(text, "ops.json")
    assert says in str(error.value)


def test_operators_come_from_a_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(OPERATORS_ENV, raising=False)
    with pytest.raises(OperatorsError, match="no token, no data"):
        load_operators()
    with pytest.raises(OperatorsError, match="cannot read operators file"):
        load_operators(tmp_path / "missing.json")
    monkeypatch.setenv(OPERATORS_ENV, '{"operators": [{"name": "env", "token": "from-the-env"}]}')
    found = load_operators().find("from-the-env")
    assert found is not None and found.name == "env"


def test_serve_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    cli = "from voice_hitl._cli import main; raise SystemExit(main())"
    bad = tmp_path / "ops.json"
    bad.write_text("{nope")
    result = subprocess.run(
        [sys.executable, "-c", cli, "serve", "--operators", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("voice-hitl: ") and result.stderr.count("\n") == 1
    good = tmp_path / "good.json"
    good.write_text('{"operators": [{"name": "a", "token": "long-enough"}]}')
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    result = subprocess.run(
        [sys.executable, "-c", cli, "serve", "--operators", str(good), "--redis", nowhere],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 7
    assert "unreachable" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("package", ["voice_hitl.board", "voice_hitl.service"])
def test_board_and_service_exports_show_their_public_module(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, type) or callable(obj):
            assert not obj.__module__.startswith(f"{package}._"), f"{package}.{name}"
