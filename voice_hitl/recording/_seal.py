"""The manifest's seal: the digest that covers ``manifest.json`` itself (format version 3).

The manifest lists the size and SHA-256 of every other file; its ``seal`` holds a short
digest of each of its fields (``session.instructions``, ``marks[0]``, ``files.wire.jsonl``...)
and the SHA-256 of the manifest and that table together (canonical JSON: sorted keys, no
spaces, the seal left out), so an edit anywhere in the folder is found and named: a file by
its digest in the manifest, a manifest field by its digest in the seal. A seal is a checksum,
not a signature: it catches edits and damage, not someone who recomputes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["SEAL_KEY", "seal", "seal_problems"]

SEAL_KEY = "seal"


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _parts(manifest: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each field of the manifest, one level inside its objects and lists of objects."""
    for key, value in manifest.items():
        if key == SEAL_KEY:
            continue
        if isinstance(value, dict) and value:
            for name, item in value.items():
                yield f"{key}.{name}", item
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for index, item in enumerate(value):
                yield f"{key}[{index}]", item
        else:
            yield key, value


def _unsealed(manifest: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in manifest.items() if key != SEAL_KEY}


def _fields(body: dict[str, Any]) -> dict[str, str]:
    return {path: hashlib.sha256(_canonical(v)).hexdigest()[:16] for path, v in _parts(body)}


def _digest(body: dict[str, Any], fields: Any) -> str:
    return hashlib.sha256(_canonical({"manifest": body, "fields": fields})).hexdigest()


def seal(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` with its ``seal`` (the seal of what it holds now)."""
    body = _unsealed(manifest)
    fields = _fields(body)
    digest = _digest(body, fields)
    return {**body, SEAL_KEY: {"algorithm": "sha256", "digest": digest, "fields": fields}}


def seal_problems(manifest: dict[str, Any]) -> list[str]:
    """What differs from the manifest's seal, each field named; empty when it matches."""
    found = manifest.get(SEAL_KEY)
    if not isinstance(found, dict) or not isinstance(found.get("fields"), dict):
        return ["it has no seal: its own fields cannot be checked"]
    body = _unsealed(manifest)
    expected: dict[str, Any] = found["fields"]
    if _digest(body, expected) == found.get("digest"):
        return []
    now = _fields(body)
    problems = [
        f"{path!r} differs from its seal (edited?)"
        for path, digest in now.items()
        if path in expected and expected[path] != digest
    ]
    problems += [f"{path!r} is not in its seal (added?)" for path in now if path not in expected]
    problems += [f"{path!r} is in its seal but missing (removed?)" for path in expected
                 if path not in now]
    return problems or ["its seal does not match its content (the seal was edited?)"]
