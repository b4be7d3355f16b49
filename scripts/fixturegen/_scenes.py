"""How a recipe's sets sound, read into a `Rig` (`read_rig`, `read_crowd`: the never-heard,
scenes and plain kinds share it), and the scenes kind (``kind = "scenes"``, `write_scenes`):
sets rendered by one rig, each saying its rows in the voices and conditions its ``said_by``
assigns (``adversarial4`` and ``adversarial5`` and their held-out sets).

A rig's keys: ``conditions``, ``lead_s``, ``trail_s`` (``lead_s`` if absent), ``floor``
(false: no -60 dBFS floor; true if absent), ``peak_limit`` (false: a file that would clip is
not scaled down; true if absent), ``babble`` and the tables ``crowd`` (``talkers``: the voices
saying ``babble`` in turn), ``noises`` (condition: ``{noise = maker, snr = dB}``, with
``by_voice = {voice = name of makers}`` for the voices heard in another noise), ``lines``
(condition: steps) and ``makers`` (name: maker, for files of noise alone and ``by_voice``).

A scenes recipe's keys besides: ``fresh`` (refuse a text another set says; false if absent)
and ``set``, an array of tables, one a set:

- ``folder``, ``seed_prefix`` (put before every seed name), ``description``;
- what it says, one of: ``sentences`` (``[id, category, text]``, none a yes to the word
  challenge), ``answers`` (``[id, category, question, text, expected]``), ``phrases`` (id:
  text, true confirmations of the challenge);
- ``leave_out``: voices of the recipe that do not speak in it;
- ``said_by``: ``"each_voice"`` (row i by every voice, voice v in condition i + v, in turn),
  or ``{voices = [offsets], conditions = n}`` (row j by voices j + offset, in turn; the k-th
  of them (s = j * len(offsets) + k) in conditions n * s to n * s + n - 1, in turn, of
  ``pools[category]`` where the row's category has a pool, of ``conditions`` otherwise);
- ``takes``: ``[[take, speed], ...]`` (none: one take, unnamed); ``take2``: ``{alone =
  text}``: take 2 of half the dialogues (row i, voice v: where v + i // 2 is odd) is
  ``alone``, said after a re-prompt, and every file's ``take2`` says which (``"repeat"`` or
  ``"alone"``);
- ``noise_alone``: ``[maker, level dBFS, condition]`` rows, files of noise alone closing the
  set, answering ``noise_question`` (a question of `SPECS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._fresh import said_before
from ._heldout import babblers
from ._neverheard import Line, Rig, close_set
from ._noise import Crowd
from ._recipe import SPECS, RecipeError, line, noise_maker, utterances, voice
from ._scene import NoiseMaker
from ._sets import CHALLENGE, REJECT, Render, Slot, challenges, generate, write_manifest
from ._voices import Voice

__all__ = ["read_crowd", "read_rig", "write_scenes"]


def _table(data: Mapping[str, Any], key: str, where: object) -> dict[str, Any]:
    item = data.get(key, {})
    if not isinstance(item, dict):
        raise RecipeError(f"{where}: {key!r} must be a table, got {item!r}")
    return item


def read_crowd(path: Path, data: Mapping[str, Any]) -> Crowd | None:
    """The babble: each of ``babble`` said by the ``crowd`` talkers in turn (None: no
    crowd).

    Raises:
        RecipeError: a crowd without talkers, or a talker the vocabulary lacks.
    """
    table = data.get("crowd")
    if table is None:
        return None
    where = f"{path}: crowd.talkers"
    talkers = [voice(t, f"{where}[{i}]") for i, t in enumerate(table.get("talkers", []))]
    if not talkers:
        raise RecipeError(f"{where}: a crowd needs talkers")
    return Crowd(babblers(talkers, [str(b) for b in data.get("babble", [])]))


def read_rig(path: Path, data: Mapping[str, Any], conditions: Sequence[str]) -> Rig:
    """The rig of a recipe (see the module's docstring) for ``conditions``.

    Raises:
        RecipeError: a malformed noise, a noise or line of no condition, a ``by_voice``
            noise its makers lack, or a name the vocabulary lacks.
    """
    where, crowd = str(path), read_crowd(path, data)
    makers = {
        name: noise_maker(spec, crowd, f"{where}: makers.{name}")
        for name, spec in _table(data, "makers", path).items()
    }
    noises: dict[str, tuple[NoiseMaker, float]] = {}
    by_voice: dict[str, dict[str, NoiseMaker]] = {}
    for name, spec in _table(data, "noises", path).items():
        at = f"{where}: noises.{name}"
        if not isinstance(spec, dict) or not {"noise", "snr"} <= set(spec) <= {
            "noise",
            "snr",
            "by_voice",
        }:
            raise RecipeError(
                f"{at}: expected {{noise = maker, snr = dB[, by_voice = ...]}}, got {spec!r}"
            )
        noises[name] = (noise_maker(spec["noise"], crowd, at), float(spec["snr"]))
        instead = {str(v): str(m) for v, m in spec.get("by_voice", {}).items()}
        if set(instead.values()) - set(makers):
            raise RecipeError(f"{at}: by_voice names a maker 'makers' lacks: {instead}")
        by_voice[name] = {v: makers[m] for v, m in instead.items()}
    lines: dict[str, Line] = {
        name: line(steps, f"{where}: lines.{name}")
        for name, steps in _table(data, "lines", path).items()
    }
    unknown = sorted((set(noises) | set(lines)) - set(conditions))
    if unknown:
        raise RecipeError(f"{where}: noises or lines of no condition: {unknown}")
    try:
        lead = float(data["lead_s"])
        trail = float(data.get("trail_s", lead))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecipeError(f"{where}: 'lead_s' and 'trail_s' must be seconds ({exc!r})") from None
    floor = -60.0 if data.get("floor", True) else None
    peak_limit = bool(data.get("peak_limit", True))
    return Rig(
        tuple(conditions), noises, lines, makers, lead, trail, floor, peak_limit, by_voice
    )


def _rows(path: Path, table: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """What a set says, as `Utterance` fields."""
    if "sentences" in table:
        return [(str(u), str(c), CHALLENGE, str(t), REJECT) for u, c, t in table["sentences"]]
    if "answers" in table:
        return utterances(path, table["answers"])
    return [tuple(u) for u in challenges({str(k): str(v) for k, v in table["phrases"].items()})]


Assigned = list[tuple[int, str, list[str]]]
"""Who says a row where: ``(row, voice, conditions)`` in the order the files are written."""


def _assigned(
    said_by: object,
    rows: Sequence[tuple[Any, ...]],
    voices: Sequence[str],
    conditions: Sequence[str],
    pools: Mapping[str, Sequence[str]],
) -> Assigned:
    out: Assigned = []
    if said_by == "each_voice":
        for i in range(len(rows)):
            for v, name in enumerate(voices):
                out.append((i, name, [conditions[(i + v) % len(conditions)]]))
        return out
    if not isinstance(said_by, dict) or set(said_by) != {"voices", "conditions"}:
        raise RecipeError(
            f"said_by must be 'each_voice' or {{voices = [offsets], conditions = n}}, "
            f"got {said_by!r}"
        )
    offsets, n = [int(o) for o in said_by["voices"]], int(said_by["conditions"])
    for j, row in enumerate(rows):
        pool = pools.get(row[1], conditions)
        for k, offset in enumerate(offsets):
            s = len(offsets) * j + k
            taken = [pool[(n * s + i) % len(pool)] for i in range(n)]
            out.append((j, voices[(j + offset) % len(voices)], taken))
    return out


def _tagged(kind: str) -> Callable[[Slot], dict[str, Any]]:
    """Every file's ``take2``: ``kind``."""
    return lambda _slot: {"take2": kind}


def _one_set(
    path: Path, table: Mapping[str, Any], voices: Mapping[str, Voice], rig: Rig, out: Path
) -> int:
    """Write one set of a scenes recipe under ``out``; the number of files."""
    folder = out / str(table["folder"])
    prefix, description = str(table["seed_prefix"]), str(table["description"])
    rows = _rows(path, table)
    names = [v for v in voices if v not in set(table.get("leave_out", []))]
    pools = {str(c): [str(p) for p in pool] for c, pool in table.get("pools", {}).items()}
    said = _assigned(table["said_by"], rows, names, rig.conditions, pools)
    takes = [(int(t), float(s)) for t, s in table.get("takes", [])] or [(0, 1.0)]
    alone = table.get("take2", {}).get("alone")
    render: Render = rig.render(prefix)
    entries: list[dict[str, Any]] = []
    for i, name, conditions in said:
        uid, category, spec, text, want = rows[i]
        kind = "alone" if (names.index(name) + i // 2) % 2 else "repeat"
        fields = _tagged(kind) if alone is not None else None
        for take, speed in takes:
            again = str(alone) if take == 2 and alone is not None and kind == "alone" else text
            utterance = [(uid, category, spec, again, want)]
            entries += generate(
                folder,
                utterance,
                {name: voices[name]},
                conditions,
                render,
                takes=((take, speed),) if take else None,
                fields=fields,
            )
    if "noise_alone" in table:
        noise = [(str(k), float(level), str(c), "") for k, level, c in table["noise_alone"]]
        spec = SPECS[str(table["noise_question"])]
        return close_set(folder, prefix, rig, entries, (noise, spec), description, names)
    extra = {"take2": ["repeat", "alone"]} if alone is not None else {}
    conditions = list(rig.conditions)
    write_manifest(folder, description, entries, voices=names, conditions=conditions, **extra)
    return len(entries)


def _check_fresh(path: Path, data: Mapping[str, Any], sets: list[str]) -> None:
    """Refuse a sentence, answer or babble line another committed set says or another recipe
    quotes (the confirmations are the challenge word with fillers: some repeat by nature)."""
    texts = [str(r[3]) for t in data["set"] if "phrases" not in t for r in _rows(path, t)]
    before = said_before(path, path.resolve().parents[3] / "audio_fixtures", sets)
    again = [t for t in [*texts, *data.get("babble", [])] if str(t).lower() in before]
    if again:
        raise RecipeError(f"{path}: already said by another set: {again}")


def write_scenes(path: Path, data: dict[str, Any], out: Path) -> dict[str, int]:
    """Write the scenes recipe ``data`` (read from ``path``) under ``out``; the files
    written, by set.

    Raises:
        RecipeError: a missing or malformed key, or a name the vocabulary lacks.
    """
    try:
        sets = [str(t["folder"]) for t in data["set"]]
        conditions = [str(c) for c in data["conditions"]]
        if data.get("fresh", False):
            _check_fresh(path, data, sets)
        speakers = {n: voice(v, f"{path}: voices.{n}") for n, v in data["voices"].items()}
        rig = read_rig(path, data, conditions)
        return {t["folder"]: _one_set(path, t, speakers, rig, out) for t in data["set"]}
    except (KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise RecipeError(f"{path}: a missing or malformed key ({exc!r})") from None
