"""Noises and lines no set before ``adversarial7`` used.

Noise (unit RMS): `clinks` (cups, glasses and cutlery), `cafe` (a crowd's babble with
clinks). Lines: `headset` (a close headset microphone: 100-7000 Hz), `stairwell` (a bare
stairwell's long, loud reverb), `mobile` (a narrowband mobile call: AMR-NB with lost
frames) and `cordless` (a cordless phone's ADPCM line).
"""

from __future__ import annotations

import numpy as np

from ._audio import RATE, TEL_RATE, FloatArray, energy_kept
from ._impair import _unit, drop_packets, sox_effects
from ._noise import Crowd, band, phone_line
from ._scene import NoiseMaker

__all__ = ["cafe", "clinks", "cordless", "headset", "mobile", "stairwell"]

_PARTIALS = (1.0, 2.32, 4.25, 6.63)
"""Frequency ratios of a struck cup or glass (its first four modes)."""


def clinks(n: int, rng: np.random.Generator) -> FloatArray:
    """Cups, glasses and cutlery: a clink every 0.15-1.2 s, each four inharmonic partials of
    a 1.2-3.5 kHz fundamental (`_PARTIALS`) ringing out over 40-250 ms (the higher ones
    sooner), at random levels (one in four a soft one, 12 dB down), silent between."""
    out = np.zeros(n)
    at = int(RATE * rng.uniform(0.0, 0.4))
    while at < n:
        length = min(n - at, int(RATE * rng.uniform(0.04, 0.25)))
        t = np.arange(length) / RATE
        f0, tau = rng.uniform(1200.0, 3500.0), length / RATE / 5
        ring = sum(
            np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6.28)) * np.exp(-t * k / tau)
            for k in _PARTIALS
            if f0 * k < RATE / 2 - 500
        )
        soft = 0.25 if rng.random() < 0.25 else 1.0
        out[at : at + length] += np.asarray(ring, dtype=np.float64) * soft * rng.uniform(0.5, 1)
        at += int(RATE * rng.uniform(0.15, 1.2))
    return _unit(out + 1e-12)


def cafe(crowd: Crowd, talkers: int = 6, clatter_db: float = -6.0) -> NoiseMaker:
    """A cafe: ``crowd``'s babble of ``talkers`` with `clinks` ``clatter_db`` below it, unit
    RMS."""

    def make(n: int, rng: np.random.Generator) -> FloatArray:
        talk = _unit(crowd(n, rng, talkers))
        return _unit(talk + clinks(n, rng) * 10 ** (clatter_db / 20))

    return make


def headset(x: FloatArray) -> FloatArray:
    """16 kHz audio through a close headset microphone: 100-7000 Hz."""
    return band(x, RATE, 100.0, 7000.0)


def stairwell(x: FloatArray) -> FloatArray:
    """16 kHz audio in a bare stairwell, the phone held away: sox ``reverb 95 20 100 0 40 4``
    (a long tail, little damping, 40 ms before it starts, the reverberation 4 dB above the
    direct sound), energy kept."""
    wet = sox_effects(x, RATE, "reverb", "95", "20", "100", "0", "40", "4")
    return energy_kept(wet, x)


def mobile(x: FloatArray, rng: np.random.Generator, loss: float) -> FloatArray:
    """16 kHz audio through a narrowband mobile call: 300-3400 Hz, 8 kHz, AMR-NB at
    12.2 kbit/s, with ``loss`` of its 20 ms frames zeroed (bursts of 1.5 on average, no
    concealment); 8 kHz out."""
    return drop_packets(phone_line(x, "amr122"), TEL_RATE, rng, loss, burst=1.5)


def cordless(x: FloatArray) -> FloatArray:
    """16 kHz audio through a cordless phone's line: 300-3400 Hz, 8 kHz, IMA ADPCM at
    32 kbit/s, cut to its own length; 8 kHz out."""
    return phone_line(x, "ima_adpcm")[: len(x) * TEL_RATE // RATE]
