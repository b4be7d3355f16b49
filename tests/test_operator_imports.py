"""``import voice_hitl`` stays free of the operator service's heavy dependencies."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("redis", "starlette", "uvicorn", "httpx", "voice_hitl.service", "voice_hitl.board")


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    return set(out.stdout.split())


def test_import_voice_hitl_imports_no_board_no_service() -> None:
    loaded = _loaded_after("import voice_hitl")
    assert not {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY}


def test_the_board_package_needs_no_redis_until_redis_board_is_used() -> None:
    loaded = _loaded_after("import voice_hitl.board")
    assert "redis" not in loaded and "starlette" not in loaded


def test_the_service_package_needs_no_http_client_until_webhooks_start() -> None:
    # The `voice-hitl` command imports it for every sub-command, core installs included.
    loaded = _loaded_after("import voice_hitl.service")
    assert not {"httpx", "starlette", "uvicorn"} & loaded
