"""What the committed sets already say and use, so a new never-heard set can refuse to repeat
it: the texts (`said_before`), the voice and condition names (`used_names`, `check_unused`),
and all of it with the other scripts' voice names and synthesiser settings (`check_fresh`).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["check_fresh", "check_unused", "said_before", "used_names"]

_SETTING = re.compile(r"[a-z0-9-]+\+[a-z0-9_]+")
"""An espeak-ng or eSpeak language and variant pair (``en-us+m3``)."""


def _manifests(root: Path, skip: Iterable[str]) -> list[dict[str, Any]]:
    left_out = set(skip)
    return [
        json.loads(m.read_text())
        for m in sorted(root.rglob("manifest.json"))
        if m.parent.name not in left_out
    ]


def _quoted(script: Path) -> set[str]:
    """Every double-quoted string of a ``make_*.py`` on one line; of a recipe (``.toml``), its
    babble lines, voice names and its voices' and talkers' settings; lower case."""
    if script.suffix != ".toml":
        return {q.lower() for q in re.findall(r'"([^"\n]+)"', script.read_text())}
    recipe = tomllib.loads(script.read_text())
    voices = recipe.get("voices", {})
    found = [*recipe.get("babble", []), *voices]
    found += _strings([*voices.values(), *recipe.get("crowd", {}).get("talkers", [])])
    return {str(q).lower() for q in found}


def _strings(item: object) -> list[str]:
    """Every string in ``item``'s lists and tables."""
    if isinstance(item, str):
        return [item]
    if isinstance(item, dict):
        return [s for value in item.values() for s in _strings(value)]
    if isinstance(item, list):
        return [s for value in item for s in _strings(value)]
    return []


def _scripts_folder(script: Path) -> Path:
    """The ``scripts/`` folder of ``script``: a ``make_*.py`` in it, or a recipe in its
    ``fixturegen/sets/``."""
    folder = script.resolve().parent
    return folder.parents[1] if folder.name == "sets" else folder


def _quoted_by_others(script: Path) -> set[str]:
    """`_quoted` of every other ``make_*.py`` and recipe (``fixturegen/sets/*.toml``) of
    ``script``'s ``scripts/`` folder."""
    folder = _scripts_folder(script)
    others = [*folder.glob("make_*.py"), *(folder / "fixturegen" / "sets").glob("*.toml")]
    texts: set[str] = set()
    for other in others:
        if other.resolve() != script.resolve():
            texts |= _quoted(other)
    return texts


def said_before(script: Path, root: Path, skip: Iterable[str]) -> set[str]:
    """Every text a set under ``root`` says (but the sets named in ``skip``: the script's
    own), and every quoted string of the other ``make_*.py`` and recipes (`_quoted_by_others`:
    their babble lines), lower case."""
    texts = _quoted_by_others(script)
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


def check_fresh(
    script: Path,
    sets: Iterable[str],
    texts: Iterable[str],
    voices: Iterable[str],
    conditions: Iterable[str],
) -> None:
    """Refuse what the never-heard sets ``sets`` that ``script`` writes would share with the
    others: a text a committed set says or another ``make_*.py`` or recipe quotes
    (`said_before`), a voice or condition name a committed set uses (`check_unused`), and a
    voice name or an espeak language and variant pair (``"en-us+m3"``, quoted in ``script``,
    a ``make_*.py`` or a recipe) another one quotes. The committed sets are those in
    ``audio_fixtures/`` beside the ``scripts/`` folder of ``script``.

    Raises:
        SystemExit: naming what was said or used before.
    """
    sets = tuple(sets)
    root = _scripts_folder(script).parent / "audio_fixtures"
    before = said_before(script, root, sets)
    again = [t for t in texts if t.lower() in before]
    if again:
        raise SystemExit(f"already said by another set: {again}")
    voices = tuple(voices)
    check_unused(root, sets, voices, conditions)
    settings = {q for q in _quoted(script) if _SETTING.fullmatch(q)}
    quoted = sorted((settings | {v.lower() for v in voices}) & _quoted_by_others(script))
    if quoted:
        raise SystemExit(f"a voice another script uses: {quoted}")
