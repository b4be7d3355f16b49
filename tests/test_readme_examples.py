"""Every Python example in README.md runs as written, or says it is an excerpt.

Each fenced ``python`` block is one example, and one of:

- **runnable** (the default): it runs to the end, offline, in a fresh module in an empty
  working directory (``readme_runner.py``), and ruff finds no undefined name in it, function
  bodies included. A program's ``if __name__ == "__main__":`` part, the call that needs a real
  service (an API key, a Twilio number, a Janus or Redis server), is left out of the run.
- **a continuation**: its first line is ``# continues the example above``; it runs after the
  example above it, in the same module.
- **an excerpt**: its first line is ``# excerpt: needs <what>``; it must still be valid Python.
  Excerpts stay rare: at most a quarter of the examples.
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
README = ROOT / "README.md"
CONTINUES = "# continues the example above"
EXCERPT = re.compile(r"# excerpt: needs (?P<what>\S.*)")
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)```python\s*$")
FENCE_CLOSE = re.compile(r"^\s*```\s*$")


@dataclass(frozen=True)
class Example:
    line: int
    """The README line of the example's first line of code."""
    code: str
    needs: str | None
    """What an excerpt needs (None: the example runs)."""
    parts: tuple[tuple[int, str], ...]
    """What runs, in order: the example above it for a continuation, then itself."""


def read_examples(text: str) -> list[Example]:
    """The ``python`` blocks of a Markdown text (indented ones in list items included).

    Raises:
        ValueError: A block is not closed, or a continuation has no runnable example above it.
    """
    lines = text.splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        opened = FENCE_OPEN.match(lines[index])
        index += 1
        if not opened:
            continue
        start = index
        while index < len(lines) and not FENCE_CLOSE.match(lines[index]):
            index += 1
        if index == len(lines):
            raise ValueError(f"README.md:{start}: the python block is not closed")
        code = textwrap.dedent("\n".join(lines[start:index])) + "\n"
        first = code.splitlines()[0].strip() if code.strip() else ""
        excerpt = EXCERPT.fullmatch(first)
        parts: tuple[tuple[int, str], ...] = ((start + 1, code),)
        if first == CONTINUES:
            if not examples or examples[-1].needs is not None:
                raise ValueError(f"README.md:{start + 1}: continues no runnable example")
            parts = examples[-1].parts + parts
        examples.append(Example(start + 1, code, excerpt.group("what") if excerpt else None, parts))
        index += 1
    return examples


EXAMPLES = read_examples(README.read_text(encoding="utf-8"))
RUNNABLE = [example for example in EXAMPLES if example.needs is None]
EXCERPTS = [example for example in EXAMPLES if example.needs is not None]


def _ids(examples: list[Example]) -> list[str]:
    return [f"README.md:{example.line}" for example in examples]


def run_examples(work: Path) -> dict[int, str | None]:
    """Run every runnable example in one runner process (they share its imports)."""
    blocks, results = work / "blocks.json", work / "results.json"
    blocks.write_text(json.dumps([list(example.parts) for example in RUNNABLE]), encoding="utf-8")
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
        str(README),
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
    return {example.line: outcome for example, outcome in zip(RUNNABLE, outcomes, strict=True)}


def find_undefined_names(work: Path) -> dict[int, list[str]]:
    """ruff's undefined-name findings (F821) per runnable example, function bodies included."""
    for example in RUNNABLE:
        (work / f"example_{example.line}.py").write_text(_source(example), encoding="utf-8")
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
    found: dict[int, list[str]] = {example.line: [] for example in RUNNABLE}
    for row in done.stdout.splitlines():
        matched = re.match(r"example_(\d+)\.py:(\d+):\d+: (.*)", row)
        if matched:
            found[int(matched.group(1))].append(f"README.md:{matched.group(2)}: {matched.group(3)}")
    return found


def _source(example: Example) -> str:
    """The example's parts as one file, each part on its README lines."""
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
        f"README.md:{line} fails:\n{failure}" for line, failure in outcomes.items() if failure
    ] + [f"README.md:{line} uses undefined names:\n" + "\n".join(names)
         for line, names in undefined.items() if names]  # fmt: skip
    assert not failures, f"{len(failures)} README example(s) ({hint}):\n\n" + "\n\n".join(failures)
    assert len(outcomes) == len(RUNNABLE) >= 10


@pytest.mark.parametrize("example", EXCERPTS, ids=_ids(EXCERPTS))
def test_excerpt_is_valid_python(example: Example) -> None:
    ast.parse(example.code, f"README.md:{example.line}")


def test_excerpts_are_rare() -> None:
    assert EXAMPLES, "README.md has no python examples: is the fence still ```python?"
    assert len(EXCERPTS) <= len(EXAMPLES) // 4, [f"README.md:{e.line}" for e in EXCERPTS]


def test_reader_sorts_the_three_kinds() -> None:
    text = (
        "```python\nx = 1\n```\n"
        "- item\n\n  ```python\n  # continues the example above\n  print(x)\n  ```\n"
        "```python\n# excerpt: needs a server\nawait f()\n```\n"
    )
    first, second, third = read_examples(text)
    assert (first.needs, second.needs, third.needs) == (None, None, "a server")
    assert second.parts == ((2, "x = 1\n"), (7, "# continues the example above\nprint(x)\n"))
    with pytest.raises(ValueError, match="not closed"):
        read_examples("```python\nx = 1\n")
    with pytest.raises(ValueError, match="continues no runnable example"):
        read_examples("```python\n# continues the example above\n```\n")
