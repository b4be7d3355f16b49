"""``HumanInputHandler.wait`` when the answer comes later than one loop turn: a fairness check.

``bench_human_input.py`` times one blocked shape: the answer is ``call_soon``-ed just before
``wait()``, so it lands on the first loop turn after ``wait()`` blocks. An optimisation that only
helps that shape (an extra loop turn before blocking, say) would look good there and cost every
real call. This bench times the same round trip (``create``, schedule the answer, ``wait`` with
the handler's default timeout) for answers that arrive:

* ``hops=N``: N ``call_soon`` hops after ``wait()`` blocked (N = 1 is the main bench's shape);
* ``timer``: from a real loop timer (``call_later``), so the loop sleeps in its selector;
* ``settled``: before ``wait()`` is called (no blocking: the replay path);
* ``concurrent``: ``--width`` waits open at once, answered in a shuffled order.

``floor`` is the same round trip on a bare ``asyncio`` future with no handler: what the loop
itself costs for one hop. Times are CPU microseconds per round trip (``time.process_time``, gc off
while timing), the best of ``--repeats`` runs after a warm-up, best again over ``--rounds``
alternating worker processes.

``--against DIR`` also times another checkout of the code (a directory holding ``voice_hitl``,
e.g. ``git archive main voice_hitl | tar -x -C /tmp/base``) in the same run, its workers
alternating with ours, and prints the ratio (above 1: this tree is faster)::

    PYTHONPATH=$PWD .venv/bin/python bench/bench_wait_hops.py --against /tmp/base --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

CASES = ("floor", "settled", "hops=1", "hops=2", "hops=5", "timer", "concurrent")
TIMER_DELAY = 0.0002  # seconds before a timer answers (the loop sleeps in its selector)
ARGS: dict[str, Any] = {"question": "Transfer 200 EUR to Alice?"}

Trip = Callable[[int], Awaitable[None]]


def _hop(call_soon: Callable[..., Any], hops: int, fn: Callable[..., Any], *args: Any) -> None:
    """Run ``fn(*args)`` ``hops`` loop turns from now (this call is the first turn)."""
    if hops <= 1:
        fn(*args)
    else:
        call_soon(_hop, call_soon, hops - 1, fn, *args)


async def _trips(case: str, n: int, width: int) -> float:
    """CPU seconds for ``n`` round trips of ``case`` on a fresh handler."""
    from voice_hitl import HumanInputHandler

    loop = asyncio.get_running_loop()
    call_soon, call_later = loop.call_soon, loop.call_later
    handler = HumanInputHandler()
    create, resolve, wait = handler.create, handler.resolve, handler.wait
    start = time.process_time()
    if case == "floor":
        for _ in range(n):
            future = loop.create_future()
            call_soon(future.set_result, "yes")
            await future
    elif case == "settled":
        for _ in range(n):
            pid = (await create("AskUserQuestion", ARGS)).pending_id
            resolve(pid, "yes")
            await wait(pid)
    elif case.startswith("hops="):
        hops = int(case.removeprefix("hops="))
        for _ in range(n):
            pid = (await create("AskUserQuestion", ARGS)).pending_id
            call_soon(_hop, call_soon, hops, resolve, pid, "yes")
            await wait(pid)
    elif case == "timer":
        for _ in range(n):
            pid = (await create("AskUserQuestion", ARGS)).pending_id
            call_later(TIMER_DELAY, resolve, pid, "yes")
            await wait(pid)
    elif case == "concurrent":
        order = random.Random(7)
        for _ in range(n // width):
            ids = [(await create("AskUserQuestion", ARGS)).pending_id for _ in range(width)]
            waits = [asyncio.ensure_future(wait(pid)) for pid in ids]
            order.shuffle(ids)
            for pid in ids:
                call_soon(resolve, pid, "yes")
            await asyncio.gather(*waits)
        n = n // width * width
    else:
        raise ValueError(f"unknown case {case!r}")
    return (time.process_time() - start) / n


def measure(case: str, n: int, repeats: int, width: int) -> float:
    """Best CPU microseconds per round trip over ``repeats`` runs, after a warm-up run."""

    async def run() -> float:
        await _trips(case, max(n // 10, width), width)  # warm-up
        best = float("inf")
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            try:
                best = min(best, await _trips(case, n, width))
            finally:
                gc.enable()
        return best * 1e6

    return asyncio.run(run())


def _worker(python: str, tree: str, args: argparse.Namespace) -> dict[str, float]:
    cmd = [python, __file__, "--worker", "-n", str(args.n), "--repeats", str(args.repeats)]
    cmd += ["--width", str(args.width), "--timer-n", str(args.timer_n)]
    cmd += ["--cases", ",".join(args.cases)]
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def _all_cases(args: argparse.Namespace) -> dict[str, float]:
    return {
        case: measure(case, args.timer_n if case == "timer" else args.n, args.repeats, args.width)
        for case in args.cases
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=10_000, help="round trips a timed run")
    parser.add_argument("--timer-n", type=int, default=1_000, help="round trips, timer case")
    parser.add_argument("--width", type=int, default=100, help="open waits, concurrent case")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the best is kept")
    parser.add_argument("--rounds", type=int, default=3, help="alternating worker runs each")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the workers")
    parser.add_argument("--against", help="another checkout (directory holding voice_hitl)")
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated, of: {', '.join(CASES)}"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.cases = args.cases.split(",")
    if unknown := set(args.cases) - set(CASES):
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    if args.worker:
        print(json.dumps(_all_cases(args)))
        return 0

    ours_tree = str(Path(__file__).resolve().parent.parent)
    trees = {"ours": ours_tree} | ({"against": args.against} if args.against else {})
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(_worker(args.python, tree, args))
    best = {name: {c: min(r[c] for r in rs) for c in args.cases} for name, rs in runs.items()}
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version.split()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(
        f"wait() round trips on Python {version}: CPU us/trip, best of {args.repeats} runs x "
        f"{args.rounds} rounds; n={args.n:,} (timer: {args.timer_n:,} at "
        f"{TIMER_DELAY * 1e3:g} ms; concurrent: {args.width} open)"
    )
    print(f"ours: {ours_tree}" + (f"; against: {args.against}" if args.against else ""))
    header = f"{'case':<12}{'ours':>10}" + (f"{'against':>10}{'ratio':>9}" if args.against else "")
    print(header)
    print("-" * len(header))
    for case in args.cases:
        line = f"{case:<12}{best['ours'][case]:>10.2f}"
        if args.against:
            theirs = best["against"][case]
            line += f"{theirs:>10.2f}{theirs / best['ours'][case]:>8.2f}x"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
