#!/usr/bin/env python3
"""What pinning Whisper's native kernels costs, and what it changes (issue 46).

Each configuration runs in its own process (CTranslate2 and oneDNN read their instruction
set once): ``VOICE_HITL_ASR_ISA`` AVX2 (the pin) or native, and 1 or 2 decoder threads. Each
hears the same utterances of the committed tuning set (``audio_fixtures/manifest.json``, every
``--every``-th file) with the default recogniser behind its gate and prints the CPU seconds
and wall seconds spent hearing, and how many results (text, near-miss gap to 0.01 nats)
differ from the first configuration's.

Run: ``python bench/bench_pinning.py [--every 6]`` (``speech`` extra). On a loaded machine
read the CPU seconds, not the wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = (("AVX2", 1), ("native", 1), ("AVX2", 2), ("native", 2))


def hear_all(every: int, threads: int) -> None:
    """In the child: hear every ``every``-th fixture, print timings and results as JSON."""
    from voice_hitl.speech import AnswerSpec
    from voice_hitl.speech._fixtures import load_manifest
    from voice_hitl.speech.asr import (
        Denoiser,
        GatedRecognizer,
        SpeechGate,
        WhisperRecognizer,
        read_wav,
    )

    whisper = WhisperRecognizer(cpu_threads=threads)
    engine = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
    engine.recognize_sync(*read_wav(ROOT / "audio_fixtures" / "demo" / "say_confirm.wav"), None)
    folder, entries = load_manifest(ROOT / "audio_fixtures")
    results: list[list[object]] = []
    cpu = wall = 0.0
    for entry in entries[::every]:
        pcm, rate = read_wav(folder / entry["file"])
        spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
        c0, w0 = time.process_time(), time.perf_counter()
        hypotheses = engine.recognize_sync(pcm, rate, spec)
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        gaps = [h.competition.gap for h in hypotheses if h.competition is not None]
        results.append([entry["file"], [h.text for h in hypotheses], [round(g, 2) for g in gaps]])
    print(json.dumps({"cpu": cpu, "wall": wall, "results": results}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=6)
    parser.add_argument("--child", nargs=2, metavar=("EVERY", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        hear_all(int(args.child[0]), int(args.child[1]))
        return
    reference: list[object] | None = None
    print(f"{'isa':8} {'threads':>7} {'utterances':>10} {'cpu s':>7} {'wall s':>7} {'differ':>6}")
    for isa, threads in CONFIGS:
        env = {**os.environ, "VOICE_HITL_ASR_ISA": isa, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(args.every), str(threads)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        run = json.loads(out.strip().splitlines()[-1])
        results = run["results"]
        if reference is None:
            reference = results
        differ = sum(a != b for a, b in zip(results, reference, strict=True))
        print(
            f"{isa:8} {threads:>7} {len(results):>10} {run['cpu']:>7.1f} {run['wall']:>7.1f}"
            f" {differ:>6}"
        )


if __name__ == "__main__":
    main()
