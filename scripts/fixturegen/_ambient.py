"""Noises and lines no set before ``adversarial6`` used.

Noise (unit RMS): `traffic` (a street: rumble, tyre hiss and vehicles passing), `fan` (a desk
fan: blade tone and airflow), `typing` (keystrokes on a keyboard). Lines: `speakerphone` (a
phone on a table: narrow band, a small room, the far end's echo), `cvsd` (the Bluetooth
hands-free codec, 64 kbit/s delta modulation), `bluetooth` (8 kHz through `cvsd` with lost
SCO packets) and `muffled` (a microphone under a hand or in a pocket).
"""

from __future__ import annotations

import numpy as np
import soxr

from ._audio import RATE, TEL_RATE, FloatArray, energy_kept
from ._impair import _lowpass, _unit, drop_packets, sox_effects
from ._noise import band, brown, pink

__all__ = ["bluetooth", "cvsd", "fan", "muffled", "speakerphone", "traffic", "typing"]

_CVSD_RATE = 64_000


def traffic(n: int, rng: np.random.Generator) -> FloatArray:
    """A street: road rumble (brown noise under 300 Hz), tyre hiss (pink noise, 800-5000 Hz)
    that swells as 2-6 vehicles pass (each a 1-4 s rise and fall, with its engine's note
    falling as it goes by)."""
    t = np.arange(n) / RATE
    rumble = _unit(_lowpass(brown(n, rng), 300.0))
    hiss = _unit(band(pink(n, rng), RATE, 800.0, 5000.0))
    swell = np.full(n, 0.15)
    engines = np.zeros(n)
    for _ in range(int(rng.integers(2, 7))):
        at, width = rng.uniform(0.0, n / RATE), rng.uniform(0.5, 2.0)
        envelope = np.exp(-0.5 * ((t - at) / width) ** 2)
        swell += envelope
        f0 = rng.uniform(70.0, 140.0) * (1.0 - 0.06 * np.tanh((t - at) / width))
        phase = 2 * np.pi * np.cumsum(f0) / RATE
        engines += envelope * sum(np.sin(k * phase) / k for k in (1, 2, 3))
    return _unit(rumble * (0.5 + swell) + hiss * swell + 0.3 * _unit(engines + 1e-12))


def fan(n: int, rng: np.random.Generator) -> FloatArray:
    """A desk fan: airflow (pink noise under 2 kHz) beating at the blade rate (three to five
    blades at 15-25 turns a second), with the blade tone and two harmonics 6 dB down."""
    t = np.arange(n) / RATE
    blade = rng.uniform(15.0, 25.0) * int(rng.integers(3, 6))
    air = _unit(_lowpass(pink(n, rng), 2000.0)) * (1 + 0.2 * np.sin(2 * np.pi * blade * t))
    tone = sum(np.sin(2 * np.pi * k * blade * t + rng.uniform(0, 6.28)) / k for k in (1, 2, 3))
    return _unit(air + 0.5 * _unit(np.asarray(tone, dtype=np.float64)))


def typing(n: int, rng: np.random.Generator) -> FloatArray:
    """Keystrokes: a click every 0.08-0.4 s (noise bursts of 4-12 ms ringing at 2-5 kHz, a
    space bar's thump at 300-600 Hz one time in six), silent between."""
    out = np.zeros(n)
    at = int(RATE * rng.uniform(0.0, 0.3))
    while at < n:
        length = int(RATE * rng.uniform(0.004, 0.012))
        f = rng.uniform(300.0, 600.0) if rng.random() < 1 / 6 else rng.uniform(2000.0, 5000.0)
        k = np.arange(length) / RATE
        click = rng.normal(0.0, 1.0, length) * 0.5 + np.sin(2 * np.pi * f * k)
        click *= np.exp(-k / (length / RATE / 4)) * rng.uniform(0.5, 1.0)
        end = min(n, at + length)
        out[at:end] += click[: end - at]
        at += int(RATE * rng.uniform(0.08, 0.4))
    return _unit(out + 1e-12)


def speakerphone(x: FloatArray) -> FloatArray:
    """16 kHz audio through a phone on a table: 200-4000 Hz, a small hard room (sox
    ``reverb 40 20 30``) and the far end's echo 120 ms later, 10 dB down; energy kept."""
    wet = sox_effects(band(x, RATE, 200.0, 4000.0), RATE, "reverb", "40", "20", "30")
    wet = sox_effects(wet, RATE, "echo", "1.0", "1.0", "120", "0.316")
    return energy_kept(wet, x)


def cvsd(x: FloatArray, rate: int = TEL_RATE) -> FloatArray:
    """``x`` (at ``rate``) through CVSD at 64 kbit/s, the Bluetooth hands-free codec: one bit
    a sample; the step grows by its minimum when the last four bits agree, else decays
    (1 - 1/1024), the estimate leaks (1 - 1/32); decoded at ``rate``."""
    up: FloatArray = soxr.resample(x, rate, _CVSD_RATE, quality="HQ")
    step_min, step_max = 10 / 32768, 1280 / 32768
    estimate, step, history = 0.0, step_min, 0
    out = np.empty(len(up))
    for i, sample in enumerate(up.tolist()):
        bit = 1 if sample >= estimate else 0
        history = ((history << 1) | bit) & 0b1111
        grow = history in (0, 0b1111)
        step = min(step + step_min, step_max) if grow else max(step * (1 - 1 / 1024), step_min)
        estimate = estimate * (1 - 1 / 32) + (step if bit else -step)
        out[i] = estimate
    y: FloatArray = soxr.resample(out, _CVSD_RATE, rate, quality="HQ")
    return y[: len(x)]


def bluetooth(x: FloatArray, rng: np.random.Generator, loss: float) -> FloatArray:
    """16 kHz audio through a Bluetooth hands-free link: 200-3600 Hz, 8 kHz, `cvsd`, with
    ``loss`` of its 7.5 ms SCO packets zeroed (bursts of 1.5 on average); 8 kHz out."""
    narrow: FloatArray = soxr.resample(band(x, RATE, 200.0, 3600.0), RATE, TEL_RATE, quality="HQ")
    return drop_packets(cvsd(narrow), TEL_RATE, rng, loss, burst=1.5, frame_ms=7.5)


def muffled(x: FloatArray, cutoff: float = 1200.0) -> FloatArray:
    """16 kHz audio with everything above ``cutoff`` Hz removed (a hand over the microphone,
    a phone in a pocket); energy kept."""
    return energy_kept(_lowpass(x, cutoff), x)
