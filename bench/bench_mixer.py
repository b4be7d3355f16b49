"""Measure the saturating mix and the in-memory backend's tick.

Run: ``.venv/bin/python bench/bench_mixer.py``. Prints microseconds per mixed 20 ms frame
(480 samples at 24 kHz) for several participant counts, and the share of real time that is.
"""

from __future__ import annotations

import time

import numpy as np

from conference import InMemoryConferenceBackend, mix_pcm16

FRAME = 480  # 20 ms at 24 kHz
FRAME_SECONDS = 0.020


def bench_mix(participants: int, rounds: int = 5000) -> float:
    rng = np.random.default_rng(0)
    frames = [rng.integers(-32768, 32767, FRAME, dtype=np.int16) for _ in range(participants)]
    start = time.perf_counter()
    for _ in range(rounds):
        mix_pcm16(frames, FRAME)
    return (time.perf_counter() - start) / rounds


def bench_tick(participants: int, rounds: int = 2000) -> float:
    rng = np.random.default_rng(1)
    backend = InMemoryConferenceBackend(frame_samples=FRAME)
    for i in range(participants):
        backend.join(f"p{i}")
    frame = rng.integers(-8000, 8000, FRAME, dtype=np.int16)
    start = time.perf_counter()
    for _ in range(rounds):
        for i in range(participants):
            backend.push_audio(f"p{i}", frame)
        backend.tick()
    return (time.perf_counter() - start) / rounds


def main() -> None:
    print(f"{'participants':>12} {'mix us/frame':>13} {'tick us/frame':>14} {'tick % of RT':>13}")
    for n in (2, 4, 8, 16, 32):
        mix = bench_mix(n)
        tick = bench_tick(n)
        print(f"{n:>12} {mix * 1e6:>13.1f} {tick * 1e6:>14.1f} {tick / FRAME_SECONDS:>13.2%}")


if __name__ == "__main__":
    main()
