"""The speech gate's SNR estimate: the speech windows' power over the noise's mean power.

One function, `snr_db`, serves every path that judges audio: `SpeechGate.measure` (the
embedded recogniser's utterances and, through `TurnAudio`, the caller audio a provider
transcribed).

The noise power is the *mean* power of the windows the VAD calls non-speech, not a low
percentile of them. A percentile reads the mean only when a window's power barely varies, as
for white noise (512 independent samples per 32 ms window: the quietest tenth lies 0.3 dB
under the mean). Pink and brown noise keep most of their power in a few low-frequency
components per window (brown: under 200 Hz, a handful of cycles per window), so their window
powers spread widely: the quietest tenth, the floor used before, lay 2.4 dB (pink) and 3.2 dB
(brown) under the noise's mean power, and 3 dB pink noise read 6 dB (issue 32, item 2).

The mean is guarded against speech counted as noise: windows within ``guard`` windows of a
speech window are left out (the VAD's onset lag and hangover), and so are windows more than
``outlier`` times the median of the rest (a word the VAD missed). Where fewer than
``min_quiet`` windows remain (babble: the VAD hears speech almost throughout), the noise is
the mean of the quietest ``quietest`` share of all windows.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["noise_power", "quietest_tenth", "snr_db"]

Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def _near(speech: Mask, guard: int) -> Mask:
    """``speech`` widened by ``guard`` windows on either side."""
    near = speech.copy()
    for k in range(1, min(guard, len(speech) - 1) + 1):
        near[k:] |= speech[:-k]
        near[:-k] |= speech[k:]
    return near


def noise_power(
    power: Floats,
    speech: Mask,
    *,
    guard: int = 2,
    min_quiet: int = 8,
    outlier: float = 10.0,
    quietest: float = 0.3,
) -> float:
    """The noise's mean power per window (see the module docstring).

    Args:
        power: each window's mean power (positive).
        speech: which windows the VAD calls speech (as long as ``power``).

    Raises:
        ValueError: no windows.
    """
    if len(power) == 0:
        raise ValueError("no windows")
    quiet = power[~_near(speech, guard)]
    if len(quiet) >= min_quiet:
        kept = quiet[quiet <= outlier * float(np.median(quiet))]
        return float(np.mean(kept))
    k = max(1, round(len(power) * quietest))
    return float(np.mean(np.sort(power)[:k]))


def quietest_tenth(power: Floats, speech: Mask) -> float:
    """The noise floor the gate used before issue 32 item 2: the quietest tenth of the
    non-speech windows (of all windows when fewer than 3 are non-speech). It under-reads
    pink and brown noise (see the module docstring); `_no_support`'s check was tuned on it
    and keeps it, and ``bench/bench_snr.py`` prints it beside `noise_power`."""
    rest = power[~speech] if (~speech).sum() >= 3 else power
    return float(np.quantile(rest, 0.1))


def snr_db(power: Floats, speech: Mask, noise: float | None = None) -> float:
    """Speech over noise, in dB, clamped to 0..60; 0 when no window is speech.

    A speech window carries the noise too (its power is speech plus noise), so the noise is
    subtracted before the ratio is taken: ``(S + N - N) / N``. ``noise`` is the noise's
    power per window; by default `noise_power`'s estimate.
    """
    if not speech.any():
        return 0.0
    if noise is None:
        noise = noise_power(power, speech)
    loud = float(np.mean(power[speech]))
    if loud <= noise * (1.0 + 1e-6):
        return 0.0
    return min(60.0, max(0.0, 10.0 * math.log10((loud - noise) / noise)))
