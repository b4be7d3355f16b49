"""Every Python example in README.md and on the site (docs/) runs as written, or says it is an
excerpt.

The examples are the fenced ``python`` blocks of ``README.md`` and of every page under
``docs/`` (``docs/notes/``, the engineers' notes waiting to be folded into the site, excepted).
Each is one of:

- **runnable** (the default): it runs to the end, offline, in a fresh module in an empty
  working directory (``readme_runner.py``), and ruff finds no undefined name in it, function
  bodies included. A program's ``if __name__ == "__main__":`` part, the call that needs a real
  service (an API key, a Twilio number, a Janus or Redis server), is left out of the run.
- **a continuation**: its first line is ``# continues the example above``; it runs after the
  example above it in the same file, in the same module.
- **an excerpt**: its first line is ``# excerpt: needs <what>``; it must still be valid Python.
  Excerpts stay rare: at most a quarter of the examples.

A block fenced as ``py``, ``python3`` or ``pycon`` would escape all of this, so it is refused.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
NOTES = DOCS / "notes"
CONTINUES = "# continues the example above"
EXCERPT = re.compile(r"# excerpt: needs (?P<what>\S.*)")
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)```python\s*$")
FENCE_CLOSE = re.compile(r"^\s*```\s*$")
PYTHON_ALIAS = re.compile(r"^\s*```\s*(py|python3|pycon|Python)\b")


def sources() -> list[Path]:
    """README.md and the site's pages (not the notes under docs/notes/)."""
    pages = sorted(path for path in DOCS.rglob("*.md") if NOTES not in path.parents)
    return [ROOT / "README.md", *pages]


@dataclass(frozen=True)
class Example:
    file: str
    """The Markdown file, relative to the repository."""
    line: int
    """The file's line of the example's first line of code."""
    code: str
    needs: str | None
    """What an excerpt needs (None: the example runs)."""
    parts: tuple[tuple[int, str], ...]
    """What runs, in order: the example above it for a continuation, then itself."""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def read_examples(text: str, file: str = "README.md") -> list[Example]:
    """The ``python`` blocks of a Markdown text (indented ones in list items included).

    Raises:
        ValueError: A block is not closed, a continuation has no runnable example above it,
            or a block is fenced as ``py``/``python3``/``pycon``.
    """
    lines = text.splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        if PYTHON_ALIAS.match(lines[index]):
            raise ValueError(f"{file}:{index + 1}: fence Python examples as ```python")
        opened = FENCE_OPEN.match(lines[index])
        index += 1
        if not opened:
            continue
        start = index
        while index < len(lines) and not FENCE_CLOSE.match(lines[index]):
            index += 1
        if index == len(lines):
            raise ValueError(f"{file}:{start}: the python block is not closed")
        code = textwrap.dedent("\n".join(lines[start:index])) + "\n"
        first = code.splitlines()[0].strip() if code.strip() else ""
        excerpt = EXCERPT.fullmatch(first)
        parts: tuple[tuple[int, str], ...] = ((start + 1, code),)
        if first == CONTINUES:
            if not examples or examples[-1].needs is not None:
                raise ValueError(f"{file}:{start + 1}: continues no runnable example")
            parts = examples[-1].parts + parts
        needs = excerpt.group("what") if excerpt else None
        examples.append(Example(file, start + 1, code, needs, parts))
        index += 1
    return examples


def read_all() -> list[Example]:
    found: list[Example] = []
    for path in sources():
        found += read_examples(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    return found


EXAMPLES = read_all()
RUNNABLE = [example for example in EXAMPLES if example.needs is None]
EXCERPTS = [example for example in EXAMPLES if example.needs is not None]


def _ids(examples: list[Example]) -> list[str]:
    return [example.where for example in examples]


def run_examples(work: Path) -> dict[str, str | None]:
    """Run every runnable example in one runner process (they share its imports)."""
    blocks, results = work / "blocks.json", work / "results.json"
    payload = [{"file": example.file, "parts": list(example.parts)} for example in RUNNABLE]
    blocks.write_text(json.dumps(payload), encoding="utf-8")
    command = [
        sys.executable,
        "-W",
        "error",
        # Pipecat imports the standard library's audioop (as in pyproject's filterwarnings).
        "-W",
        "ignore:'audioop' is deprecated:DeprecationWarning",
        str(ROOT / "tests" / "readme_runner.py"),
        str(blocks),
        str(results),
    ]
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, f"the runner failed:\n{done.stderr[-4000:]}"
    outcomes = json.loads(results.read_text(encoding="utf-8"))
    return {example.where: outcome for example, outcome in zip(RUNNABLE, outcomes, strict=True)}


def find_undefined_names(work: Path) -> dict[str, list[str]]:
    """ruff's undefined-name findings (F821) per runnable example, function bodies included."""
    for number, example in enumerate(RUNNABLE):
        (work / f"example_{number}.py").write_text(_source(example), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "F821",
            "--output-format",
            "concise",
            ".",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    found: dict[str, list[str]] = {example.where: [] for example in RUNNABLE}
    for row in done.stdout.splitlines():
        matched = re.match(r"example_(\d+)\.py:(\d+):\d+: (.*)", row)
        if matched:
            example = RUNNABLE[int(matched.group(1))]
            found[example.where].append(f"{example.file}:{matched.group(2)}: {matched.group(3)}")
    return found


def _source(example: Example) -> str:
    """The example's parts as one file, each part on its Markdown lines."""
    source, written = "", 0
    for line, code in example.parts:
        source += "\n" * (line - 1 - written) + code
        written = line - 1 + code.count("\n")
    return source


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.mark.timeout(300)
def test_every_example_runs_as_written(tmp_path: Path) -> None:
    # One test, one runner process: the examples share its imports (about 5 s of CPU).
    (tmp_path / "run").mkdir()
    (tmp_path / "ruff").mkdir()
    outcomes = run_examples(tmp_path / "run")
    undefined = find_undefined_names(tmp_path / "ruff")
    hint = "make it run as written, or mark it with a first line '# excerpt: needs <what>'"
    failures = [
        f"{where} fails:\n{failure}" for where, failure in outcomes.items() if failure
    ] + [f"{where} uses undefined names:\n" + "\n".join(names)
         for where, names in undefined.items() if names]  # fmt: skip
    assert not failures, f"{len(failures)} example(s) ({hint}):\n\n" + "\n\n".join(failures)
    assert len(outcomes) == len(RUNNABLE) >= 10


@pytest.mark.parametrize("example", EXCERPTS, ids=_ids(EXCERPTS))
def test_excerpt_is_valid_python(example: Example) -> None:
    ast.parse(example.code, example.where)


def test_excerpts_are_rare() -> None:
    assert EXAMPLES, "no python examples: is the fence still ```python?"
    assert len(EXCERPTS) <= len(EXAMPLES) // 4, [example.where for example in EXCERPTS]


def test_the_site_and_the_readme_are_read() -> None:
    files = {example.file for example in EXAMPLES}
    assert "README.md" in files
    assert any(name.startswith("docs/") for name in files), files
    assert not any(name.startswith("docs/notes/") for name in files), files


def test_reader_sorts_the_three_kinds() -> None:
    text = (
        "```python\nx = 1\n```\n"
        "- item\n\n  ```python\n  # continues the example above\n  print(x)\n  ```\n"
        "```python\n# excerpt: needs a server\nawait f()\n```\n"
    )
    first, second, third = read_examples(text, "docs/page.md")
    assert (first.needs, second.needs, third.needs) == (None, None, "a server")
    assert second.parts == ((2, "x = 1\n"), (7, "# continues the example above\nprint(x)\n"))
    assert third.where == "docs/page.md:11"
    with pytest.raises(ValueError, match="not closed"):
        read_examples("```python\nx = 1\n")
    with pytest.raises(ValueError, match="continues no runnable example"):
        read_examples("```python\n# continues the example above\n```\n")
    with pytest.raises(ValueError, match=r"page.md:2: fence Python examples as ```python"):
        read_examples("text\n```py\nx = 1\n```\n", "page.md")
