"""The fixture generator's running water, kitchen, open-window car, TV and hall noise, and its
jitter buffer, laptop microphone and far-field lines (``scripts/fixturegen``, the
``adversarial8`` sets): pure signal checks, no synthesiser, no recogniser.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("soxr")
pytest.importorskip("soundfile")

from fixturegen_rig import assert_unit_power_and_seeded, fg, needs_sox, share_under, tone


def test_water_a_kitchen_and_an_open_car_are_unit_power_seeded_and_shaped() -> None:
    n = 3 * fg.RATE
    for make in (fg.water, fg.kitchen, fg.open_car):
        assert_unit_power_and_seeded(make, n)
    assert share_under(fg.water(n, np.random.default_rng(4)), 300.0) < 0.05  # a hiss
    assert share_under(fg.open_car(n, np.random.default_rng(4)), 400.0) > 0.7  # a rumble


@needs_sox
def test_a_tv_and_a_hall_reverberate_the_noise_they_are_given() -> None:
    n = 2 * fg.RATE
    crowd = fg.Crowd([tone(150.0 + 40 * k, fg.RATE, 1.5) for k in range(6)])
    tv = fg.television(crowd)(n, np.random.default_rng(5))
    assert len(tv) == n and np.sqrt(np.mean(tv**2)) == pytest.approx(1.0)
    assert share_under(tv, 100.0) < 0.01  # a small speaker
    burst = lambda k, _: np.concatenate([np.ones(k // 4), np.zeros(k - k // 4)])  # noqa: E731
    hall = fg.reverberated(burst, "90", "40", "100", "0", "30")(n, np.random.default_rng(5))
    assert np.sqrt(np.mean(hall**2)) == pytest.approx(1.0)
    after = hall[n // 4 + fg.RATE // 10 : n // 4 + fg.RATE // 5]
    assert np.sqrt(np.mean(after**2)) > 0.1  # still ringing 0.1 s after the burst


def test_a_jitter_buffer_repeats_and_skips_whole_frames() -> None:
    x = np.arange(20 * fg.RATE, dtype=np.float64)  # a ramp: each sample names its source
    y = fg.jitter(x, np.random.default_rng(6))
    assert np.array_equal(y, fg.jitter(x, np.random.default_rng(6)))
    steps = np.diff(y)
    frame, fade = fg.RATE // 50, fg.RATE // 200  # 20 ms frames, 5 ms cross-fades
    splices = np.sum(np.abs(steps - 1) > 1e-6) / (fade - 1)
    assert 40 < splices < 160  # four a second on average
    assert np.any(steps < 0) and np.any(steps > 2)  # frames played twice and skipped
    assert np.max(np.abs(steps)) < (frame + fade) / (fade - 1) + 1.01  # a frame at most
    assert 0 < abs(len(y) - len(x)) < 40 * frame  # longer or shorter, not by much


@needs_sox
def test_a_laptop_mic_and_a_far_field_keep_the_level_and_change_the_sound() -> None:
    x = fg.white(fg.RATE, np.random.default_rng(7)) * 0.05
    laptop = fg.laptop_mic(x)
    assert np.mean(laptop**2) == pytest.approx(np.mean(x**2))
    assert share_under(laptop, 300.0) < 1e-3
    burst = np.concatenate([x[: fg.RATE // 2], np.zeros(fg.RATE)])
    far = fg.farfield(burst)
    assert len(far) == len(burst) and np.mean(far**2) == pytest.approx(np.mean(burst**2))
    tail = far[int(0.6 * fg.RATE) : int(0.8 * fg.RATE)]
    assert 20 * np.log10(np.sqrt(np.mean(tail**2)) / 0.05) > -40  # the room rings on
