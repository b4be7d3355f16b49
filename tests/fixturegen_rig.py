"""What the fixture generator's tests share (``scripts/fixturegen``, put on the path here and
exported as ``fg``): a marker for tests that need Debian's sox, a modulated tone, the share
of a signal's power under a frequency, and the check every noise maker must pass."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import fixturegen as fg

__all__ = ["assert_unit_power_and_seeded", "fg", "needs_sox", "share_under", "tone"]

needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="needs Debian's sox")


def share_under(x: npt.NDArray[np.float64], hz: float, rate: int = fg.RATE) -> float:
    """The share of ``x``'s power below ``hz``."""
    power: npt.NDArray[np.float64] = np.abs(np.fft.rfft(x)) ** 2
    below = np.fft.rfftfreq(len(x), 1 / rate) < hz
    return float(np.sum(power[below])) / float(np.sum(power))


def tone(hz: float, rate: int, seconds: float = 1.0) -> npt.NDArray[np.float64]:
    """A ``hz`` tone at 0.3, its level swaying by half three times a second."""
    t = np.arange(int(rate * seconds)) / rate
    x: npt.NDArray[np.float64] = 0.3 * np.sin(2 * np.pi * hz * t)
    return x * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))


def assert_unit_power_and_seeded(
    make: Callable[[int, np.random.Generator], npt.NDArray[np.float64]], n: int
) -> None:
    """``make(n, rng)`` gives ``n`` samples at unit power, the same ones for the same seed."""
    x = make(n, np.random.default_rng(3))
    name = getattr(make, "__name__", repr(make))
    assert len(x) == n and np.sqrt(np.mean(x**2)) == pytest.approx(1.0), name
    assert np.array_equal(x, make(n, np.random.default_rng(3))), name
