"""What ``import voice_hitl`` pulls in: heavy parts load on first use, not at import.

Each check runs a fresh interpreter and reads ``sys.modules`` after the import: no timing here
(``bench/bench_import.py`` measures). Heavy means numpy, pydantic, jsonschema, soundfile,
websockets, httpx and the ``voice_hitl.speech`` package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = (
    "numpy",
    "pydantic",
    "jsonschema",
    "soundfile",
    "websockets",
    "httpx",
    "voice_hitl.speech",
)


def _loaded_after(code: str) -> list[str]:
    """The heavy modules in ``sys.modules`` once ``code`` ran in a fresh interpreter."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_import_voice_hitl_loads_nothing_heavy() -> None:
    assert _loaded_after("import voice_hitl") == []


def test_a_text_agent_and_the_primitive_do_not_load_audio() -> None:
    loaded = _loaded_after("from voice_hitl import HumanInputHandler, AIChannel")
    assert "numpy" not in loaded
    assert "soundfile" not in loaded
    # the primitive alone is plain Python
    assert _loaded_after("from voice_hitl import HumanInputHandler") == []


@pytest.mark.parametrize("argv", [["--help"], ["pending", "--help"], ["answer", "--help"]])
def test_the_command_line_help_does_not_load_numpy(argv: list[str]) -> None:
    code = (
        "import contextlib, io\n"
        "from voice_hitl._cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})"
    )
    loaded = _loaded_after(code)
    assert "numpy" not in loaded
    assert "soundfile" not in loaded


def test_every_public_name_still_imports() -> None:
    """The lazy names resolve, show the public module, and ``dir`` lists them."""
    code = (
        "import voice_hitl\n"
        "missing = [n for n in voice_hitl.__all__ if not hasattr(voice_hitl, n)]\n"
        "assert not missing, missing\n"
        "assert set(voice_hitl.__all__) <= set(dir(voice_hitl))\n"
        "assert voice_hitl.ToolGate.__module__ == 'voice_hitl', voice_hitl.ToolGate.__module__\n"
        "from voice_hitl import *\n"
        "try:\n"
        "    voice_hitl.NoSuchName\n"
        "except AttributeError as exc:\n"
        "    assert 'NoSuchName' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
    )
    _loaded_after(code)
