"""Does an utterance end with a rising pitch? (issue 32: a code read back as a question).

**Measured, not adopted**, so it lives with the benchmarks, not in the library: on the
development audio no threshold flags most questions while flagging at most 2 % of true
confirmations
(``bench/bench_intonation.py``; the figures are in ``bench/results_intonation.txt``).

A reading that ends with "?" is a question back, never an answer (`_challenge.QUESTION_BACK`).
Whisper tiny.en often drops the question mark: "five, two, nine?" read back with question
intonation is written "5, 2, 9". The pitch could still show it: a question read back ends
with a rising fundamental frequency (F0).

`f0_track` estimates F0 every 10 ms (numpy only): the audio is taken to 8 kHz, and each 30 ms
window's cumulative-mean-normalised difference (YIN's) is searched for the first dip under
``threshold`` at a period of 60-400 Hz, refined by a parabola. Windows more than ``quiet_db``
under the loudest tenth (or under -75 dBFS), or without such a dip, are unvoiced.

`end_rise` follows the voiced frames as *glides*: runs of voiced frames with no gap of more
than two frames and no step of more than ``max_step_st`` semitones between neighbours. A
halving, doubling or tripling error (the commonest F0 errors: an "m" at the end of "confirm"
read at three times its pitch) is a jump, so it starts a new glide instead of looking like a
rise, and noise rarely makes a smooth glide of ``min_glide`` frames. The figure
(`Intonation.rise_st`) is how far the last glide climbs from its lowest point to its end, in
semitones; a statement's last glide falls to its end (about 0), a question's climbs (clean
espeak-ng "five, two, nine?": about 4.5). A glide that ends more than ``tail_ms`` before the
region's end does not count (no figure).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["RISE_ST", "Intonation", "end_rise", "f0_track"]

Floats = npt.NDArray[np.float64]

RISE_ST = 3.0
"""Semitones: the candidate threshold of `Intonation.rising`, the lowest at which no
development set of true confirmations has more than 2 % flagged (``bench/bench_intonation.py``)."""

_RATE = 8_000
_HOP = 80  # 10 ms
_WIN = 240  # 30 ms
_FMIN, _FMAX = 60.0, 400.0
_FLOOR_DB = -75.0  # dB full scale: quieter windows are never voiced (digital silence)


@dataclass(frozen=True, slots=True)
class Intonation:
    """How an utterance's pitch ends.

    Attributes:
        rise_st: how far the last glide climbs from its lowest point to its end, in
            semitones (0 when it falls or stays level); ``None`` when no glide reaches the
            end of the speech (too little voiced).
        voiced_ms: how much of the audio was voiced.
        rising: ``rise_st`` reaches the threshold (`RISE_ST` unless given).
    """

    rise_st: float | None
    voiced_ms: float
    rising: bool


def _to_8k(x: Floats, rate: int) -> Floats:
    """``x`` at 8 kHz: its spectrum cut at 4 kHz (a downsampling) or linearly interpolated."""
    if rate == _RATE or len(x) < 2:
        return x
    n = round(len(x) * _RATE / rate)
    if n < 2:
        return np.zeros(0)
    if n < len(x):
        spectrum = np.fft.rfft(x)[: n // 2 + 1]
        return np.asarray(np.fft.irfft(spectrum, n) * (n / len(x)), dtype=np.float64)
    grid = np.linspace(0.0, len(x) - 1.0, n)
    return np.asarray(np.interp(grid, np.arange(len(x)), x), dtype=np.float64)


def f0_track(x: Floats, rate: int, *, threshold: float = 0.3, quiet_db: float = 30.0) -> Floats:
    """F0 in Hz every 10 ms of ``x`` (float samples at ``rate``), NaN where unvoiced.

    Args:
        x: the audio.
        rate: its sample rate (taken to 8 kHz first).
        threshold: a window is voiced when its normalised difference dips under this at a
            period within 60-400 Hz (YIN's aperiodicity).
        quiet_db: windows this many dB under the loudest tenth are unvoiced (and so is
            every window under -75 dB full scale).
    """
    y = _to_8k(np.asarray(x, dtype=np.float64), rate)
    tau_min = int(_RATE / _FMAX)
    tau_max = math.ceil(_RATE / _FMIN)
    span = _WIN + tau_max
    n = (len(y) - span) // _HOP + 1
    if n <= 0:
        return np.zeros(0)
    frames = y[np.arange(n)[:, None] * _HOP + np.arange(span)[None, :]]
    frames = frames - frames[:, :_WIN].mean(axis=1, keepdims=True)
    head = frames[:, :_WIN]
    diff = np.zeros((n, tau_max + 1))
    for tau in range(1, tau_max + 1):
        step = head - frames[:, tau : tau + _WIN]
        diff[:, tau] = np.einsum("ij,ij->i", step, step)
    taus = np.arange(1, tau_max + 1)
    cmnd = np.ones_like(diff)
    cmnd[:, 1:] = diff[:, 1:] * taus / np.maximum(np.cumsum(diff[:, 1:], axis=1), 1e-12)
    energy = 10.0 * np.log10(np.mean(head * head, axis=1) + 1e-12)
    loud = float(np.quantile(energy, 0.9))
    f0 = np.full(n, np.nan)
    for i in np.flatnonzero(energy >= max(loud - quiet_db, _FLOOR_DB)):
        row = cmnd[i, tau_min : tau_max + 1]
        under = np.flatnonzero(row < threshold)
        if len(under) == 0:
            continue
        t = int(under[0])
        while t + 1 < len(row) and row[t + 1] < row[t]:
            t += 1
        tau = t + tau_min
        shift = 0.0
        if tau_min < tau < tau_max:
            a, b, c = cmnd[i, tau - 1], cmnd[i, tau], cmnd[i, tau + 1]
            if a - 2.0 * b + c > 0:
                shift = 0.5 * (a - c) / (a - 2.0 * b + c)
        f0[i] = _RATE / (tau + shift)
    return f0


def end_rise(
    x: Floats,
    rate: int,
    *,
    rise_st: float = RISE_ST,
    max_step_st: float = 1.2,
    min_glide: int = 5,
    tail_ms: float = 400.0,
) -> Intonation:
    """Whether ``x`` (an utterance's speech, float samples at ``rate``) ends rising.

    Args:
        rise_st: the threshold of `Intonation.rising`.
        max_step_st: a larger step between neighbouring voiced frames starts a new glide.
        min_glide: frames (10 ms each) a glide needs to count.
        tail_ms: the last glide must end within this of the end of ``x``.
    """
    f0 = f0_track(x, rate)
    where = np.flatnonzero(np.isfinite(f0))
    voiced_ms = 10.0 * len(where)
    if len(where) < min_glide:
        return Intonation(None, voiced_ms, False)
    st = 12.0 * np.log2(f0[where] / float(np.median(f0[where])))
    breaks = np.flatnonzero((np.diff(where) > 3) | (np.abs(np.diff(st)) > max_step_st)) + 1
    glides = [g for g in np.split(np.arange(len(where)), breaks) if len(g) >= min_glide]
    if not glides or len(f0) - 1 - int(where[glides[-1][-1]]) > tail_ms / 10.0:
        return Intonation(None, voiced_ms, False)
    last = st[glides[-1]]
    rise = float(last[-1]) - float(np.min(last))
    return Intonation(rise, voiced_ms, rise >= rise_st)
