"""Samples in and out: PCM16 files, seeds, trimming, levels and padding.

Every generator works on float64 samples in [-1, 1) and writes 16-bit files. The arithmetic
here is the arithmetic the committed sets were made with: a change to it changes their bytes
(the package docstring says how to check).
"""

from __future__ import annotations

import hashlib
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile

__all__ = [
    "RATE",
    "TEL_RATE",
    "FloatArray",
    "energy_kept",
    "padded",
    "pcm16",
    "peak_limited",
    "read_wav",
    "seeded",
    "to_dbfs",
    "trim",
    "write_flac",
    "write_flac_float",
    "write_wav",
]

FloatArray = npt.NDArray[np.float64]
RATE = 16_000
"""The wideband rate every set is rendered at."""
TEL_RATE = 8_000
"""The telephone rate."""


def seeded(name: str) -> np.random.Generator:
    """A generator seeded from ``name`` (a file name, usually), so a rerun gives the same
    noise."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8]))


def read_wav(path: Path) -> tuple[FloatArray, int]:
    """``(samples, rate)`` of a PCM16 WAV file (the first channel of a multichannel one)."""
    with wave.open(str(path), "rb") as w:
        rate, n = w.getframerate(), w.getnframes()
        data = np.frombuffer(w.readframes(n), dtype=np.int16)
        if w.getnchannels() > 1:
            data = data.reshape(-1, w.getnchannels())[:, 0]
    return data.astype(np.float64) / 32768.0, rate


def pcm16(x: FloatArray) -> npt.NDArray[np.int16]:
    """Samples scaled by 32767, rounded and clipped to 16 bits."""
    return np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)


def write_wav(path: Path, x: FloatArray, rate: int) -> None:
    """A mono PCM16 WAV file."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm16(x).astype("<i2").tobytes())


def write_flac(path: Path, x: FloatArray, rate: int) -> None:
    """A mono 16-bit FLAC file."""
    soundfile.write(str(path), pcm16(x), rate, format="FLAC", subtype="PCM_16")


def write_flac_float(path: Path, x: FloatArray, rate: int) -> None:
    """A mono 16-bit FLAC file, clipped to [-1, 1] and converted by libsndfile (its float
    scaling, not `pcm16`'s: up to 1 LSB apart; ``dev_values`` was written so)."""
    soundfile.write(str(path), np.clip(x, -1.0, 1.0), rate, format="FLAC", subtype="PCM_16")


def trim(x: FloatArray, rate: int) -> FloatArray:
    """Cut the synthesiser's own leading and trailing silence (10 ms frames under -45 dBFS),
    so every file gets exactly the lead and trail its recipe adds."""
    frame = rate // 100
    env = np.array([np.sqrt(np.mean(x[i : i + frame] ** 2)) for i in range(0, len(x), frame)])
    active = np.nonzero(env > 10 ** (-45 / 20))[0]
    if len(active) == 0:
        return x
    return x[active[0] * frame : (active[-1] + 1) * frame]


def to_dbfs(x: FloatArray, dbfs: float) -> FloatArray:
    """``x`` scaled to an RMS level of ``dbfs`` (silence stays silence)."""
    rms = float(np.sqrt(np.mean(x**2)))
    return x * (10 ** (dbfs / 20) / rms) if rms > 0 else x


def peak_limited(x: FloatArray, peak: float = 0.98) -> FloatArray:
    """``x`` scaled down, as a whole, to a ``peak`` where it would pass it (an automatic gain
    control before the converter: no sample clips); unchanged otherwise."""
    top = float(np.max(np.abs(x))) if len(x) else 0.0
    return x * (peak / top) if top > peak else x


def energy_kept(y: FloatArray, like: FloatArray) -> FloatArray:
    """``y`` scaled to the mean power of ``like`` (a room or filter that should not change
    the level)."""
    out: FloatArray = y * np.sqrt(np.mean(like**2) / max(float(np.mean(y**2)), 1e-20))
    return out


def padded(x: FloatArray, seconds: float) -> FloatArray:
    """``x`` with ``seconds`` of digital silence before and after (at `RATE`)."""
    pad = np.zeros(int(RATE * seconds))
    return np.concatenate([pad, x, pad])
