"""Checks for the numbers voice-hitl takes: durations, bounds and counts.

A NaN or infinite duration, or one at or below zero, silently switches protection off (a zero
hook budget fails every blocking hook open; a NaN deadline never fires and stalls the loop's
timers), so every public entry point that takes one checks it here and raises a
``ValueError`` naming the parameter.
"""

from __future__ import annotations

import math
import numbers

__all__ = [
    "MAX_SECONDS",
    "non_negative_int",
    "non_negative_seconds",
    "optional_seconds",
    "positive_seconds",
    "probability",
]


MAX_SECONDS = 10 * 365 * 86_400
"""The longest duration taken (ten years): a longer one is accepted by nothing downstream (a
request's deadline is a ``datetime``, which ``timeout=1e12`` overflows on every call)."""


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, got {type(value).__name__}")
    seconds = float(value)
    if not math.isfinite(seconds):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    if seconds > MAX_SECONDS:
        raise ValueError(
            f"{name} must be at most {MAX_SECONDS:,} seconds (ten years), got {value!r}"
        )
    return seconds


def positive_seconds(name: str, value: object) -> float:
    """``value`` as a float if it is a finite number above zero.

    Raises:
        ValueError: NaN, infinite, zero, negative, or above :data:`MAX_SECONDS` (the
            message names ``name``).
        TypeError: Not a real number.
    """
    seconds = _number(name, value)
    if seconds <= 0:
        raise ValueError(f"{name} must be above zero seconds, got {value!r}")
    return seconds


def optional_seconds(name: str, value: object) -> float | None:
    """Like :func:`positive_seconds`, but None (no bound) passes through."""
    return None if value is None else positive_seconds(name, value)


def non_negative_seconds(name: str, value: object) -> float:
    """``value`` as a float if it is a finite number at or above zero.

    Raises:
        ValueError: NaN, infinite, negative, or above :data:`MAX_SECONDS`.
        TypeError: Not a real number.
    """
    seconds = _number(name, value)
    if seconds < 0:
        raise ValueError(f"{name} must be zero or more seconds, got {value!r}")
    return seconds


def non_negative_int(name: str, value: object) -> int:
    """``value`` if it is an int at or above zero (a bool is not a count).

    Raises:
        ValueError: Negative, or a float (NaN and infinity included) instead of an int.
        TypeError: Not a number at all.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            raise ValueError(f"{name} must be a whole number (an int), got {value!r}")
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def probability(name: str, value: object) -> float:
    """``value`` as a float if it is a number in [0, 1].

    Raises:
        ValueError: NaN, or outside [0, 1].
        TypeError: Not a real number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in [0, 1], got {type(value).__name__}")
    p = float(value)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return p
