"""A recorded call's folder as a whole: loaded and checked, compared, redacted (blocking)."""

from __future__ import annotations

import difflib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._call import StoryRecord
from ._cassette import WireLine, normalised
from ._format import (
    CALLER_AUDIO,
    STORIES_FILE,
    WIRE_FILE,
    digest_file,
    read_manifest,
    verify_files,
    write_json,
    write_manifest,
)
from ._manifest import RecordingError
from ._redact import Redaction, redact_frame, redact_record
from ._summary import relaxed, summarise
from ._volatile import WireNormaliser

__all__ = [
    "LoadedCall",
    "diff_calls",
    "incomplete_at",
    "load_call",
    "load_wire",
    "redact_folder",
    "story_lines",
]


def story_lines(stories: list[dict[str, Any]]) -> list[str]:
    """Stories as the lines a diff compares."""
    return json.dumps(stories, indent=2, sort_keys=True).splitlines()


@dataclass(frozen=True)
class LoadedCall:
    """A recorded call's manifest, frames and stories, checked against the manifest."""

    folder: Path
    manifest: dict[str, Any]
    lines: list[WireLine]
    records: list[dict[str, Any]]
    stories: list[dict[str, Any]]

    def normaliser(self, *, strict: bool) -> WireNormaliser:
        """What this recording's client frames are compared without (see ``_volatile``)."""
        provider = (line.frame for line in self.lines if line.dir == "in")
        return WireNormaliser.of(self.manifest, provider, strict=strict)

    def client_frames(self, *, strict: bool) -> list[tuple[int, Any]]:
        """The agent's frames as a replay compares them, with their line numbers."""
        out = []
        normaliser = self.normaliser(strict=strict)
        for line in self.lines:
            if line.dir == "out":
                frame = normalised(line.frame, normaliser)
                if frame is not None:
                    out.append((line.number, frame))
        return out


def load_wire(folder: Path, *, torn_tail: bool = False) -> list[WireLine]:
    """The recorded frames (``torn_tail``: an unfinished last line, as a killed recorder
    leaves it, is left out rather than refused).

    Raises:
        RecordingError: A line is not a recorded frame; the message names the line.
    """
    return _read_wire(folder, torn_tail=torn_tail)[0]


def _read_wire(folder: Path, *, torn_tail: bool) -> tuple[list[WireLine], bool]:
    lines: list[WireLine] = []
    path = folder / WIRE_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="replace" if torn_tail else "strict")
    except FileNotFoundError:
        return [], False
    raws = text.splitlines()
    for number, raw in enumerate(raws, 1):
        try:
            item = json.loads(raw)
            line = WireLine(
                number,
                float(item["t"]),
                str(item["dir"]),
                int(item["conn"]),
                str(item["frame"]),
                bool(item.get("bin", False)),
            )
        except (ValueError, KeyError, TypeError) as exc:
            if torn_tail and number == len(raws) and not text.endswith("\n"):
                return lines, True
            raise RecordingError(f"{path} line {number} is not a recorded frame ({exc})") from None
        if line.dir not in ("in", "out"):
            raise RecordingError(f"{path} line {number}: 'dir' must be 'in' or 'out'")
        lines.append(line)
    return lines, False


def incomplete_at(folder: Path, manifest: dict[str, Any]) -> str:
    """Where an incomplete recording stops and why: ``incomplete at frame K of wire.jsonl
    (t=... s): <reason>``."""
    lines, torn = _read_wire(folder, torn_tail=True)
    where = f"t={lines[-1].t:.3f} s" if lines else "no frame written"
    if torn:
        where += f"; line {len(lines) + 1} was cut off mid-write"
    why = manifest.get("incomplete")
    return f"incomplete at frame {len(lines)} of {WIRE_FILE} ({where}): {why}"


def load_call(folder: str | Path, *, complete: bool = True) -> LoadedCall:
    """Load a recorded call and check every file against its manifest.

    Args:
        folder: The call's folder.
        complete: Refuse a recording that says it is incomplete (a replay cannot use it).

    Raises:
        RecordingError: Named: no manifest, a newer format version, a missing, truncated or
            edited file, a malformed line, an incomplete recording.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    problems = verify_files(folder, manifest)
    if problems:
        raise RecordingError(f"{folder}: {'; '.join(problems)}")
    if complete and not manifest["complete"]:
        raise RecordingError(
            f"{folder}: the recording is {incomplete_at(folder, manifest)}; it cannot be replayed"
        )
    try:
        stories = json.loads((folder / STORIES_FILE).read_text())
    except FileNotFoundError:
        stories = {"records": [], "stories": []}
    except ValueError as exc:
        raise RecordingError(f"{folder / STORIES_FILE} is not JSON: {exc}") from None
    if not isinstance(stories, dict):
        raise RecordingError(f"{folder / STORIES_FILE} must hold an object")
    return LoadedCall(
        folder,
        manifest,
        load_wire(folder, torn_tail=not manifest["complete"]),
        list(stories.get("records", [])),
        list(stories.get("stories", [])),
    )


def diff_calls(a: LoadedCall, b: LoadedCall, *, strict: bool = False) -> list[str]:
    """How two recordings differ: the first differing client frame and the stories' diff
    (empty when the agent sent the same frames and the requests went the same way)."""
    out: list[str] = []
    frames_a, frames_b = a.client_frames(strict=strict), b.client_frames(strict=strict)
    for index in range(max(len(frames_a), len(frames_b))):
        left = frames_a[index] if index < len(frames_a) else None
        right = frames_b[index] if index < len(frames_b) else None
        if left is None or right is None or left[1] != right[1]:
            where = f"A line {left[0] if left else '-'}, B line {right[0] if right else '-'}"
            out.append(f"first differing client frame ({where}):")
            out.append(f"  A: {json.dumps(left[1], sort_keys=True)[:600] if left else '(none)'}")
            out.append(f"  B: {json.dumps(right[1], sort_keys=True)[:600] if right else '(none)'}")
            break
    stories_a = a.stories if strict else relaxed(a.stories)
    stories_b = b.stories if strict else relaxed(b.stories)
    if stories_a != stories_b:
        out.extend(
            difflib.unified_diff(
                story_lines(stories_a),
                story_lines(stories_b),
                fromfile=str(a.folder),
                tofile=str(b.folder),
                lineterm="",
            )
        )
    return out


def redact_folder(
    call: LoadedCall, out: Path, redaction: Redaction, *, drop_audio: bool = False
) -> Path:
    """Write a redacted copy of ``call`` into the new folder ``out``.

    Raises:
        RecordingError: ``out`` exists.
    """
    if out.exists():
        raise RecordingError(f"{out} exists: redact writes a new folder")
    out.mkdir(parents=True)
    learned: dict[str, str] = {}
    with (out / WIRE_FILE).open("w", encoding="utf-8") as wire:
        raw_lines = (call.folder / WIRE_FILE).read_text(encoding="utf-8").splitlines()
        for raw in raw_lines:
            item = json.loads(raw)
            try:
                frame = json.loads(item["frame"])
            except ValueError:
                frame = None
            if frame is not None:
                item["frame"] = json.dumps(redact_frame(frame, redaction, learned))
            wire.write(json.dumps(item) + "\n")
    records = [
        StoryRecord(
            r["request_id"], r.get("at", ""), r["kind"],
            redact_record(r["kind"], dict(r["data"]), redaction, learned), float(r.get("t", 0.0)),
        )
        for r in call.records
    ]
    write_json(
        out / STORIES_FILE,
        {
            "records": [
                {"request_id": r.request_id, "at": r.at, "t": r.t, "kind": r.kind, "data": r.data}
                for r in records
            ],
            "stories": summarise(records, strict=True),
        },
    )
    if not drop_audio and (call.folder / CALLER_AUDIO).exists():
        shutil.copyfile(call.folder / CALLER_AUDIO, out / CALLER_AUDIO)
    manifest = dict(call.manifest)
    manifest["redacted"] = sorted(
        set(manifest.get("redacted", [])) | set(redaction.names)
        | ({"caller_audio"} if drop_audio else set())
    )
    files = {}
    for name in (WIRE_FILE, CALLER_AUDIO, STORIES_FILE):
        if (out / name).exists():
            size, digest = digest_file(out / name)
            files[name] = {"bytes": size, "sha256": digest}
    manifest["files"] = files
    manifest["version"] = max(manifest["version"], 3)  # the copy is sealed
    write_manifest(out, manifest)
    return out
