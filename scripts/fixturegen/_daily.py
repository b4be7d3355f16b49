"""Noises and lines no set before ``adversarial9`` used.

Noise (unit RMS): `bus` (inside a city bus: a diesel engine, road rumble, rattles and the
doors' air hiss), `rain` (rain on a window), `vacuum` (a vacuum cleaner) and `baby` (a baby
crying). Lines: `agc` (an automatic gain control that pumps: it raises the noise between
words), `earbud` (a cheap earbud microphone: 300-5000 Hz, driven into distortion) and
`church` (a large reverberant church).
"""

from __future__ import annotations

import numpy as np

from ._audio import RATE, FloatArray, energy_kept
from ._impair import _lowpass, _unit, sox_effects
from ._noise import band, brown, pink

__all__ = ["CHURCH", "agc", "baby", "bus", "church", "earbud", "rain", "vacuum"]

CHURCH = ("100", "40", "100", "0", "60")
"""sox ``reverb`` settings of a large church: full reverberance, little damping, the
largest room, 60 ms before the tail starts."""


def _bursts(
    n: int, rng: np.random.Generator, per_s: float, ms: tuple[float, float], hz: tuple[float, float]
) -> FloatArray:
    """Short noise bursts ``per_s`` a second on average (Poisson), each ``ms`` long (range),
    ringing at ``hz`` (range) as it decays, at random levels (log-normal)."""
    out = np.zeros(n)
    at = int(RATE * rng.exponential(1 / per_s))
    while at < n:
        length = max(2, int(RATE * rng.uniform(*ms) / 1000))
        k = np.arange(length) / RATE
        ring = 0.5 * rng.normal(0.0, 1.0, length) + np.sin(2 * np.pi * rng.uniform(*hz) * k)
        ring *= np.exp(-k / (length / RATE / 4)) * rng.lognormal(0.0, 0.6)
        end = min(n, at + length)
        out[at:end] += ring[: end - at]
        at += max(1, int(RATE * rng.exponential(1 / per_s)))
    return out


def bus(n: int, rng: np.random.Generator) -> FloatArray:
    """Inside a city bus: a diesel engine (firing at 25-40 Hz, rising and falling by a sixth
    as it pulls away and slows, seven harmonics), road rumble (under 300 Hz), rattles (3-10
    a second, 1-4 kHz, 12 dB down) and, one time in two, the doors' air hiss (2-7 kHz, half
    a second to a second, 6 dB down)."""
    t = np.arange(n) / RATE
    sway = np.sin(2 * np.pi * rng.uniform(0.05, 0.15) * t + rng.uniform(0, 6.28))
    f0 = rng.uniform(25.0, 40.0) * (1 + 0.17 * sway)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    engine = _unit(np.asarray(sum(np.sin(k * phase) / k**0.7 for k in range(1, 8))))
    rumble = _unit(_lowpass(brown(n, rng), 300.0))
    rattles = _bursts(n, rng, rng.uniform(3.0, 10.0), (2.0, 6.0), (1000.0, 4000.0))
    mixed = engine + rumble + 0.25 * _unit(rattles + 1e-12)
    if rng.random() < 0.5:
        length = min(n, int(RATE * rng.uniform(0.5, 1.0)))
        at = int(rng.integers(0, n - length + 1))
        hiss = np.zeros(n)
        hiss[at : at + length] = band(pink(length, rng), RATE, 2000.0, 7000.0) * np.hanning(length)
        mixed += 0.5 * _unit(hiss)
    return _unit(mixed)


def rain(n: int, rng: np.random.Generator) -> FloatArray:
    """Rain on a window: 150-500 drops a second (1-3 ms clicks ringing at 1.5-6 kHz) over the
    downpour's steady hiss through the glass (pink noise, 200-3000 Hz, 3 dB below)."""
    drops = _bursts(n, rng, rng.uniform(150.0, 500.0), (1.0, 3.0), (1500.0, 6000.0))
    hiss = _unit(band(pink(n, rng), RATE, 200.0, 3000.0))
    return _unit(_unit(drops + 1e-12) + 0.7 * hiss)


def vacuum(n: int, rng: np.random.Generator) -> FloatArray:
    """A vacuum cleaner: its airflow (pink noise, 300-7000 Hz) and motor whine (400-600 Hz,
    wobbling 2 %, four harmonics, 6 dB down), their level swaying by a third as the nozzle
    moves (0.3-0.8 Hz)."""
    t = np.arange(n) / RATE
    f0 = rng.uniform(400.0, 600.0) * (1 + 0.02 * np.sin(2 * np.pi * rng.uniform(0.5, 2.0) * t))
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    whine = _unit(np.asarray(sum(np.sin(k * phase) / k for k in range(1, 5))))
    air = _unit(band(pink(n, rng), RATE, 300.0, 7000.0))
    sway = 1 + 0.33 * np.sin(2 * np.pi * rng.uniform(0.3, 0.8) * t + rng.uniform(0, 6.28))
    return _unit((air + 0.5 * whine) * sway)


def _cry(length: int, rng: np.random.Generator) -> FloatArray:
    """One cry: a 350-550 Hz voice rising and falling by a third with a 5-8 Hz vibrato,
    harmonics under 7 kHz weighted by a baby's formants (1.1, 2.8, 4.5 kHz), faded in and
    out."""
    k = np.arange(length) / RATE
    arc = np.sin(np.pi * k / (length / RATE))
    vibrato = 0.03 * np.sin(2 * np.pi * rng.uniform(5.0, 8.0) * k)
    f0 = rng.uniform(350.0, 550.0) * (1 + 0.33 * arc + vibrato)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    voice = np.zeros(length)
    for h in range(1, int(7000 / float(np.max(f0))) + 1):
        weight = sum(np.exp(-(((h * f0 - f) / 600.0) ** 2)) for f in (1100.0, 2800.0, 4500.0))
        voice += np.sin(h * phase) * (0.15 + weight) / h**0.5
    fade = min(length // 2, RATE // 20)
    envelope = np.ones(length)
    ramp = np.hanning(2 * fade)
    envelope[:fade], envelope[length - fade :] = ramp[:fade], ramp[fade:]
    out: FloatArray = voice * envelope
    return out


def baby(n: int, rng: np.random.Generator) -> FloatArray:
    """A baby crying: cries of 0.4-1.2 s (`_cry`) with 0.2-0.6 s between, each gap holding
    a gasp (noise at 500-3000 Hz, 0.1-0.2 s, 15 dB down)."""
    out = np.zeros(n)
    at = int(RATE * rng.uniform(0.0, 0.3))
    while at < n:
        length = min(n - at, int(RATE * rng.uniform(0.4, 1.2)))
        out[at : at + length] += _unit(_cry(length, rng) + 1e-12) * rng.uniform(0.6, 1.0)
        at += length
        gap = int(RATE * rng.uniform(0.2, 0.6))
        gasp = min(n - at, int(RATE * rng.uniform(0.1, 0.2)), gap)
        if gasp > 1:
            breath = band(rng.normal(0.0, 1.0, gasp), RATE, 500.0, 3000.0) * np.hanning(gasp)
            out[at : at + gasp] += 0.18 * _unit(breath + 1e-12)
        at += gap
    return _unit(out + 1e-12)


def agc(
    x: FloatArray,
    rate: int = RATE,
    target_dbfs: float = -20.0,
    max_gain_db: float = 24.0,
    attack_ms: float = 10.0,
    release_ms: float = 600.0,
) -> FloatArray:
    """``x`` through an automatic gain control that pumps: the level of each 10 ms frame,
    followed quickly as it rises (``attack_ms``) and slowly as it falls (``release_ms``),
    brought to ``target_dbfs`` by up to ``max_gain_db`` of gain (never cut by more than
    it); the gain eased between frames. The noise swells in the pauses and ducks when
    speech starts."""
    frame = max(1, rate // 100)
    count = -(-len(x) // frame)
    padded = np.concatenate([x, np.zeros(count * frame - len(x))])
    levels = np.sqrt(np.mean(padded.reshape(count, frame) ** 2, axis=1)) + 1e-9
    up, down = (1 - np.exp(-10.0 / ms) for ms in (attack_ms, release_ms))
    envelope = np.empty(count)
    level = float(levels[0])
    for i, now in enumerate(levels.tolist()):
        level += (now - level) * (up if now > level else down)
        envelope[i] = level
    limit = 10 ** (max_gain_db / 20)
    gain = np.clip(10 ** (target_dbfs / 20) / envelope, 1 / limit, limit)
    centres = (np.arange(count) + 0.5) * frame
    y: FloatArray = x * np.interp(np.arange(len(x)), centres, gain)
    return y


def earbud(x: FloatArray, drive_db: float = 12.0) -> FloatArray:
    """16 kHz audio through a cheap earbud microphone: 300-5000 Hz, its peak driven
    ``drive_db`` into a soft (tanh) clip, energy kept."""
    narrow = band(x, RATE, 300.0, 5000.0)
    driven = narrow / (np.max(np.abs(narrow)) + 1e-12) * 10 ** (drive_db / 20)
    return energy_kept(np.tanh(driven), x)


def church(x: FloatArray, wet_db: float = 3.0) -> FloatArray:
    """16 kHz audio in a large church (sox ``reverb`` `CHURCH`, the reverberation
    ``wet_db`` above the direct sound), energy kept."""
    return energy_kept(sox_effects(x, RATE, "reverb", *CHURCH, str(wet_db)), x)
