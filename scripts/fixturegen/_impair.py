"""Rooms, lines and noises no set before ``adversarial5`` used.

Noise (unit RMS): `car` (engine harmonics over road rumble, a little wind hiss), `buzz` (mains
hum with its harmonics), `wind` (gusting low-passed noise), `music` (plucked notes, two at a
time). Impairments: `sox_effects` (a sox effect chain, e.g. ``reverb``), `room_reverb` (sox
reverb at the level of the sound before it), `overdrive` (gain into hard clipping),
`drop_packets` (20 ms frames zeroed in bursts, as a VoIP line without loss concealment), `opus`
(a round trip through the Opus codec, ``opus-tools``) and `upsampled` (8 kHz back to 16 kHz).
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soxr

from ._audio import RATE, FloatArray, energy_kept, read_wav, write_wav
from ._noise import band, brown, pink

__all__ = [
    "buzz",
    "car",
    "drop_packets",
    "music",
    "opus",
    "overdrive",
    "room_reverb",
    "sox_effects",
    "upsampled",
    "wind",
]


def _unit(x: FloatArray) -> FloatArray:
    y: FloatArray = x / np.sqrt(np.mean(x**2))
    return y


def _lowpass(x: FloatArray, cutoff: float) -> FloatArray:
    """``x`` (at `RATE`) with everything above ``cutoff`` Hz removed, a 20 % cosine skirt."""
    spectrum = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1 / RATE)
    ramp = np.clip((1.2 * cutoff - f) / (0.2 * cutoff), 0.0, 1.0)
    y: FloatArray = np.fft.irfft(spectrum * (0.5 - 0.5 * np.cos(np.pi * ramp)), len(x))
    return y


def car(n: int, rng: np.random.Generator) -> FloatArray:
    """Inside a car at speed: road rumble (brown noise under 250 Hz), the engine's firing
    frequency (45-75 Hz, wandering 3 %) with five harmonics, and wind hiss (pink noise,
    500-4000 Hz) 20 dB down. Most of the power is under 300 Hz."""
    t = np.arange(n) / RATE
    f0 = rng.uniform(45.0, 75.0) * (1 + 0.03 * np.sin(2 * np.pi * rng.uniform(0.05, 0.2) * t))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    engine = sum(np.sin(k * phase + rng.uniform(0, 6.28)) / k for k in range(1, 7))
    rumble = _unit(_lowpass(brown(n, rng), 250.0))
    hiss = _unit(band(pink(n, rng), RATE, 500.0, 4000.0))
    return _unit(rumble + 0.5 * _unit(np.asarray(engine, dtype=np.float64)) + 0.1 * hiss)


def buzz(n: int, rng: np.random.Generator, mains: float = 60.0) -> FloatArray:
    """Mains hum at ``mains`` Hz with odd harmonics up to the ninth (a ground-loop buzz) and
    a faint white floor 30 dB down."""
    t = np.arange(n) / RATE
    hum = sum(np.sin(2 * np.pi * k * mains * t + rng.uniform(0, 6.28)) / k for k in (1, 3, 5, 7, 9))
    x = _unit(np.asarray(hum, dtype=np.float64))
    return _unit(x + rng.normal(0.0, 10 ** (-30 / 20), n))


def wind(n: int, rng: np.random.Generator) -> FloatArray:
    """Wind on a microphone: noise under 400 Hz whose level gusts (0.3-1.2 Hz)."""
    t = np.arange(n) / RATE
    gust = 1.0 + 0.8 * np.sin(2 * np.pi * rng.uniform(0.3, 1.2) * t + rng.uniform(0, 6.28))
    gust *= 1.0 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.1, 0.3) * t + rng.uniform(0, 6.28))
    return _unit(_lowpass(rng.normal(0.0, 1.0, n), 400.0) * gust)


def music(n: int, rng: np.random.Generator) -> FloatArray:
    """Plucked notes of a pentatonic scale (three harmonics, a decaying envelope), two at a
    time, a new pair every 0.25-0.5 s: a radio playing in the room."""
    scale = 220.0 * 2 ** (np.array([0, 2, 4, 7, 9, 12, 14, 16, 19, 21]) / 12)
    out = np.zeros(n)
    at = 0
    while at < n:
        length = min(n - at, int(RATE * rng.uniform(0.25, 0.5)))
        t = np.arange(length) / RATE
        envelope = np.exp(-t / rng.uniform(0.1, 0.3))
        for f in rng.choice(scale, size=2, replace=False):
            note = sum(np.sin(2 * np.pi * k * f * t) / k**1.5 for k in (1, 2, 3))
            out[at : at + length] += note * envelope
        at += length
    return _unit(out)


def sox_effects(x: FloatArray, rate: int, *effects: str) -> FloatArray:
    """``x`` through a sox effect chain (``"reverb", "80"``), repeatable mode, no dither,
    cut or padded to its own length."""
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "in.wav", Path(tmp) / "out.wav"
        write_wav(source, x, rate)
        subprocess.run(
            ["sox", "-R", "-D", str(source), str(out), *effects], check=True, capture_output=True
        )
        y, _ = read_wav(out)
    return np.resize(np.concatenate([y, np.zeros(max(0, len(x) - len(y)))]), len(x))


def overdrive(x: FloatArray, gain_db: float, ceiling: float) -> FloatArray:
    """``x`` amplified by ``gain_db`` into hard clipping at +/-``ceiling`` (an input stage
    driven too hard: the peaks are flattened)."""
    y: FloatArray = np.clip(x * 10 ** (gain_db / 20), -ceiling, ceiling)
    return y


def drop_packets(
    x: FloatArray,
    rate: int,
    rng: np.random.Generator,
    loss: float,
    burst: float = 2.0,
    frame_ms: float = 20.0,
) -> FloatArray:
    """``x`` with whole ``frame_ms`` frames zeroed, as a VoIP line loses packets with no
    concealment: a two-state (Gilbert) chain loses ``loss`` of the frames on average, in runs
    of ``burst`` frames on average.

    Raises:
        ValueError: ``loss`` not in [0, 1) or ``burst`` below 1.
    """
    if not 0.0 <= loss < 1.0 or burst < 1.0:
        raise ValueError(f"loss must be in [0, 1) and burst >= 1, got {loss}, {burst}")
    frame = int(rate * frame_ms / 1000)
    recover = 1.0 / burst
    fall = loss * recover / (1.0 - loss)
    y = x.copy()
    lost = rng.random() < loss
    for start in range(0, len(x), frame):
        if lost:
            y[start : start + frame] = 0.0
        lost = rng.random() >= recover if lost else rng.random() < fall
    return y


def opus(x: FloatArray, rate: int, kbps: float) -> FloatArray:
    """``x`` (at ``rate``) through Opus at ``kbps`` (``opusenc --hard-cbr``, 20 ms frames) and
    decoded back at ``rate`` without dither (``opusdec``), cut to its own length."""
    with tempfile.TemporaryDirectory() as tmp:
        source, coded, out = Path(tmp) / "in.wav", Path(tmp) / "x.opus", Path(tmp) / "out.wav"
        write_wav(source, x, rate)
        encode = ["opusenc", "--quiet", "--bitrate", str(kbps), "--hard-cbr", "--framesize", "20"]
        encode += ["--comp", "10", "--serial", "1", str(source), str(coded)]
        subprocess.run(encode, check=True, capture_output=True)
        decode = ["opusdec", "--quiet", "--rate", str(rate), "--no-dither", str(coded), str(out)]
        subprocess.run(decode, check=True, capture_output=True)
        y, _ = read_wav(out)
    return np.resize(np.concatenate([y, np.zeros(max(0, len(x) - len(y)))]), len(x))


def room_reverb(x: FloatArray, reverb: Sequence[str], like: FloatArray) -> FloatArray:
    """16 kHz ``x`` through sox ``reverb`` with ``reverb``'s arguments, at the power of
    ``like`` (a room keeps the level of what is said in it: ``like`` is the sound before any
    floor was added)."""
    return energy_kept(sox_effects(x, RATE, "reverb", *(str(r) for r in reverb)), like)


def upsampled(x: FloatArray, rate: int) -> FloatArray:
    """``x`` (at ``rate``) resampled to `RATE` (a narrowband call as a 16 kHz pipeline
    receives it)."""
    up: FloatArray = soxr.resample(x, rate, RATE, quality="HQ")
    return up
