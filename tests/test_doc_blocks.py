"""The other code blocks of README.md and the site: each says its language, and is valid in it.

``test_readme_examples`` runs the Python blocks. Here: every fenced block opens with a
language (``text`` for output), a ``json`` block parses, a ``bash`` block passes ``bash -n``,
an ``xml`` block parses, and the README's test command installs the extras ``.ci/run``
installs (the ``docs`` extra, which only the site's build needs, aside).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_readme_examples import ROOT, sources

FENCE = re.compile(r"^\s*```(?P<lang>\S*)\s*$")


@dataclass(frozen=True)
class Block:
    where: str
    lang: str
    code: str


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the language its opening fence names."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    opened: tuple[int, str] | None = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if not match:
            continue
        if opened is None:
            opened = (number, match.group("lang"))
            continue
        start, lang = opened
        code = "\n".join(text.strip("\n") for text in lines[start : number - 1])
        blocks.append(Block(f"{path.relative_to(ROOT)}:{start}", lang, code))
        opened = None
    assert opened is None, f"{path.relative_to(ROOT)}:{opened[0]}: a block is not closed"
    return blocks


BLOCKS = [block for path in sources() for block in read_blocks(path)]


def _of(lang: str) -> list[Block]:
    return [block for block in BLOCKS if block.lang == lang]


def test_every_block_names_its_language() -> None:
    assert len(BLOCKS) > 30
    bare = [block.where for block in BLOCKS if not block.lang]
    assert not bare, f"blocks without a language (use ```text for output): {bare}"


@pytest.mark.parametrize("block", _of("json"), ids=[b.where for b in _of("json")])
def test_json_block_parses(block: Block) -> None:
    json.loads(block.code)


@pytest.mark.parametrize("block", _of("xml"), ids=[b.where for b in _of("xml")])
def test_xml_block_parses(block: Block) -> None:
    ElementTree.fromstring(block.code.strip().encode())


@pytest.mark.parametrize("block", _of("bash"), ids=[b.where for b in _of("bash")])
def test_bash_block_parses(block: Block) -> None:
    bash = shutil.which("bash")
    assert bash, "bash is not installed"
    done = subprocess.run(
        [bash, "-n"], input=block.code, text=True, capture_output=True, timeout=30
    )
    assert done.returncode == 0, f"{block.where}: {done.stderr}"


def test_readme_test_command_installs_what_ci_installs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(
        r'pip install -q -e "\.\[(?P<extras>[^\]]+)\]" && \.venv/bin/python -m pytest', readme
    )
    assert len(commands) == 1, commands
    ci = re.search(r'^EXTRAS="(?P<extras>[^"]+)"$', (ROOT / ".ci" / "run").read_text(), re.M)
    assert ci is not None
    assert set(commands[0].split(",")) == set(ci.group("extras").split(",")) - {"docs"}
