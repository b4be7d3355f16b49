"""The fixture generator's street, fan and typing noise, its speakerphone, Bluetooth and
muffled lines, its one-time codes and its freshness checks (``scripts/fixturegen``, the
``adversarial6`` sets): pure signal and text checks, no synthesiser, no recogniser.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("soxr")
pytest.importorskip("soundfile")

from fixturegen_rig import assert_unit_power_and_seeded, fg, needs_sox, share_under, tone


def test_street_fan_and_typing_are_unit_power_seeded_and_shaped() -> None:
    n = 2 * fg.RATE
    for make in (fg.traffic, fg.fan, fg.typing):
        assert_unit_power_and_seeded(make, n)
    assert share_under(fg.traffic(n, np.random.default_rng(4)), 1000.0) > 0.6
    assert share_under(fg.fan(n, np.random.default_rng(4)), 2500.0) > 0.95
    keys = fg.typing(n, np.random.default_rng(4))
    assert np.mean(np.abs(keys) < 1e-3) > 0.8  # clicks, silent between
    assert np.abs(keys).max() > 8.0  # and sharp


def test_a_muffled_microphone_keeps_the_energy_and_loses_the_top() -> None:
    x = fg.white(fg.RATE, np.random.default_rng(5))
    y = fg.muffled(x, 1200.0)
    assert np.mean(y**2) == pytest.approx(np.mean(x**2))
    assert share_under(y, 1450.0) > 0.999


@needs_sox
def test_a_speakerphone_narrows_the_band_and_keeps_the_energy() -> None:
    x = fg.white(fg.RATE, np.random.default_rng(6)) * 0.05
    y = fg.speakerphone(x)
    assert len(y) == len(x)
    assert np.mean(y**2) == pytest.approx(np.mean(x**2))
    assert share_under(y, 100.0) < 0.01 and share_under(y, 4150.0) > 0.97


def test_cvsd_follows_a_tone_and_bluetooth_loses_short_packets() -> None:
    x = tone(400.0, fg.TEL_RATE)
    y = fg.cvsd(x)
    assert len(y) == len(x)
    assert np.corrcoef(x[200:-200], y[200:-200])[0, 1] > 0.9
    assert np.array_equal(y, fg.cvsd(x))
    wide = tone(400.0, fg.RATE, 4.0)
    line = fg.bluetooth(wide, np.random.default_rng(7), 0.2)
    assert len(line) == len(wide) // 2  # 8 kHz
    frames = line[: len(line) // 60 * 60].reshape(-1, 60)  # 7.5 ms at 8 kHz
    lost = ~frames.any(axis=1)
    assert 0.1 < lost.mean() < 0.3


@needs_sox
def test_gsm_full_rate_in_wav_keeps_atone() -> None:
    x = tone(440.0, fg.TEL_RATE)
    y = fg.codec(x, "gsm_fr")
    assert len(y) == len(x)
    assert np.corrcoef(x, y)[0, 1] > 0.8


def test_peak_limited_scales_only_what_would_clip() -> None:
    quiet = np.array([0.1, -0.5, 0.9])
    assert np.array_equal(fg.peak_limited(quiet), quiet)
    loud = np.array([0.2, -2.0, 1.0])
    assert np.allclose(fg.peak_limited(loud), loud * 0.49)


def test_codes_are_said_and_mis_said_digit_by_digit() -> None:
    assert fg.is_code("472") and fg.is_code("727")
    assert not fg.is_code("477") and not fg.is_code("47") and not fg.is_code("4a2")
    assert fg.say("472") == "four seven two"
    assert fg.say("905", ", ") == "nine, zero, five"
    assert fg.say_tens("472") == "four seventy-two"
    for bad in ("402", "412", "470"):
        with pytest.raises(ValueError, match="no plain"):
            fg.say_tens(bad)
    assert fg.replaced("472", 2, "3") == "473"
    assert fg.swapped("472", 0) == "742" and fg.swapped("472", 1) == "427"
    assert fg.without("472", 1) == "42"
    assert fg.with_digit("472", 3, "1") == "4721" and fg.with_digit("472", 0, "1") == "1472"


def test_fresh_checks_see_what_the_other_sets_say_and_use(tmp_path: Path) -> None:
    scripts, root = tmp_path / "scripts", tmp_path / "audio_fixtures"
    scripts.mkdir()
    (scripts / "make_old.py").write_text('LINES = ("The kettle is on",)\n')
    (scripts / "make_new.py").write_text('SAID = ("never said",)\n')
    for name, text, voice in (("old", "Hello there", "v_old"), ("new", "mine", "v_new")):
        (root / name).mkdir(parents=True)
        entry = {"text": text, "voice": voice, "condition": f"c_{name}"}
        (root / name / "manifest.json").write_text(json.dumps({"fixtures": [entry]}))
    said = fg.said_before(scripts / "make_new.py", root, ["new"])
    assert said == {"the kettle is on", "hello there"}
    assert fg.used_names(root, ["new"]) == ({"v_old"}, {"c_old"})
    fg.check_unused(root, ["new"], ["v_new"], ["c_new"])
    with pytest.raises(SystemExit, match="v_old"):
        fg.check_unused(root, ["new"], ["v_old"], ["c_new"])
