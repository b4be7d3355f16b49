"""The DTMF keypad: key layout, tone frequencies and a tone generator for tests."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["COLUMN_FREQS", "KEYS", "ROW_FREQS", "generate_dtmf", "key_frequencies"]

ROW_FREQS: tuple[float, ...] = (697.0, 770.0, 852.0, 941.0)
"""Low-group (row) frequencies in Hz."""
COLUMN_FREQS: tuple[float, ...] = (1209.0, 1336.0, 1477.0, 1633.0)
"""High-group (column) frequencies in Hz."""
_LAYOUT = ("123A", "456B", "789C", "*0#D")
KEYS = "".join(_LAYOUT)
"""Every DTMF key."""


def key_frequencies(key: str) -> tuple[float, float]:
    """The (row, column) frequencies of a key.

    Raises:
        ValueError: ``key`` is not one of ``0-9 * # A-D``.
    """
    for r, row in enumerate(_LAYOUT):
        c = row.find(key.upper()) if len(key) == 1 else -1
        if c >= 0:
            return ROW_FREQS[r], COLUMN_FREQS[c]
    raise ValueError(f"not a DTMF key: {key!r} (expected one of {KEYS})")


def generate_dtmf(
    keys: str,
    sample_rate: int,
    *,
    tone_ms: float = 100.0,
    gap_ms: float = 100.0,
    level_dbfs: float = -10.0,
    twist_db: float = 0.0,
    lead_ms: float = 0.0,
    snr_db: float | None = None,
    seed: int = 0,
) -> npt.NDArray[np.int16]:
    """Synthesise keypad tones as mono PCM16.

    Args:
        keys: the keys to play, e.g. ``"123456#"``.
        sample_rate: samples per second (8000 or more).
        tone_ms: duration of each tone.
        gap_ms: silence after each tone.
        level_dbfs: peak level of the row tone relative to full scale.
        twist_db: column level minus row level.
        lead_ms: silence before the first tone.
        snr_db: if given, add white noise this many dB below the tone power.
        seed: seed of the noise generator (output is deterministic).

    Returns:
        The signal as a 1-D ``int16`` array.

    Raises:
        ValueError: a bad key, sample rate or duration.
    """
    if sample_rate < 8000:
        raise ValueError(f"sample_rate must be >= 8000 Hz, got {sample_rate}")
    if tone_ms <= 0 or gap_ms < 0 or lead_ms < 0:
        raise ValueError("tone_ms must be > 0 and gap_ms, lead_ms >= 0")
    freqs = [key_frequencies(k) for k in keys]
    n_tone = round(sample_rate * tone_ms / 1000)
    n_gap = round(sample_rate * gap_ms / 1000)
    n_lead = round(sample_rate * lead_ms / 1000)
    t = np.arange(n_tone) / sample_rate
    a_row = 10 ** (level_dbfs / 20)
    a_col = a_row * 10 ** (twist_db / 20)
    parts: list[npt.NDArray[np.float64]] = [np.zeros(n_lead)]
    for f_row, f_col in freqs:
        tone = a_row * np.sin(2 * np.pi * f_row * t) + a_col * np.sin(2 * np.pi * f_col * t)
        parts.extend([tone, np.zeros(n_gap)])
    signal = np.concatenate(parts)
    if snr_db is not None:
        tone_power = (a_row**2 + a_col**2) / 2
        sigma = np.sqrt(tone_power / 10 ** (snr_db / 10))
        signal = signal + np.random.default_rng(seed).normal(0.0, sigma, signal.shape)
    return np.clip(np.round(signal * 32767), -32768, 32767).astype(np.int16)
