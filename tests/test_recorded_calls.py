"""Recorded calls as regression tests: the demo calls replay as recorded, a changed answer
fails with a readable diff (through the shipped pytest plugin), bad recordings are named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from voice_hitl.demo._demo import FIXTURES
from voice_hitl.demo._figures import GAP_TOLERANCE
from voice_hitl.demo._replay import ReplayResult
from voice_hitl.recording import RecordingError, read_recording, replay_recording
from voice_hitl.recording._summary import relaxed
from voice_hitl.recording.pytest_plugin import RecordedCall
from voice_hitl.speech.asr._native import cpu_flags

pytest.importorskip("pocketsphinx", reason="replaying recorded calls needs the 'speech' extra")

ROOT = FIXTURES.parents[1]
RECORDINGS = FIXTURES.parent / "recordings"
PHONE = RECORDINGS / "phone_call"
MEETING = RECORDINGS / "meeting"
pytestmark = pytest.mark.timeout(240)  # whole calls replayed: minutes at load 10+ on 2 cores
pytest_plugins = ["pytester"]


def test_the_phone_call_replays_as_recorded(recorded_call: RecordedCall) -> None:
    """The recording guide's example (docs/guides/recording.md): a plain test with the fixture."""
    result = recorded_call.check(PHONE)
    assert [s["tool"] for s in result.actual] == ["AskUserQuestion", "ConfirmAction"]
    assert [s["answer"]["answer"] for s in result.actual] == [500, True]
    assert [(s["by"], s["via"]) for s in result.actual] == [("caller", "speech")] * 2


async def test_the_meeting_replays_as_recorded() -> None:
    result = await replay_recording(MEETING)
    assert result.same, result.report()
    (story,) = result.actual
    assert story["approvals"] == [["alice", "approve"], ["bob", "approve"]]
    assert story["via"] == "approval" and story["by"] == "alice,bob"


def _changed_copy(tmp_path: Path) -> Path:
    """The phone call, but the caller now says forty-two where they said five hundred."""
    folder = tmp_path / "changed"
    folder.mkdir()
    manifest = json.loads((PHONE / "call.json").read_text())
    for turn in manifest["turns"]:
        turn["file"] = str((PHONE / turn["file"]).resolve())
    manifest["turns"][1]["file"] = str(FIXTURES.parent / "forty_two__piper__clean.flac")
    (folder / "call.json").write_text(json.dumps(manifest))
    return folder


def test_a_changed_answer_fails_with_a_readable_diff(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    folder = _changed_copy(tmp_path)
    pytester.makepyfile(
        f"""
        def test_call(recorded_call):
            recorded_call.check({str(folder)!r})
        """
    )
    outcome = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "default")
    outcome.assert_outcomes(failed=1)
    text = outcome.stdout.str()
    assert "the replay differs from the recording" in text
    assert "-        \"answer\": 500," in text and "+        \"answer\": 42," in text
    assert "--- recorded" in text and "+++ replayed" in text


def test_bad_recordings_are_named(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match=r"call\.json is missing"):
        read_recording(tmp_path)
    (tmp_path / "call.json").write_text("{not json")
    with pytest.raises(RecordingError, match="is not JSON"):
        read_recording(tmp_path)
    manifest = json.loads((PHONE / "call.json").read_text())
    (tmp_path / "call.json").write_text(json.dumps({**manifest, "kind": "fax"}))
    with pytest.raises(RecordingError, match="'kind' must be one of"):
        read_recording(tmp_path)
    (tmp_path / "call.json").write_text(json.dumps({**manifest, "timeout": "soon"}))
    with pytest.raises(RecordingError, match="'timeout' must be a number"):
        read_recording(tmp_path)
    (tmp_path / "call.json").write_text(json.dumps(manifest))  # turn paths relative to PHONE
    with pytest.raises(RecordingError, match=r"turn 1: .*01_01_opening.flac is missing"):
        read_recording(tmp_path)


_REPLAY_BOTH = """
import asyncio, json, sys
from voice_hitl.demo._replay import replay_recording

async def main():
    out = {}
    for folder in sys.argv[1:]:
        result = await replay_recording(folder)
        out[folder] = {"same": result.same, "report": result.report(), "actual": result.actual}
    print(json.dumps(out))

asyncio.run(main())
"""
_NATIVE_DIFFERS = {"avx512f", "avx_vnni", "amx_int8"}
"""CPU flags with which CTranslate2 or oneDNN pick other kernels than the pinned AVX2."""


@pytest.mark.timeout(300)  # two replays, ~25 s of CPU: minutes at load 10 on two cores
def test_the_recordings_replay_alike_on_the_cpus_own_kernels() -> None:
    """The recordings (made and replayed above on the pinned AVX2 kernels) replay with the
    same outcomes in a process where CTranslate2 and oneDNN pick the CPU's own kernels
    (``VOICE_HITL_ASR_ISA=native``: AVX-512 VNNI on the reference machine), near-miss gaps
    within the stated tolerance. Where those are AVX2 anyway, the replays above are the
    proof and this one is not run."""
    if not (cpu_flags() or frozenset()) & _NATIVE_DIFFERS:
        pytest.skip("this CPU's own kernels are the pinned AVX2 ones: nothing else to compare")
    env = {**os.environ, "VOICE_HITL_ASR_ISA": "native", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _REPLAY_BOTH, str(PHONE), str(MEETING)],
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=True,
    )
    replays = json.loads(done.stdout.strip().splitlines()[-1])
    for folder in (PHONE, MEETING):
        replay = replays[str(folder)]
        assert replay["same"], replay["report"]
    phone = replays[str(PHONE)]["actual"]
    recorded = relaxed(read_recording(PHONE).requests)
    assert [s["outcome"] for s in phone] == [s["outcome"] for s in recorded] == ["answered"] * 2
    gaps = [s["answer"]["evidence"]["near_miss"]["gap"] for s in (recorded[1], phone[1])]
    assert abs(gaps[0] - gaps[1]) <= GAP_TOLERANCE, gaps
    print(f"near_miss.gap: recorded (AVX2, pinned) {gaps[0]}, replayed (native) {gaps[1]}")


def _story(gap: float, near_miss: str = "passed") -> dict[str, Any]:
    answer = {
        "answer": True,
        "evidence": {"near_miss": {"gap": gap}, "layers": {"near_miss": near_miss}},
    }
    return {"tool": "ConfirmAction", "answer": answer, "model_read": {"text": answer}}


def test_gaps_compare_within_the_tolerance_and_a_flip_names_its_step() -> None:
    recording = read_recording(PHONE)
    same = ReplayResult(recording, [_story(6.18)], [_story(6.43)], "AVX2 (pinned)")
    assert same.same and same.machine_steps() == []
    assert same.actual[0]["answer"]["evidence"]["near_miss"]["gap"] == 6.43  # kept as replayed
    far = ReplayResult(recording, [_story(6.18)], [_story(5.5)], "native (picked by the CPU)")
    assert not far.same
    (step,) = far.machine_steps()
    assert "gap of 5.50 nats where the recording has 6.18 (tolerance 0.5)" in step
    report = far.report()
    assert "Whisper ran on native (picked by the CPU)" in report and step in report
    flipped = ReplayResult(recording, [_story(3.2)], [_story(2.9, "failed")], "AVX2 (pinned)")
    assert not flipped.same
    (step,) = flipped.machine_steps()
    assert "near_miss decided differently (near_miss passed recorded, near_miss failed" in step
