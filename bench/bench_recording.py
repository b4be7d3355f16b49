"""What recording a call costs, and how fast and how repeatably a recorded call replays.

Run from the repository root (``nice -n 10`` on a shared machine)::

    PYTHONPATH=$PWD python bench/bench_recording.py [--seconds 30] [--replays 100]

The call: the user's agent of ``tests/record_rig.py`` (own tool handler, human-input tools,
hooks, responder) on the OpenAI Realtime test server, with ``--seconds`` of caller audio (20 ms
frames, pushed as fast as the session takes them), a tool call every second (``get_balance``),
the model speaking one second in every five (audio deltas), then the recorded keypad
confirmation and operator answer. Printed:

- recording overhead per call-second: process CPU (the writer thread's included) with and
  without a recorder, in ``--rounds`` alternating pairs in the same run (median and range of
  the difference); the flush delay (from a frame's tap to its flush to the OS: p50, p99, max;
  the bound the writer states is 250 ms); bytes written per minute of call; the tool-result
  path: the tap's own cost per frame (p50/p99) and the
  function-call-to-output latency at the server with and without a recorder (p50/p99 over
  ``--tool-calls`` calls, in separate calls without audio);
- wire and audio replay time of that call against the same agent;
- determinism: the call replayed ``--replays`` times, every replay the same as recorded, with
  identical stories.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from record_rig import FAST, Bank, caller_frame, drive_openai

from providers.openai_realtime import OpenAIRealtimeProvider
from providers.openai_realtime_testing import RealtimeTestServer
from voice_hitl.recording import CallRecorder, replay


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_call(
    root: Path | None, seconds: int, tool_calls: int = 0, *, paced: bool = False
) -> dict[str, Any]:
    """One call; returns CPU seconds, tool-result latencies and the recording's folder
    (``paced``: the caller's audio at the pace a phone line delivers it, 20 ms a frame)."""
    async with RealtimeTestServer() as server:
        url = f"{server.url}?call_id=rtc_sip_1"
        provider = OpenAIRealtimeProvider(api_key="sk-bench", url=url, reconnect=FAST)
        recorder = CallRecorder(root) if root is not None else None
        bank = Bank(provider)
        latencies: list[float] = []
        cpu = time.process_time()
        async with bank as voice:
            if recorder is not None:
                recorder.attach(voice)
            session = await voice.start_session("branch-7", participant_id="caller-1",
                                                session_id="bench-call")
            if recorder is not None:
                recorder.recordings[0].writer.flush_delays = []
            conn = await server.next_connection()
            await conn.expect("session.update")
            for second in range(seconds):
                for index in range(50):
                    bank.transport.push_caller_audio("bench-call", caller_frame(index))
                    if paced:
                        await asyncio.sleep(0.02)
                for _ in range(50):
                    await conn.expect("input_audio_buffer.append")
                if second % 5 == 0:
                    await conn.speak("Let me look that up for you.", samples=24_000)
                call = await conn.function_call("get_balance", {"account": f"acct-{second}"})
                await conn.expect_function_call_output(call)
                await bank.reports.get()
            for index in range(tool_calls):
                sent = time.perf_counter()
                call = await conn.function_call("get_balance", {"account": f"acct-{index}"})
                await conn.expect_function_call_output(call)
                latencies.append(time.perf_counter() - sent)
                await bank.reports.get()
            await drive_openai(conn, bank, session_id="bench-call", configured=True)
            await voice.end_session(session)
        if recorder is not None:
            await recorder.aclose()
        cpu = time.process_time() - cpu
    folder = recorder.folders[0] if recorder is not None else None
    delays = (recorder.recordings[0].writer.flush_delays or []) if recorder is not None else []
    return {"cpu": cpu, "latencies": latencies, "folder": folder, "flush_delays": delays}


def _sizes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in folder.iterdir()}


def _tap_cost(frames: int = 20_000) -> list[float]:
    """The tool-result path's added work: one ``wire`` tap (a queue put), timed per frame."""
    from voice_hitl.recording._call import CallRecording
    from voice_hitl.voice._provider import SessionConfig

    class _Provider:
        model = "bench"

    with tempfile.TemporaryDirectory() as scratch:
        recording = CallRecording(
            Path(scratch) / "tap",
            _Provider(),  # type: ignore[arg-type]
            SessionConfig(session_id="tap"),
            channel_facts={},
            human_input=None,
            redaction=None,
            max_bytes=1 << 30,
            max_frame_bytes=1 << 16,
        )
        recording._begin()
        frame = json.dumps({"type": "conversation.item.create", "item": {
            "type": "function_call_output", "call_id": "call_1", "output": "x" * 400}})
        costs = []
        for _ in range(frames):
            start = time.perf_counter_ns()
            recording.wire("out", 1, frame)
            costs.append((time.perf_counter_ns() - start) / 1e6)
        recording._finish(None)
    return costs


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--replays", type=int, default=100)
    parser.add_argument("--tool-calls", type=int, default=500, help="for the latency figures")
    parser.add_argument("--rounds", type=int, default=5, help="pairs without/with a recorder")
    parser.add_argument("--paced-seconds", type=int, default=20,
                        help="a call at a phone line's pace, for the flush delay")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        await run_call(None, 2)  # warm up (imports, the SDK's types)
        await run_call(Path(scratch) / "warm", 2)
        plains, recordeds, fast_delays = [], [], []
        for index in range(args.rounds):  # alternating, so load drifts hit both alike
            plain = await run_call(None, args.seconds)
            recorded = await run_call(Path(scratch) / f"round-{index}", args.seconds)
            plains.append(plain["cpu"])
            recordeds.append(recorded["cpu"])
            fast_delays += recorded["flush_delays"]
        paced = await run_call(Path(scratch) / "paced", args.paced_seconds, paced=True)
        latency = {
            "without": (await run_call(None, 0, args.tool_calls))["latencies"],
            "with": (await run_call(Path(scratch) / "latency", 0, args.tool_calls))["latencies"],
        }
        folder: Path = recorded["folder"]
        files = _sizes(folder)
        size = sum(files.values())
        minutes = args.seconds / 60
        print(f"call: {args.seconds} s of caller audio, {args.seconds} tool calls, "
              f"{args.seconds // 5} s of model audio, 1 keypad answer, 1 operator answer")
        pairs = zip(plains, recordeds, strict=True)
        added = sorted(1000 * (r - p) / args.seconds for p, r in pairs)
        print(f"CPU per call-second over {args.rounds} pairs: "
              f"{1000 * statistics.median(plains) / args.seconds:.1f} ms without a recorder, "
              f"{1000 * statistics.median(recordeds) / args.seconds:.1f} ms with one; added "
              f"median +{statistics.median(added):.1f} ms (range {added[0]:+.1f} to "
              f"{added[-1]:+.1f})")
        for name, delays in (
            (f"a {args.paced_seconds} s call at a phone line's pace", paced["flush_delays"]),
            ("the calls above (audio as fast as the session takes it)", fast_delays),
        ):
            ms = [1000 * d for d in delays]
            if not ms:
                print(f"flush delay, {name}: not measured (this writer does not report it)")
                continue
            print(f"flush delay (tap to the OS), {name}: {len(ms)} flushes, "
                  f"p50 {_pct(ms, 0.5):.1f} ms, p99 {_pct(ms, 0.99):.1f} ms, "
                  f"max {max(ms):.1f} ms (stated bound 250 ms)")
        print(f"bytes per minute of call: {size / minutes / 1e6:.2f} MB "
              f"({', '.join(f'{k} {v / 1e3:.0f} kB' for k, v in sorted(files.items()))})")
        taps = _tap_cost()
        print(f"tool-result path, the tap's own cost: p50 {_pct(taps, 0.5) * 1000:.1f} us, "
              f"p99 {_pct(taps, 0.99) * 1000:.1f} us")
        for name, values in latency.items():
            lat = [1000 * x for x in values]
            print(f"function call -> output at the server, {name} a recorder: "
                  f"p50 {_pct(lat, 0.5):.2f} ms, p99 {_pct(lat, 0.99):.2f} ms (n={len(lat)})")
        started = time.perf_counter()
        first = await replay(folder, agent=Bank)
        took = time.perf_counter() - started
        assert first.same, first.report()
        print(f"wire replay of the {args.seconds} s call: {took:.2f} s")
        started = time.perf_counter()
        heard = await replay(folder, agent=Bank, mode="audio")
        took = time.perf_counter() - started
        print(f"audio replay of the {args.seconds} s call (its caller audio played into the "
              f"channel again): {took:.2f} s, as recorded: {heard.same}")
        durations, same, identical = [], 0, 0
        for _ in range(args.replays):
            started = time.perf_counter()
            result = await replay(folder, agent=Bank)
            durations.append(time.perf_counter() - started)
            same += result.same
            identical += result.actual == first.actual
        print(f"determinism: {same}/{args.replays} replays as recorded, {identical}/"
              f"{args.replays} with identical stories; replay p50 "
              f"{statistics.median(durations):.2f} s, max {max(durations):.2f} s")


if __name__ == "__main__":
    asyncio.run(main())
