"""The recorded call's folder (format version 3): what each file holds and how it is checked.

A folder written by :class:`~voice_hitl.recording.CallRecorder` holds:

- ``manifest.json``: the format and voice-hitl versions, the provider and model, the session's
  instructions and tool definitions, the human-input handler's timeout and deadline policies,
  whether the recording is complete (and why not), the caller's turn boundaries and keypad
  presses, the size and SHA-256 of every other file, and its ``seal``: the SHA-256 of the
  manifest itself and a short digest of each of its fields (see :mod:`._seal`). Its JSON
  Schema is :data:`MANIFEST_SCHEMA` (``voice_hitl/recording/manifest.schema.json``).
- ``wire.jsonl``: the provider's frames both ways, one JSON object a line: ``t`` (seconds since
  the call began), ``dir`` (``in`` from the provider, ``out`` to it), ``conn`` (1 for the first
  connection, 2 after a reconnect...), ``frame`` (the text as sent, or the UTF-8 of a binary
  frame, with ``bin`` true). Caller audio appends keep their type but not their samples
  (``elided``); a frame over the size bound keeps its shape with its long strings emptied.
- ``caller.flac``: the caller's audio as the transport delivered it (16-bit mono).
- ``stories.json``: every human-input request's steps (``records``) and their summaries
  (``stories``: who answered, how, with what evidence, what the model read).

A file whose size or digest differs from the manifest is refused by name (truncated or
edited), and so is a manifest field that differs from the seal; a folder of a newer format
version is refused by version. Version 2 (the same without the seal) is still read and
replayed, but ``verify`` says its manifest cannot be checked until ``voice-hitl recording
migrate`` seals it; version 1 (the demo's ``call.json``) is read by
:func:`~voice_hitl.recording.read_recording`.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib.resources import files
from pathlib import Path
from typing import Any

from ._manifest import MANIFEST as LEGACY_MANIFEST
from ._manifest import RecordingError
from ._seal import seal, seal_problems

__all__ = [
    "CALLER_AUDIO",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "MANIFEST_SCHEMA",
    "STORIES_FILE",
    "WIRE_FILE",
    "digest_file",
    "migrate_manifest",
    "read_manifest",
    "verify_files",
    "write_json",
    "write_manifest",
]

FORMAT_NAME = "voice-hitl-call"
FORMAT_VERSION = 3
"""The recording format this voice-hitl writes (and the newest it reads; it reads 2 too)."""
UNSEALED_VERSION = 2
"""The format version before the manifest's seal."""
MANIFEST_FILE = "manifest.json"
WIRE_FILE = "wire.jsonl"
CALLER_AUDIO = "caller.flac"
STORIES_FILE = "stories.json"

MANIFEST_SCHEMA: dict[str, Any] = json.loads(
    files(__package__ or "voice_hitl.recording").joinpath("manifest.schema.json").read_text()
)
"""The manifest's JSON Schema (draft 2020-12), as published beside this module."""


def digest_file(path: Path) -> tuple[int, str]:
    """The size and SHA-256 (hex) of a file (blocking)."""
    sha = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
            size += len(chunk)
    return size, sha.hexdigest()


def write_json(path: Path, value: Any) -> None:
    """Write JSON through a temporary file so a failed write leaves the old file whole."""
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(json.dumps(value, indent=2) + "\n")
    os.replace(scratch, path)


def write_manifest(folder: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Seal ``manifest`` and write it as the folder's ``manifest.json``; the sealed manifest."""
    sealed = seal(manifest)
    write_json(folder / MANIFEST_FILE, sealed)
    return sealed


def _check_shape(manifest: dict[str, Any], where: str) -> None:
    from jsonschema import Draft202012Validator

    error = next(iter(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(manifest)), None)
    if error is not None:
        field = "/".join(str(part) for part in error.absolute_path) or "(the manifest)"
        raise RecordingError(f"{where}: {field!r}: {error.message}")


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """Load and check a recorded call's ``manifest.json`` (blocking).

    Raises:
        RecordingError: No manifest (the message says when the folder is a version-1 demo
            recording), not JSON, another format, a newer version, or a field of the wrong
            type; the message names the file and the field or version.
    """
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        if (folder / LEGACY_MANIFEST).exists():
            raise RecordingError(
                f"{folder} is a format version 1 recording ({LEGACY_MANIFEST}): read it with "
                "read_recording / replay_recording; it has no wire events to replay"
            ) from None
        raise RecordingError(
            f"{folder} is not a recorded call: {MANIFEST_FILE} is missing"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RecordingError(f"{path} is not JSON: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise RecordingError(f"{path}: 'format' must be {FORMAT_NAME!r}")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 2:
        raise RecordingError(f"{path}: format version {version!r} is not one this voice-hitl reads")
    if version > FORMAT_VERSION:
        raise RecordingError(
            f"{path}: format version {version} is newer than this voice-hitl reads "
            f"(version {FORMAT_VERSION}); upgrade voice-hitl to read it"
        )
    _check_shape(raw, str(path))
    return raw


def verify_files(folder: str | Path, manifest: dict[str, Any]) -> list[str]:
    """What is wrong with the manifest (its seal, format version 3) and the files it lists
    (blocking); empty when all match. A complete recording's unlisted files are named too."""
    folder = Path(folder)
    problems = []
    if manifest.get("version") != UNSEALED_VERSION:
        problems += [f"{MANIFEST_FILE}: {problem}" for problem in seal_problems(manifest)]
    listed = set(manifest.get("files", {}))
    if manifest.get("complete"):
        problems += [
            f"{path.name}: not listed in the manifest (added?)"
            for path in sorted(folder.iterdir())
            if path.name != MANIFEST_FILE and path.name not in listed
        ]
    for name, expected in sorted(manifest.get("files", {}).items()):
        path = folder / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            problems.append(f"{name}: a listed file must stay inside the folder")
            continue
        try:
            size, digest = digest_file(path)
        except FileNotFoundError:
            problems.append(f"{name}: missing")
            continue
        if size != expected.get("bytes"):
            problems.append(
                f"{name}: {size} bytes, the manifest says {expected.get('bytes')} (truncated?)"
            )
        elif digest != expected.get("sha256"):
            problems.append(f"{name}: its SHA-256 differs from the manifest (edited?)")
    return problems


def migrate_manifest(folder: str | Path) -> dict[str, Any]:
    """Seal a format version 2 recording's manifest as version 3, in place (blocking).

    Seal only a recording you trust: the seal records the manifest as it is now.

    Raises:
        RecordingError: Not a version 2 recording, or a listed file does not match.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest["version"] != UNSEALED_VERSION:
        raise RecordingError(f"{folder}: format version {manifest['version']} needs no migration")
    problems = verify_files(folder, manifest)
    if problems:
        raise RecordingError(f"{folder}: {'; '.join(problems)}")
    return write_manifest(folder, {**manifest, "version": FORMAT_VERSION})
