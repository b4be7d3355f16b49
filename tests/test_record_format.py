"""A recorded call's folder under stress: a full disk, the size bound, truncated and edited
files, format versions, redaction, and the ``voice-hitl recording`` command line."""

from __future__ import annotations

import asyncio
import base64
import binascii
import bz2
import errno
import gzip
import io
import json
import lzma
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("soundfile", reason="recording caller audio needs soundfile")
pytest.importorskip("google.genai", reason="the gemini extra (google-genai) is not installed")
pytest.importorskip("openai", reason="the openai extra (openai SDK types) is not installed")

from record_rig import SECRET, Bank, record, record_secret

from voice_hitl._cli import main
from voice_hitl.demo._demo import FIXTURES
from voice_hitl.recording import (
    MANIFEST_SCHEMA,
    RecordingError,
    Redaction,
    _writer,
    read_manifest,
    replay,
)

LEGACY = FIXTURES.parent / "recordings" / "phone_call"


@pytest.fixture(scope="module")
def call(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return asyncio.run(record("openai", tmp_path_factory.mktemp("good")))


def _copy(call: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(call, tmp_path / "copy"))


def _rewrite(folder: Path, **changes: Any) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, **changes}))


class _FillsUp(io.StringIO):
    """A file on a disk that fills up after ``room`` characters."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(text)


def test_a_full_disk_stops_the_recording_not_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_writer, "_open_text", lambda path: _FillsUp(4000))
    folder = asyncio.run(record("openai", tmp_path))  # the call ran to its end: 4 tool reports
    manifest = read_manifest(folder)
    assert manifest["complete"] is False
    assert manifest["incomplete"] == "the disk refused a write (No space left on device)"
    assert manifest["stats"]["dropped"] > 0
    with pytest.raises(RecordingError, match=r"the recording is incomplete .*No space left"):
        asyncio.run(replay(folder, agent=Bank))


def test_the_size_bound_stops_the_recording_not_the_call(tmp_path: Path) -> None:
    folder = asyncio.run(record("openai", tmp_path, max_bytes=20_000))
    manifest = read_manifest(folder)
    assert manifest["incomplete"] == "the size bound (20000 bytes) was reached"
    assert manifest["stats"]["bytes"] <= 20_000
    stories = json.loads((folder / "stories.json").read_text())["stories"]
    assert len(stories) == 2  # the stories are kept whole


def test_a_truncated_or_edited_file_is_refused_by_name(call: Path, tmp_path: Path) -> None:
    folder = _copy(call, tmp_path)
    wire = folder / "wire.jsonl"
    text = wire.read_text()
    wire.write_text(text[: len(text) // 2])
    with pytest.raises(RecordingError, match=r"wire\.jsonl: \d+ bytes, the manifest says \d+ "):
        asyncio.run(replay(folder, agent=Bank))
    wire.write_text(text.replace("1234", "4321", 1))
    with pytest.raises(RecordingError, match=r"wire\.jsonl: its SHA-256 differs .*edited"):
        asyncio.run(replay(folder, agent=Bank))
    (folder / "stories.json").unlink()
    with pytest.raises(RecordingError, match=r"stories\.json: missing"):
        read_and_verify(folder)


def read_and_verify(folder: Path) -> None:
    from voice_hitl.recording import verify_files

    problems = verify_files(folder, read_manifest(folder))
    if problems:
        raise RecordingError("; ".join(problems))


def test_format_versions_are_named(call: Path, tmp_path: Path) -> None:
    folder = _copy(call, tmp_path)
    _rewrite(folder, version=4)
    with pytest.raises(RecordingError, match=r"format version 4 is newer than .*version 3"):
        read_manifest(folder)
    _rewrite(folder, version=1)
    with pytest.raises(RecordingError, match="format version 1 is not one this voice-hitl reads"):
        read_manifest(folder)
    with pytest.raises(RecordingError, match=r"format version 1 recording \(call\.json\)"):
        read_manifest(LEGACY)  # the demo's older format: replay_recording reads it
    _rewrite(folder, version=2, session="gone")
    with pytest.raises(RecordingError, match="'session': 'gone' is not of type 'object'"):
        read_manifest(folder)


def test_the_manifest_schema_is_published_and_met(call: Path) -> None:
    import jsonschema

    schema = json.loads((Path(_writer.__file__).parent / "manifest.schema.json").read_text())
    assert schema == MANIFEST_SCHEMA
    jsonschema.validate(read_manifest(call), schema)


def test_redaction_hooks_keep_personal_data_off_the_disk(tmp_path: Path) -> None:
    redaction = Redaction(
        arguments=lambda tool, args: {k: "***" for k in args},
        transcript=lambda text: "[said]",
    )
    folder = asyncio.run(record("openai", tmp_path, redaction=redaction))
    wire = (folder / "wire.jsonl").read_text()
    assert "move 500" not in wire and "savings" not in wire and "fee" not in wire
    frames = [json.loads(json.loads(line)["frame"]) for line in wire.splitlines()]
    calls = [f for f in frames if f.get("type") == "response.function_call_arguments.done"]
    arguments = {f["name"]: json.loads(f["arguments"]) for f in calls}
    assert arguments["ConfirmAction"] == {"action": "***"}
    stories = json.loads((folder / "stories.json").read_text())["stories"]
    assert stories[0]["arguments"] == {"action": "***"}
    assert stories[0]["answer"]["transcript"] == "[said]"
    assert read_manifest(folder)["redacted"] == ["arguments", "transcript"]


def test_the_command_line(call: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recording", "show", str(call)]) == 0
    shown = capsys.readouterr().out
    assert "provider openai model gpt-realtime; complete" in shown
    assert 'ConfirmAction {"action": "move 500 to savings"}: answered by caller-1 via dtmf' in shown
    assert main(["recording", "verify", str(call)]) == 0
    assert "intact (the manifest matches its seal; 3 files match" in capsys.readouterr().out
    assert main(["recording", "diff", str(call), str(call)]) == 0
    assert capsys.readouterr().out == "the same client frames and stories\n"

    out = tmp_path / "redacted"
    argv = ["recording", "redact", str(call), str(out), "--argument", "action", "--drop-audio"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["recording", "verify", str(out)]) == 0
    assert not (out / "caller.flac").exists()
    assert main(["recording", "diff", str(call), str(out)]) == 1
    text = capsys.readouterr().out
    assert "first differing client frame" in text  # the question read the action back...
    assert "Please confirm: [redacted]." in text
    assert '-      "action": "move 500 to savings"' in text  # ...and the story kept it

    edited = _copy(call, tmp_path)
    (edited / "stories.json").write_text("{}")
    assert main(["recording", "verify", str(edited)]) == 1
    assert "stories.json: " in capsys.readouterr().err
    _rewrite(edited, version=9)
    for argv in (["show", str(edited)], ["verify", str(edited)], ["diff", str(call), str(edited)]):
        assert main(["recording", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "format version 9 is newer" in err[0]
    assert main(["recording", "show", str(tmp_path / "nothing")]) == 2
    assert "manifest.json is missing" in capsys.readouterr().err
    assert main(["recording", "redact", str(call), str(out), "--transcripts"]) == 2
    assert "exists: redact writes a new folder" in capsys.readouterr().err


def test_an_unwritable_folder_leaves_the_call_unrecorded_not_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the recordings should go")
    folder = asyncio.run(record("openai", blocker / "calls"))  # the call ran to its end
    assert not folder.exists()
    assert "session 'openai-call' is not recorded" in caplog.text


def test_gemini_transcripts_are_redacted_in_its_frames(tmp_path: Path) -> None:
    redaction = Redaction(transcript=lambda text: "[said]")
    folder = asyncio.run(record("gemini", tmp_path, redaction=redaction))
    frames = [
        json.loads(json.loads(line)["frame"])
        for line in (folder / "wire.jsonl").read_text().splitlines()
    ]
    heard = [
        f["serverContent"]["inputTranscription"]["text"]
        for f in frames
        if "inputTranscription" in f.get("serverContent", {})
    ]
    assert heard == ["[said]"]
    spoken, operator = json.loads((folder / "stories.json").read_text())["stories"]
    assert (spoken["via"], spoken["answer"]["transcript"]) == ("speech", "[said]")
    assert spoken["model_read"]["text"]["transcript"] == "[said]"


def test_an_edit_anywhere_in_the_manifest_is_named(
    call: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seal covers the manifest itself: the instructions the replay compares and the
    keypad marks a Twilio replay presses are named when edited, exit 1, and a replay refuses."""
    folder = _copy(call, tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["version"] == 3 and manifest["seal"]["algorithm"] == "sha256"
    edited = json.loads(json.dumps(manifest))
    edited["session"]["instructions"] = "You are a pirate."
    edited["marks"][0]["keys"] = "2"
    (folder / "manifest.json").write_text(json.dumps(edited, indent=2))
    assert main(["recording", "verify", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "manifest.json: 'session.instructions' differs from its seal (edited?)" in err
    assert "manifest.json: 'marks[0]' differs from its seal (edited?)" in err
    with pytest.raises(RecordingError, match=r"'session\.instructions' differs from its seal"):
        asyncio.run(replay(folder, agent=Bank))
    del edited["seal"]["fields"]["marks[0]"]
    edited["marks"][0]["keys"] = "1"
    edited["session"]["instructions"] = manifest["session"]["instructions"]
    (folder / "manifest.json").write_text(json.dumps(edited))
    assert main(["recording", "verify", str(folder)]) == 1
    assert "'marks[0]' is not in its seal (added?)" in capsys.readouterr().err
    (folder / "manifest.json").write_text(json.dumps(manifest))  # back as recorded
    (folder / "notes.txt").write_text("a file nobody recorded")
    assert main(["recording", "verify", str(folder)]) == 1
    assert "notes.txt: not listed in the manifest (added?)" in capsys.readouterr().err


def test_a_version_2_recording_replays_and_migrates_to_a_sealed_one(
    call: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(call, tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["seal"]
    (folder / "manifest.json").write_text(json.dumps({**manifest, "version": 2}))
    assert asyncio.run(replay(folder, agent=Bank)).same  # still read and replayed
    assert main(["recording", "verify", str(folder)]) == 1
    assert "format version 2 has no seal" in capsys.readouterr().err
    assert main(["recording", "migrate", str(folder)]) == 0
    assert "sealed as format version 3" in capsys.readouterr().out
    assert main(["recording", "verify", str(folder)]) == 0
    assert main(["recording", "migrate", str(folder)]) == 2
    assert "needs no migration" in capsys.readouterr().err


def _decoded(where: str, raw: bytes, depth: int = 0) -> Iterator[tuple[str, bytes]]:
    """``raw`` and everything it holds: decompressed, every JSON string (JSON text inside
    strings opened too), every base64 blob decoded."""
    yield where, raw
    if depth > 4:
        return
    for name, opener in (("gzip", gzip.decompress), ("zlib", zlib.decompress),
                         ("bz2", bz2.decompress), ("lzma", lzma.decompress)):
        try:
            inner = opener(raw)
        except Exception:  # not compressed that way
            continue
        yield from _decoded(f"{where} ({name})", inner, depth + 1)
    text = raw.decode("utf-8", "replace")
    for number, line in enumerate(text.splitlines() or [text], 1):
        try:
            value = json.loads(line if len(text.splitlines()) > 1 else text)
        except ValueError:
            continue
        for string in _strings(value):
            yield f"{where} line {number}", string.encode()
            yield from _decoded(f"{where} line {number} (JSON text)", string.encode(), depth + 1)
            try:
                blob = base64.b64decode(string, validate=True)
            except (ValueError, binascii.Error):
                continue
            if blob:
                yield from _decoded(f"{where} line {number} (base64)", blob, depth + 1)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _where_said(folder: Path, words: str) -> list[str]:
    """Every place in the folder's bytes, decoded, where one of ``words`` is."""
    import soundfile

    found = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file():
            continue
        blobs = list(_decoded(path.name, path.read_bytes()))
        if path.suffix == ".flac":
            samples = soundfile.read(path, dtype="int16")[0]
            blobs.append((f"{path.name} (decoded)", samples.tobytes()))
        for where, blob in blobs:
            lowered = blob.lower()
            words_in = [word for word in words.lower().split() if word.encode() in lowered]
            found += [f"{where}: {word}" for word in words_in]
    return found


def test_the_search_finds_words_in_base64_and_compressed_json(tmp_path: Path) -> None:
    hidden = json.dumps({"data": base64.b64encode(gzip.compress(b'{"t": "Quixotic"}')).decode()})
    (tmp_path / "x.jsonl").write_text(hidden + "\n" + json.dumps({"u": "nothing"}) + "\n")
    found = _where_said(tmp_path, "quixotic")
    assert found and all(where.startswith("x.jsonl line 1 (base64) (gzip)") for where in found)


def _second_context(folder: Path) -> Any:
    """The context of the call's second request (the transcript of the call so far)."""
    records = json.loads((folder / "stories.json").read_text())["records"]
    return [r["data"]["context"] for r in records if r["kind"] == "opened"][1]


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_redaction_leaves_the_callers_words_nowhere(kind: str, tmp_path: Path) -> None:
    """At record time (the ``transcript`` hook) and afterwards (``redact --transcripts``),
    the secret the caller said is in no byte of the folder, decoded."""
    plain = asyncio.run(record_secret(kind, tmp_path / "plain"))
    assert len(_where_said(plain, SECRET)) > 10  # stories (context too), wire, both ways
    assert _second_context(plain)["transcript"][0]["text"] == SECRET
    redaction = Redaction(transcript=lambda text: "[said]")
    at_record = asyncio.run(record_secret(kind, tmp_path / "redacted", redaction=redaction))
    assert _where_said(at_record, SECRET) == []
    assert _second_context(at_record)["transcript"][0]["text"] == "[said]"
    stories = json.loads((at_record / "stories.json").read_text())
    assert stories["stories"][0]["answer"]["answer"] == "[said]"  # a free-text answer: the words
    out = tmp_path / "redacted-later"
    assert main(["recording", "redact", str(plain), str(out), "--transcripts"]) == 0
    assert _where_said(out, SECRET) == []
    assert main(["recording", "verify", str(out)]) == 0


def test_redaction_leaves_base64_audio_whole() -> None:
    from voice_hitl.recording._redact import redact_frame

    redaction = Redaction(transcript=lambda text: "[said]")
    learned = {"AAAA": "[said]"}  # a short word said earlier, as base64 audio can spell it
    audio = {"type": "response.output_audio.delta", "delta": "AAAA" * 100}
    assert redact_frame(audio, redaction, learned) == audio
    spoken = {"type": "response.create", "response": {"instructions": "You said AAAA."}}
    assert redact_frame(spoken, redaction, learned)["response"]["instructions"] == (
        "You said [said]."
    )
