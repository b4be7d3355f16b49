"""Demo figures: answer latency and the demo's wall time.

* Answer latency: from the end of the caller's answer (the endpointer's end-of-speech event,
  i.e. after its 500 ms of trailing silence) to the tool result, over the demo call's two
  answers, at real-time pace (``--speed 1``). Target: under 300 ms.
* CPU per second of call at real-time pace: process CPU time (every thread, plus worker
  processes that ended) over the call's length, start-up included. Target: <= 0.5 CPU-s/s,
  so one 2-core machine holds several calls.
* Wall time of the whole demo call as fast as possible (``--speed 0``).

Run: ``python bench/bench_demo.py [--runs 3] [--recognizer NAME]`` (the ``speech`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import time

from voice_hitl.demo._demo import run_demo


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


async def measure(runs: int, recognizer: str) -> None:
    latencies: list[float] = []
    loads: list[float] = []
    for _ in range(runs):
        cpu = _cpu_seconds()
        result = await run_demo(speed=1.0, printing=False, recognizer=recognizer)
        loads.append((_cpu_seconds() - cpu) / result.call_seconds)
        assert result.transfers == [500.0], result.transfers
        latencies.extend(result.answer_latencies)
    walls = []
    for _ in range(runs):
        result = await run_demo(speed=0.0, printing=False, recognizer=recognizer)
        assert result.transfers == [500.0], result.transfers
        walls.append((result.wall_seconds, result.call_seconds))
    ms = sorted(x * 1000 for x in latencies)
    print(f"answer -> tool result after the end-of-speech event ({len(ms)} answers, speed 1):")
    print(f"  p50 {statistics.median(ms):.0f} ms   max {ms[-1]:.0f} ms   target < 300 ms")
    print("  (the endpointer declares the end after 500 ms of quiet; recognition starts")
    print("   speculatively at the first 150 ms pause, so the answer is usually ready then)")
    print(f"CPU per second of call at speed 1 ({recognizer}): "
          f"{', '.join(f'{x:.2f}' for x in loads)} CPU-s/s   target <= 0.5")
    best = min(walls)
    print(f"demo wall time at --speed 0: best {best[0]:.2f} s for {best[1]:.1f} s of call")
    print(f"  (all runs: {', '.join(f'{w:.2f}s' for w, _ in walls)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--recognizer", default="whisper")
    args = parser.parse_args()
    asyncio.run(measure(args.runs, args.recognizer))


if __name__ == "__main__":
    main()
