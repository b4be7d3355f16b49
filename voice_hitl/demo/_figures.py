"""The recogniser's figures a replay compares with a tolerance, and what it says when they
decide an outcome differently.

Whisper runs on pinned kernels (`voice_hitl.speech.asr._native`), so a replay on any x86-64
CPU with AVX2 scores as the recording did. A recording made on other kernels (another CPU
with ``VOICE_HITL_ASR_ISA=native``, an older release) scores a near-miss gap up to about
0.4 nats apart (docs/guides/local-cascade.md): a gap within `GAP_TOLERANCE` of the
recorded one is the same figure. The verdict it led to (the evidence's ``layers``) is always
compared exactly; when it differs, or a gap lies beyond the tolerance, the replay's report
names the step that depends on the machine instead of a bare diff.
"""

from __future__ import annotations

import copy
import math
from typing import Any

__all__ = ["GAP_TOLERANCE", "machine_steps", "within_tolerance"]

GAP_TOLERANCE = 0.5
"""Nats by which a replayed near-miss gap may differ from the recorded one (the margin a
high-risk yes needs is 3.0)."""


def _answers(story: dict[str, Any]) -> list[tuple[str, Any]]:
    read = story.get("model_read")
    text = read.get("text") if isinstance(read, dict) else None
    return [("answer", story.get("answer")), ("model_read", text)]


def _near_miss(answer: Any) -> dict[str, Any] | None:
    evidence = answer.get("evidence") if isinstance(answer, dict) else None
    near = evidence.get("near_miss") if isinstance(evidence, dict) else None
    return near if isinstance(near, dict) else None


def _gap(near: dict[str, Any] | None) -> float | None:
    gap = near.get("gap") if near is not None else None
    return float(gap) if isinstance(gap, int | float) and math.isfinite(gap) else None


def within_tolerance(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``actual`` with every near-miss gap within `GAP_TOLERANCE` of the recorded one set to
    the recorded one (a copy; the rest untouched)."""
    out = copy.deepcopy(actual)
    for was, now in zip(expected, out, strict=False):
        for (_, recorded), (_, replayed) in zip(_answers(was), _answers(now), strict=True):
            then, near = _near_miss(recorded), _near_miss(replayed)
            a, b = _gap(then), _gap(near)
            if then and near and a is not None and b is not None and abs(a - b) <= GAP_TOLERANCE:
                near["gap"] = then["gap"]
    return out


def machine_steps(expected: list[dict[str, Any]], actual: list[dict[str, Any]]) -> list[str]:
    """What in the replay follows the machine's kernels rather than the audio: each request
    whose near-miss gap moved beyond the tolerance, or whose evidence layers (the verdict the
    recogniser's figures led to) differ."""
    notes: list[str] = []
    for number, (was, now) in enumerate(zip(expected, actual, strict=False), start=1):
        recorded, replayed = was.get("answer"), now.get("answer")
        tool = now.get("tool") or was.get("tool")
        a, b = _gap(_near_miss(recorded)), _gap(_near_miss(replayed))
        if a is not None and b is not None and abs(a - b) > GAP_TOLERANCE:
            notes.append(
                f"request {number} ({tool}): the near-miss score gave a gap of {b:.2f} nats "
                f"where the recording has {a:.2f} (tolerance {GAP_TOLERANCE}): Whisper's "
                "scores depend on the kernels it ran on"
            )
        before, after = _layers(recorded), _layers(replayed)
        if before is not None and after is not None and before != after:
            flipped = sorted(
                name for name in set(before) | set(after) if before.get(name) != after.get(name)
            )
            notes.append(
                f"request {number} ({tool}): the evidence layer(s) {', '.join(flipped)} "
                f"decided differently ({_states(before, flipped)} recorded, "
                f"{_states(after, flipped)} replayed): a borderline reading, which "
                "depends on the machine's kernels"
            )
    return notes


def _layers(answer: Any) -> dict[str, Any] | None:
    evidence = answer.get("evidence") if isinstance(answer, dict) else None
    layers = evidence.get("layers") if isinstance(evidence, dict) else None
    return layers if isinstance(layers, dict) else None


def _states(layers: dict[str, Any], names: list[str]) -> str:
    return ", ".join(f"{name} {layers.get(name, 'absent')}" for name in names)
