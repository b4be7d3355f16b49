"""Import cost: what ``import voice_hitl`` (and a few first uses) take, and what they load.

For each statement, a fresh interpreter runs it ``--runs`` times:
* ``importtime``: the cumulative time ``python -X importtime`` gives the statement's imports
  (the sum over the top-level modules it imported, interpreter start-up excluded);
* ``wall``: the process's wall time minus that of ``python -c pass`` (best of the same runs);
* ``cpu``: the process's CPU time (user + system) minus that of ``python -c pass``: the figure
  that moves least when other work loads the machine;
* the heavy modules in ``sys.modules`` afterwards (numpy, pydantic, jsonschema, soundfile,
  websockets, httpx, voice_hitl.speech) and how many ``voice_hitl`` modules were loaded.
Best and median are printed; the best is the figure to compare (the machine's other load only
ever adds). Target: ``import voice_hitl`` under 150 ms on an idle machine, without numpy.

Run: ``python bench/bench_import.py [--runs 15] [--root PATH]`` (``--root``: the checkout to
measure, e.g. an older one unpacked with ``git archive``; default: this one).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

STATEMENTS = (
    "import voice_hitl",
    "from voice_hitl import HumanInputHandler",
    "from voice_hitl import HumanInputHandler, AIChannel",
    "from voice_hitl import RealtimeVoiceChannel",
    "from voice_hitl._cli import build_parser; build_parser()",
)
HEAVY = (
    "numpy",
    "pydantic",
    "jsonschema",
    "soundfile",
    "websockets",
    "httpx",
    "voice_hitl.speech",
)
_REPORT = (
    "\nimport json, sys\n"
    f"print(json.dumps([[m for m in {HEAVY!r} if m in sys.modules], "
    "sum(1 for m in sys.modules if m.startswith('voice_hitl'))]))"
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(code: str, root: Path, *, importtime: bool) -> tuple[float, float, str, str]:
    """Wall seconds, CPU seconds, stdout and stderr of ``python -c code``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", code]
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=root, check=True)
    return time.perf_counter() - start, _children_cpu() - cpu, done.stdout, done.stderr


def _importtime_us(stderr: str, before: set[str]) -> int:
    """Cumulative microseconds of the top-level imports not already made by start-up.

    ``-X importtime`` lines read ``import time: SELF | CUMULATIVE | NAME``, NAME indented by
    two spaces per nesting level.
    """
    total = 0
    for line in stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _, cumulative, raw = line[len("import time:") :].split("|")
        name = raw.strip()
        nested = len(raw) - len(raw.lstrip(" ")) > 1
        if cumulative.strip().isdigit() and not nested and name not in before:
            total += int(cumulative)
    return total


def measure(
    statement: str, root: Path, runs: int, startup: tuple[float, float]
) -> dict[str, object]:
    *_, base_err = _run("pass", root, importtime=True)
    before = {
        line.rsplit("|", 1)[1].strip() for line in base_err.splitlines() if line.count("|") == 2
    }
    times: list[float] = []
    walls: list[float] = []
    cpus: list[float] = []
    loaded: list[str] = []
    count = 0
    for _ in range(runs):
        *_, err = _run(statement, root, importtime=True)
        times.append(_importtime_us(err, before) / 1000)
        wall, cpu, out, _ = _run(statement + _REPORT, root, importtime=False)
        walls.append(max(0.0, wall - startup[0]) * 1000)
        cpus.append(max(0.0, cpu - startup[1]) * 1000)
        loaded, count = json.loads(out.strip().splitlines()[-1])
    return {
        "statement": statement,
        "importtime_best_ms": round(min(times), 1),
        "importtime_median_ms": round(statistics.median(times), 1),
        "wall_best_ms": round(min(walls), 1),
        "wall_median_ms": round(statistics.median(walls), 1),
        "cpu_best_ms": round(min(cpus), 1),
        "cpu_median_ms": round(statistics.median(cpus), 1),
        "heavy": loaded,
        "voice_hitl_modules": count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--json", action="store_true", help="one JSON line per statement")
    args = parser.parse_args()
    root = args.root.resolve()
    runs = [_run("pass", root, importtime=False) for _ in range(args.runs)]
    startup = (min(r[0] for r in runs), min(r[1] for r in runs))
    print(
        f"{root}: interpreter start-up {startup[0] * 1000:.1f} ms wall, "
        f"{startup[1] * 1000:.1f} ms CPU (best of {args.runs})"
    )
    for statement in STATEMENTS:
        try:
            row = measure(statement, root, args.runs, startup)
        except subprocess.CalledProcessError as exc:
            print(f"{statement}: fails here ({exc.stderr.strip().splitlines()[-1]})")
            continue
        if args.json:
            print(json.dumps(row))
            continue
        print(
            f"{statement}\n"
            f"    importtime best {row['importtime_best_ms']} ms, median "
            f"{row['importtime_median_ms']} ms; wall best {row['wall_best_ms']} ms, median "
            f"{row['wall_median_ms']} ms; CPU best {row['cpu_best_ms']} ms, median "
            f"{row['cpu_median_ms']} ms; {row['voice_hitl_modules']} voice_hitl modules; "
            f"heavy: {row['heavy'] or 'none'}"
        )


if __name__ == "__main__":
    main()
