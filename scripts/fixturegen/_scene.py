"""The shape of the sets from ``adversarial4`` on: speech padded, noise mixed at a condition's
SNR, then the condition's room or line (`mixed`); and files of noise alone through a
condition's channel (`noise_alone`). Seeds come from the file names after a prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._audio import RATE, FloatArray, padded, seeded, to_dbfs, write_flac
from ._noise import at_snr
from ._sets import REJECT, Render, Slot

__all__ = ["Channel", "NoiseMaker", "mixed", "noise_alone"]

NoiseMaker = Callable[[int, np.random.Generator], FloatArray]
"""``(n, rng)`` to ``n`` samples of noise (at unit RMS, for `mixed`)."""

Channel = Callable[[FloatArray, str, np.random.Generator], tuple[FloatArray, int]]
"""``(x at RATE, condition, rng)`` to ``(samples, rate)``: the condition's room or line."""


def mixed(
    noises: Mapping[str, tuple[NoiseMaker, float]],
    channel: Channel,
    seed_prefix: str,
    lead_s: float,
    trail_s: float | None = None,
    by_voice: Mapping[str, Mapping[str, NoiseMaker]] | None = None,
) -> Render:
    """Speech with ``lead_s`` of silence before and ``trail_s`` (``lead_s`` if None) after;
    in a condition of ``noises``, its noise at its SNR against the speech alone (the noise
    ``by_voice[condition][voice]`` instead where there is one); then ``channel``. One
    generator, seeded from the file name after ``seed_prefix``, feeds both."""
    instead = by_voice or {}

    def render(speech: FloatArray, slot: Slot) -> tuple[FloatArray, int]:
        rng = seeded(seed_prefix + slot.file)
        if trail_s is None:
            x = padded(speech, lead_s)
        else:
            lead, trail = np.zeros(int(RATE * lead_s)), np.zeros(int(RATE * trail_s))
            x = np.concatenate([lead, speech, trail])
        if slot.condition in noises:
            make, snr = noises[slot.condition]
            make = instead.get(slot.condition, {}).get(slot.voice, make)
            x = at_snr(x, make(len(x), rng), speech, snr)
        return channel(x, slot.condition, rng)

    return render


def noise_alone(
    folder: Path,
    rows: Sequence[tuple[str, float, str]],
    makers: Mapping[str, NoiseMaker],
    channel: Channel,
    seed_prefix: str,
    spec: dict[str, Any],
) -> list[dict[str, Any]]:
    """One file a row ``(kind, level dBFS, condition)``: 1.5 to 3 s of ``makers[kind]`` at
    the level, through the condition's ``channel``; returns the manifest entries (category
    ``nonspeech``, voice ``none``, expected a reject of ``spec``)."""
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    for i, (kind, level, through) in enumerate(rows):
        base = f"{kind}_{i:02d}__{through}"
        rng = seeded(seed_prefix + base)
        x = makers[kind](int(RATE * rng.uniform(1.5, 3.0)), rng)
        y, rate = channel(to_dbfs(x, level), through, rng)
        write_flac(folder / f"{base}.flac", y, rate)
        entries.append(
            {
                "file": f"{base}.flac",
                "id": f"{kind}_{i:02d}",
                "voice": "none",
                "condition": f"nonspeech_{through}",
                "noise": kind,
                "level_dbfs": level,
                "sample_rate": rate,
                "category": "nonspeech",
                "text": "",
                "spec": spec,
                "expected": REJECT,
            }
        )
    return entries
