"""The fixture generator's bus, rain, vacuum-cleaner and crying-baby noise, and its pumping
gain control, earbud microphone and church (``scripts/fixturegen``, the ``adversarial9``
sets): pure signal checks, no synthesiser, no recogniser.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

pytest.importorskip("soxr")
pytest.importorskip("soundfile")

from fixturegen_rig import assert_unit_power_and_seeded, fg, needs_sox, share_under, tone


def test_a_bus_rain_a_vacuum_and_a_baby_are_unit_power_seeded_and_shaped() -> None:
    n = 3 * fg.RATE
    for make in (fg.bus, fg.rain, fg.vacuum, fg.baby):
        assert_unit_power_and_seeded(make, n)
    assert share_under(fg.bus(n, np.random.default_rng(4)), 400.0) > 0.6  # an engine
    assert share_under(fg.rain(n, np.random.default_rng(4)), 150.0) < 0.02  # no rumble
    assert share_under(fg.baby(n, np.random.default_rng(4)), 300.0) < 0.02  # a high voice
    cries = np.abs(fg.baby(n, np.random.default_rng(5)))
    frames = np.sqrt(np.mean(cries[: n // 800 * 800].reshape(-1, 800) ** 2, axis=1))
    assert np.min(frames) < 0.3 * np.max(frames)  # pauses between cries


def test_an_agc_lifts_the_quiet_parts_and_pumps() -> None:
    rate = fg.RATE
    loud, quiet = 3 * tone(300.0, rate, 1.0), 0.003 * tone(300.0, rate, 1.5)
    y = fg.agc(np.concatenate([loud, quiet]))

    def level(z: npt.NDArray[np.float64]) -> float:
        return float(20 * np.log10(np.sqrt(np.mean(z**2))))

    assert level(y[: rate // 2]) < level(loud) - 6  # loud speech brought down
    late, early = y[int(2.2 * rate) :], y[rate + rate // 10 : rate + rate // 5]
    assert level(late) > level(early) + 6  # the gain climbs slowly in the pause
    assert level(late) <= -20 + 0.5  # not past the target


@needs_sox
def test_an_earbud_and_a_church_keep_the_level_and_change_the_sound() -> None:
    x = fg.white(fg.RATE, np.random.default_rng(7)) * 0.05
    bud = fg.earbud(x)
    assert np.mean(bud**2) == pytest.approx(np.mean(x**2))
    assert share_under(bud, 200.0) < 0.01  # the band, bar what the clip adds
    clean = tone(1000.0, fg.RATE)
    spectrum = np.abs(np.fft.rfft(fg.earbud(clean)))
    assert spectrum[3000] > 1e-3 * spectrum[1000]  # the clip adds a third harmonic
    burst = np.concatenate([x[: fg.RATE // 2], np.zeros(2 * fg.RATE)])
    church = fg.church(burst)
    assert len(church) == len(burst) and np.mean(church**2) == pytest.approx(np.mean(burst**2))
    tail = church[fg.RATE : int(1.3 * fg.RATE)]
    assert 20 * np.log10(np.sqrt(np.mean(tail**2)) / 0.05) > -40  # still ringing 0.5 s on
