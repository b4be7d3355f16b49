"""Recorded calls as regression tests: the demo calls replay as recorded, a changed answer
fails with a readable diff (through the shipped pytest plugin), bad recordings are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voice_hitl.demo._demo import FIXTURES
from voice_hitl.recording import RecordingError, read_recording, replay_recording
from voice_hitl.recording.pytest_plugin import RecordedCall

pytest.importorskip("pocketsphinx", reason="replaying recorded calls needs the 'speech' extra")

RECORDINGS = FIXTURES.parent / "recordings"
PHONE = RECORDINGS / "phone_call"
MEETING = RECORDINGS / "meeting"
pytestmark = pytest.mark.timeout(120)
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
