"""What the committed sets already say and use, so a new never-heard set can refuse to repeat
it: the texts (`said_before`) and the voice and condition names (`used_names`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["check_unused", "said_before", "used_names"]


def _manifests(root: Path, skip: Iterable[str]) -> list[dict[str, Any]]:
    left_out = set(skip)
    return [
        json.loads(m.read_text())
        for m in sorted(root.rglob("manifest.json"))
        if m.parent.name not in left_out
    ]


def said_before(script: Path, root: Path, skip: Iterable[str]) -> set[str]:
    """Every text a set under ``root`` says (but the sets named in ``skip``: the script's
    own), and every quoted string of the other ``make_*.py`` beside ``script`` (their
    babble lines), lower case."""
    texts: set[str] = set()
    for other in script.parent.glob("make_*.py"):
        if other.resolve() != script.resolve():
            texts |= {q.lower() for q in re.findall(r'"([^"\n]+)"', other.read_text())}
    for manifest in _manifests(root, skip):
        for entry in manifest.get("fixtures", []):
            texts.add(str(entry.get("text", "")).lower())
    return texts - {""}


def used_names(root: Path, skip: Iterable[str]) -> tuple[set[str], set[str]]:
    """The voice and condition names of every set under ``root`` but those in ``skip``."""
    voices: set[str] = set()
    conditions: set[str] = set()
    for manifest in _manifests(root, skip):
        for entry in manifest.get("fixtures", []):
            voices.add(str(entry.get("voice", "")))
            conditions.add(str(entry.get("condition", "")))
    return voices - {""}, conditions - {""}


def check_unused(
    root: Path, skip: Iterable[str], voices: Iterable[str], conditions: Iterable[str]
) -> None:
    """Refuse a voice or condition name a set under ``root`` (but ``skip``) already uses.

    Raises:
        SystemExit: naming the ones used before.
    """
    used_voices, used_conditions = used_names(root, skip)
    again = sorted(set(voices) & used_voices) + sorted(set(conditions) & used_conditions)
    if again:
        raise SystemExit(f"already used by another set: {again}")
