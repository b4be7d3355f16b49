"""Run the Python examples of the README and the site, one after another, in this process.

Used by ``test_readme_examples``. ``python readme_runner.py BLOCKS.json RESULTS.json``:
``BLOCKS.json`` is a list of examples, each ``{"file": PATH, "parts": [[line, code], ...]}``,
whose parts run in order in one fresh module (an example that continues the one above it has
two parts or more). Each example runs in its own empty working directory as a module named
``readme_example``, so a program's ``if __name__ == "__main__":`` part (the call that needs a
real service) is left out, and is stopped after ``BOUND_SECONDS`` of wall time (SIGALRM).
``RESULTS.json`` gets, per example, ``null`` when it ran, or the traceback. Tracebacks name
the Markdown file and its line numbers.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import traceback
import types
from typing import Any, NoReturn

BOUND_SECONDS = 60


class ExampleTimeout(Exception):
    """An example ran past ``BOUND_SECONDS``."""


def _alarm(signum: int, frame: Any) -> NoReturn:
    raise ExampleTimeout(f"the example ran for more than {BOUND_SECONDS} s")


def run_example(parts: list[tuple[int, str]], source: str) -> str | None:
    """Run one example's parts in a fresh module; return the traceback, or None."""
    module = types.ModuleType("readme_example")
    sys.modules["readme_example"] = module
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="readme-example-") as workdir:
        os.chdir(workdir)
        signal.alarm(BOUND_SECONDS)
        try:
            for line, code in parts:
                # Blank lines in front keep the file's line numbers in tracebacks.
                compiled = compile("\n" * (line - 1) + code, source, "exec")
                exec(compiled, module.__dict__)
        except BaseException:  # reported, whatever it is
            return traceback.format_exc()
        finally:
            signal.alarm(0)
            os.chdir(here)
            del sys.modules["readme_example"]
    return None


def main() -> None:
    blocks_path, results_path = sys.argv[1:3]
    with open(blocks_path, encoding="utf-8") as f:
        examples: list[dict[str, Any]] = json.load(f)
    signal.signal(signal.SIGALRM, _alarm)
    results = [run_example(example["parts"], example["file"]) for example in examples]
    with open(results_path, "w", encoding="utf-8") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
