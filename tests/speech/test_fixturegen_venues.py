"""The fixture generator's cafe noise, headset, stairwell, mobile and cordless lines, code
phrases, freshness and code checks, dialogues and rig (``scripts/fixturegen``, the
``adversarial7`` sets): pure signal and text checks, no synthesiser, no recogniser.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("soxr")
pytest.importorskip("soundfile")

from fixturegen_rig import assert_unit_power_and_seeded, fg, needs_sox, share_under, tone


def _sox_formats() -> str:
    if shutil.which("sox") is None:
        return ""
    return subprocess.run(["sox", "-h"], capture_output=True, text=True).stdout


needs_amr = pytest.mark.skipif("amr-nb" not in _sox_formats(), reason="needs sox with AMR-NB")


def test_clinks_and_a_cafe_are_unit_power_seeded_and_shaped() -> None:
    n = 3 * fg.RATE
    crowd = fg.Crowd([tone(150.0 + 40 * k, fg.RATE, 1.5) for k in range(6)])
    for make in (fg.clinks, fg.cafe(crowd)):
        assert_unit_power_and_seeded(make, n)
    clinks = fg.clinks(n, np.random.default_rng(4))
    assert share_under(clinks, 1000.0) < 0.01  # ringing, no thump
    assert np.mean(np.abs(clinks) < 1e-2) > 0.5  # silent between


@needs_sox
def test_a_headset_cuts_the_rumble_and_a_stairwell_rings_on() -> None:
    x = fg.white(fg.RATE, np.random.default_rng(5)) * 0.05
    assert share_under(fg.headset(x), 40.0) < 1e-4
    burst = np.concatenate([x[: fg.RATE // 2], np.zeros(fg.RATE)])
    y = fg.stairwell(burst)
    assert len(y) == len(burst)
    assert np.mean(y**2) == pytest.approx(np.mean(burst**2))
    tail = y[int(0.7 * fg.RATE) : int(0.9 * fg.RATE)]
    assert 20 * np.log10(np.sqrt(np.mean(tail**2)) / 0.05) > -40  # still ringing 0.2 s on


@needs_sox
def test_a_cordless_line_keeps_a_tone_at_8_khz() -> None:
    x = tone(500.0, fg.RATE)
    y = fg.cordless(x)
    assert len(y) == len(x) // 2
    ref = fg.telephone(x)[: len(y)]
    assert np.corrcoef(ref[200:-200], y[200:-200])[0, 1] > 0.9


@needs_amr
def test_a_mobile_line_loses_whole_frames() -> None:
    x = tone(500.0, fg.RATE, 8.0)
    y = fg.mobile(x, np.random.default_rng(6), 0.2)
    frames = y[: len(y) // 160 * 160].reshape(-1, 160)  # 20 ms at 8 kHz
    lost = ~frames.any(axis=1)
    assert 0.1 < lost.mean() < 0.3


def test_codes_are_said_in_every_form_and_a_wrong_one_must_be_wrong() -> None:
    said = [fg.code_phrase(form, "358") for form in fg.CODE_FORMS]
    assert said == [
        "three five eight",
        "three, five, eight",
        "uh, three five eight",
        "three five eight, please",
        "yes, three five eight",
        "the code is three five eight",
        "three fifty-eight",
    ]
    fg.check_codes(["358"], [("off", "wrong_code", "358", "three six eight")])
    fg.check_codes(["358"], [("fine", "code_defer", "358", "three five eight, later")])
    with pytest.raises(SystemExit, match="off"):
        fg.check_codes(["358"], [("off", "stale_code", "358", "three, five, eight?")])
    with pytest.raises(SystemExit, match="not a code"):
        fg.check_codes(["355"], [])


def test_fresh_sets_refuse_another_scripts_voice_and_setting(tmp_path: Path) -> None:
    scripts, root = tmp_path / "scripts", tmp_path / "audio_fixtures"
    scripts.mkdir()
    root.mkdir()
    (scripts / "make_old.py").write_text('V = {"v_old": espeak("en-us+Lee", 150)}\n')
    new = scripts / "make_new.py"
    new.write_text('V = {"v_new": espeak("en-us+Mike", 150)}\n')
    fg.check_fresh(new, ["new"], ["a fresh line"], ["v_new"], ["c_new"])
    with pytest.raises(SystemExit, match="v_old"):
        fg.check_fresh(new, ["new"], ["a fresh line"], ["v_old"], ["c_new"])
    new.write_text('V = {"v_new": espeak("en-us+Lee", 150)}\n')
    with pytest.raises(SystemExit, match=r"en-us\+lee"):
        fg.check_fresh(new, ["new"], ["a fresh line"], ["v_new"], ["c_new"])


def test_dialogues_balance_voices_conditions_and_second_takes() -> None:
    phrases = {f"p{i}": f"phrase {i}" for i in range(7)}
    said = fg.dialogues((["358", "694"], 16), (phrases, 40), 8, 8)
    codes, words = said[:16], said[16:]
    assert len(words) == 40 and {d.code for d in words} == {""}
    assert Counter(d.code for d in codes) == {"358": 8, "694": 8}
    assert {d.alone for d in words} == {"confirm"} and codes[1].alone == "six nine four"
    for part in (codes, words):
        assert Counter(d.take2 for d in part)["alone"] == len(part) // 2
        assert {d.voice for d in part} == set(range(8))
        assert {d.condition for d in part} == set(range(8))
    assert len({(d.id, d.voice, d.condition) for d in said}) == len(said)


def test_a_rig_floors_runs_the_line_and_limits_the_peak() -> None:
    def loud(
        x: fg.FloatArray, _: np.random.Generator, _dry: fg.FloatArray
    ) -> tuple[fg.FloatArray, int]:
        return x * 4.0, fg.TEL_RATE

    rig = fg.Rig(("plain", "loud"), {}, {"loud": loud}, {}, 0.1, 0.1)
    x = tone(300.0, fg.RATE)
    y, rate = rig.channel(x, "plain", np.random.default_rng(7))
    assert rate == fg.RATE and 0 < np.max(np.abs(y - x)) < 0.01  # the -60 dBFS floor
    y, rate = rig.channel(x, "loud", np.random.default_rng(7))
    assert rate == fg.TEL_RATE and np.max(np.abs(y)) == pytest.approx(0.98)
