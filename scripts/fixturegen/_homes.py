"""Noises and lines no set before ``adversarial8`` used.

Noise (unit RMS): `water` (a running tap), `kitchen` (a tap running into a sink of dishes),
`open_car` (a car at speed with the window down), `television` (a TV across the room: two
talkers and music from a small speaker) and `reverberated` (any noise heard in a hall).
Lines: `jitter` (a VoIP jitter buffer stretching and squeezing time), `laptop_mic` (a cheap
laptop microphone, 400-6000 Hz) and `farfield` (a phone across a living room).
"""

from __future__ import annotations

import numpy as np

from ._ambient import traffic
from ._audio import RATE, FloatArray, energy_kept
from ._impair import _lowpass, _unit, car, music, sox_effects, wind
from ._noise import Crowd, band, pink
from ._scene import NoiseMaker
from ._venues import clinks

__all__ = [
    "farfield",
    "jitter",
    "kitchen",
    "laptop_mic",
    "open_car",
    "reverberated",
    "television",
    "water",
]


def water(n: int, rng: np.random.Generator) -> FloatArray:
    """A running tap: noise shaped to 1-6 kHz, its level fluttering (8-20 Hz, by a third),
    with 20-60 bubbles a second, each a 4-15 ms ring rising from 400-1500 Hz by half, 6 dB
    under the hiss."""
    t = np.arange(n) / RATE
    flutter = 1.0 + 0.33 * np.sin(2 * np.pi * rng.uniform(8.0, 20.0) * t + rng.uniform(0, 6.28))
    hiss = _unit(band(pink(n, rng), RATE, 1000.0, 6000.0)) * flutter
    bubbles = np.zeros(n)
    rate = rng.uniform(20.0, 60.0)
    at = int(RATE * rng.exponential(1 / rate))
    while at < n:
        length = min(n - at, int(RATE * rng.uniform(0.004, 0.015)))
        k = np.arange(length) / RATE
        f = rng.uniform(400.0, 1500.0) * (1 + 0.5 * k * RATE / length)
        ring = np.sin(2 * np.pi * np.cumsum(f) / RATE) * np.exp(-k / (length / RATE / 3))
        bubbles[at : at + length] += ring * rng.uniform(0.3, 1.0)
        at += max(1, int(RATE * rng.exponential(1 / rate)))
    return _unit(hiss + 0.5 * _unit(bubbles + 1e-12))


def kitchen(n: int, rng: np.random.Generator, clatter_db: float = -4.0) -> FloatArray:
    """A kitchen: `water` running with dishes and cutlery (`clinks`) ``clatter_db`` below
    it."""
    return _unit(water(n, rng) + clinks(n, rng) * 10 ** (clatter_db / 20))


def open_car(n: int, rng: np.random.Generator) -> FloatArray:
    """A car at speed with the window down: its cabin noise (`car`), the wind buffeting in
    (`wind`, 3 dB below) and the traffic outside (`traffic`, 6 dB below)."""
    mixed = car(n, rng) + 0.7 * wind(n, rng) + 0.5 * traffic(n, rng)
    return _unit(mixed)


def reverberated(make: NoiseMaker, *reverb: str) -> NoiseMaker:
    """``make``'s noise heard in a room: only the reverberation of sox ``reverb -w``
    with ``reverb``'s settings (none: sox's), unit RMS."""

    def heard(n: int, rng: np.random.Generator) -> FloatArray:
        return _unit(sox_effects(make(n, rng), RATE, "reverb", "-w", *reverb) + 1e-12)

    return heard


def television(crowd: Crowd, music_db: float = -8.0) -> NoiseMaker:
    """A TV across the room: two of ``crowd``'s talkers with `music` ``music_db`` below them,
    through a small speaker (150-7000 Hz) in a living room (sox ``reverb 50 50 60``), unit
    RMS."""

    def make(n: int, rng: np.random.Generator) -> FloatArray:
        talk = _unit(crowd(n, rng, 2))
        show = band(talk + music(n, rng) * 10 ** (music_db / 20), RATE, 150.0, 7000.0)
        return _unit(sox_effects(show, RATE, "reverb", "50", "50", "60"))

    return make


def jitter(
    x: FloatArray,
    rng: np.random.Generator,
    rate: int = RATE,
    per_s: float = 4.0,
    frame_ms: float = 20.0,
    fade_ms: float = 5.0,
) -> FloatArray:
    """``x`` through an adaptive VoIP jitter buffer changing its delay: at ``per_s`` random
    moments a second on average, it plays a ``frame_ms`` frame twice (stretching, the
    buffer waiting for late packets) or skips one (squeezing, catching up), half each, each
    splice cross-faded over ``fade_ms``. The call comes out longer or shorter."""
    frame, fade = int(rate * frame_ms / 1000), int(rate * fade_ms / 1000)
    pieces: list[FloatArray] = []
    start = 0
    at = frame + int(rate * rng.exponential(1 / per_s))
    while at + frame < len(x):
        pieces.append(x[start:at])
        start = at - frame if rng.random() < 0.5 else at + frame
        at = max(at, start) + frame + int(rate * rng.exponential(1 / per_s))
    pieces.append(x[start:])
    out = pieces[0]
    for piece in pieces[1:]:
        k = min(fade, len(out), len(piece))
        ramp = np.linspace(0.0, 1.0, k)
        joined = out[len(out) - k :] * (1 - ramp) + piece[:k] * ramp
        out = np.concatenate([out[: len(out) - k], joined, piece[k:]])
    return out


def laptop_mic(x: FloatArray) -> FloatArray:
    """16 kHz audio through a cheap laptop microphone: 400-6000 Hz, energy kept."""
    return energy_kept(band(x, RATE, 400.0, 6000.0), x)


def farfield(x: FloatArray, drr_db: float = -6.0) -> FloatArray:
    """16 kHz audio from a phone across a living room: the direct sound dulled (under
    4 kHz) ``drr_db`` against the room's reverberation (sox ``reverb -w 70 60 80 0 20``),
    energy kept."""
    direct = energy_kept(_lowpass(x, 4000.0), x)
    room = energy_kept(sox_effects(x, RATE, "reverb", "-w", "70", "60", "80", "0", "20"), x)
    return energy_kept(direct * 10 ** (drr_db / 20) + room, x)
