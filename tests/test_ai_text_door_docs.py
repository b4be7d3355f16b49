"""The examples of docs/notes/issue-45-text-door.md run as printed (each in a fresh module)."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

NOTE = Path(__file__).resolve().parent.parent / "docs" / "notes" / "issue-45-text-door.md"
BLOCKS = [
    block
    for block in re.findall(r"```python\n(.*?)```", NOTE.read_text(), flags=re.DOTALL)
    if not block.startswith("# excerpt:")
]


def test_the_note_has_its_examples() -> None:
    assert len(BLOCKS) == 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs_as_printed(index: int) -> None:
    if "providers.anthropic" in BLOCKS[index]:
        pytest.importorskip("anthropic")
    module = types.ModuleType(f"note_example_{index}")
    code = compile(BLOCKS[index], f"{NOTE.name} example {index + 1}", "exec")
    exec(code, module.__dict__)  # each example asserts what it shows
