"""The per-speaker examples of docs/guides/conference-janus.md run: the in-memory one as
written, and the Janus example (``seats=8``) against a Janus of its own,
its OpenAI provider swapped for the mock one (no network)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import types
from pathlib import Path

import pytest
from janus_rig import janus  # noqa: F401

from conference import ConferenceRealtimeConfig
from conference.janus import LocalJanus
from providers.mock import MockRealtimeProvider

NOTES = Path(__file__).resolve().parent.parent / "docs" / "guides" / "conference-janus.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", NOTES.read_text(encoding="utf-8"), re.S)


def run_module(code: str) -> tuple[types.ModuleType, str]:
    """Run ``code`` as a fresh module (not ``__main__``); its namespace and what it printed."""
    module = types.ModuleType("notes_example")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(NOTES), "exec"), module.__dict__)
    return module, out.getvalue()


async def test_the_in_memory_example_runs_as_written() -> None:
    (in_memory,) = [b for b in blocks() if "InMemoryConferenceBackend(" in b]
    _, printed = await asyncio.to_thread(run_module, in_memory)
    assert printed.strip() == "[('alice', 'confirm'), ('bob', 'confirm')]"


async def test_the_corrected_readme_example_runs_with_eight_seats(
    janus: LocalJanus,  # noqa: F811
) -> None:
    pytest.importorskip("faster_whisper", reason="the example hears with the 'speech' extra")
    (example,) = [b for b in blocks() if "JanusConferenceBackend(" in b]
    assert "seats=8" in example and example.startswith("# excerpt: needs a Janus server")
    module, _ = await asyncio.to_thread(run_module, example)
    module.config = ConferenceRealtimeConfig(MockRealtimeProvider())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        await module.main(janus.url, janus.room_secret)
    assert out.getvalue().strip() == "['Alice']"
