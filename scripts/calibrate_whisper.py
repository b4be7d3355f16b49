#!/usr/bin/env python3
"""Fit `calibrated_confidence` (voice_hitl.speech.asr._whisper.CALIBRATION) on the tuning set.

Runs Whisper tiny.en (no speech gate: the gate's rejections carry no hypothesis) over the
committed tuning fixtures in ``audio_fixtures/`` -- never the held-out set -- and fits a
logistic regression of "the hypothesis understood as expected" on the reading's evidence
(average log-probability, read as heard, verified yes). Prints the coefficients, the
reliability table of the fitted model, and of the coefficients in use.

Run: ``python scripts/calibrate_whisper.py [--sample K]`` (the ``speech`` extra).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from voice_hitl.speech import AnswerSpec, understand
from voice_hitl.speech._fixtures import load_manifest, scored
from voice_hitl.speech.asr import WhisperRecognizer, read_wav
from voice_hitl.speech.asr._whisper import CALIBRATION

ROOT = __import__("pathlib").Path(__file__).resolve().parent.parent


def _fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> np.ndarray:
    """Logistic regression by Newton's method (x has a leading column of ones)."""
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ w))
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def _reliability(p: np.ndarray, y: np.ndarray) -> None:
    for lo, hi in [(0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)]:
        m = (p >= lo) & (p < hi)
        if m.any():
            print(f"  predicted {lo:.1f}-{min(hi, 1):.1f}: n={int(m.sum()):4d}  "
                  f"mean predicted {p[m].mean():.2f}  observed {y[m].mean():.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sample", type=int, default=1, help="every K-th fixture")
    args = parser.parse_args()
    folder, entries = load_manifest(ROOT / "audio_fixtures")
    whisper = WhisperRecognizer()
    rows: list[tuple[float, float, float, float]] = []
    for entry in entries[:: args.sample]:
        pcm, rate = read_wav(folder / entry["file"])
        spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
        heard = whisper.hear_sync(pcm, rate, spec)
        if not heard.hypotheses or heard.evidence is None:
            continue
        ok, _, _ = scored(entry["expected"], understand(heard.hypotheses[0].text, spec))
        logprob, as_heard, verified = heard.evidence
        rows.append((logprob, float(as_heard), float(verified), float(ok)))
    data = np.array(rows)
    x = np.column_stack([np.ones(len(data)), data[:, :3]])
    y = data[:, 3]
    w = _fit(x, y)
    print(f"{len(data)} hypotheses, {int(y.sum())} right; fitted CALIBRATION = "
          f"({', '.join(f'{v:.2f}' for v in w)})")
    print("fitted:")
    _reliability(1 / (1 + np.exp(-x @ w)), y)
    print(f"in use {CALIBRATION}:")
    _reliability(1 / (1 + np.exp(-x @ np.array(CALIBRATION))), y)
    wrong = data[y == 0]
    print("wrong readings (logprob, as heard, verified):",
          [tuple(round(v, 2) for v in r[:3]) for r in wrong][:30])
    print("probability in use for wrong readings:",
          sorted(round(1 / (1 + math.exp(-(CALIBRATION[0] + CALIBRATION[1] * r[0]
                 + CALIBRATION[2] * r[1] + CALIBRATION[3] * r[2]))), 2) for r in wrong))


if __name__ == "__main__":
    main()
