"""The recipe kinds besides the never-heard one (`fixturegen._plans`), written by the one
generator: `write_plain`, `write_takes`, `write_pair` and `write_adversarial`. The vocabulary is
`fixturegen._recipe`'s.

A held-out pair (``kind = "heldout_pair"``: spoken answers and true confirmations in the same
voices, over babble, `heldout_pair`). Its keys: ``sets`` (the answers' folder, the
confirmations'), ``descriptions`` (what each is; the manifests add "never tuned on; regenerate
with ..."), ``conditions`` (the answers'; the confirmations are in `TAKE_CONDITIONS`),
``babble`` (lines), ``answers`` (``[id, category, question, text, expected]``), and the tables
``phrases`` (the confirmations by id), ``voices`` (name: voice) and ``crowd`` (``talkers``: the
voices saying ``babble`` in turn).

A plain set (``kind = "plain"``: every answer in every voice and condition, `generate`). Its
keys: ``sets`` (its folder; ``"."``: the fixtures' root), ``description``, ``render`` (the
conditions' recipe: ``"tuning"`` or ``"heldout"``, `RENDERS`), ``seed_stem`` (seed from the
file's stem, not its name; false if absent), ``seed_suffix`` (seed from the stem and this: the
name a file had in the format it was made in), ``seed_prefix`` (put before every seed name;
"" if absent), ``prepare`` (what the voice's output becomes:
``"speech"``, ``"resampled"`` or ``"raw"``; ``"speech"`` if absent), ``write`` (``"flac"``
or ``"flac_float"``: the float samples clipped, not rounded first; ``"flac"`` if absent),
``conditions``, ``answers`` (``[id, category, question, text, expected]``) and the table
``voices``. A plain set may render some conditions as speech in noise instead (`mixed`): the
rig keys of `fixturegen._scenes` (``noises``, ``lead_s``, ``floor``, ``babble``, ``crowd``,
``makers``, ...) for the conditions ``noises`` names; with ``noise_field = true`` every file's
``noise`` names the noise it is in (the ``by_voice`` maker's name, or ``noise``; null in a
condition without).

A set of true confirmations in two takes (``kind = "takes"``: every phrase in every voice
and condition of `render_take`, takes `TAKES`). Its keys: ``sets`` (its folder),
``description``, ``conditions``, ``babble`` (``[voice, line]``: each line said by that voice
of the set), and the tables ``phrases`` (by id) and ``voices``.

An adversarial set (``kind = "adversarial"``: nothing in it is a yes, `adversarial_set`). Its
keys: ``sets`` (its folder), ``description``, ``seed_prefix`` (put before every seed name; ""
if absent), ``sentences`` (``[id, category, text, fair reading]``), ``babble`` (lines) and
the table ``voices``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ._adversarial import adversarial_set
from ._audio import FloatArray, write_flac, write_flac_float
from ._heldout import babblers, heldout_pair
from ._recipe import RecipeError, utterances, voice
from ._render import render_heldout, render_take, render_tuning
from ._scenes import read_rig
from ._sets import TAKES, Render, Slot, challenges, generate, recipe, write_manifest
from ._voices import Voice, raw, resampled, speech

T = TypeVar("T")

__all__ = [
    "PREPARES",
    "RENDERS",
    "WRITERS",
    "write_adversarial",
    "write_pair",
    "write_plain",
    "write_takes",
]


def write_pair(path: Path, data: dict[str, Any], out: Path) -> dict[str, int]:
    """Write the pair recipe ``data`` (read from ``path``) under ``out``; the files written,
    by set.

    Raises:
        RecipeError: a missing or malformed key, or a voice the vocabulary lacks.
    """
    try:
        answers_set, confirmations_set = data["sets"]
        about_answers, about_confirmations = data["descriptions"]
        said = utterances(path, data["answers"])
        phrases = {str(k): str(v) for k, v in data["phrases"].items()}
        conditions = [str(c) for c in data["conditions"]]
        lines = [str(line) for line in data["babble"]]
        talkers = [
            voice(t, f"{path}: crowd.talkers[{i}]") for i, t in enumerate(data["crowd"]["talkers"])
        ]
        voices = _voices(path, data)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise RecipeError(f"{path}: a missing or malformed key ({exc!r})") from None
    heldout_pair(
        voices,
        babblers(talkers, lines),
        (out / answers_set, about_answers, said),
        (out / confirmations_set, about_confirmations, phrases),
        f"make_set.py {path.stem}",
        conditions,
    )
    return _written(out, [answers_set, confirmations_set])


def write_adversarial(path: Path, data: dict[str, Any], out: Path) -> dict[str, int]:
    """Write the adversarial recipe ``data`` (read from ``path``) under ``out``; the files
    written, by set.

    Raises:
        RecipeError: a missing or malformed key, or a voice the vocabulary lacks.
    """
    try:
        (folder,) = data["sets"]
        sentences = [(str(u), str(c), str(t), str(f)) for u, c, t, f in data["sentences"]]
        lines = [str(line) for line in data["babble"]]
        description, prefix = str(data["description"]), str(data.get("seed_prefix", ""))
        voices = _voices(path, data)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise RecipeError(f"{path}: a missing or malformed key ({exc!r})") from None
    adversarial_set(out / folder, sentences, lines, voices, description, seed_prefix=prefix)
    return _written(out, [folder])


RENDERS = {"tuning": render_tuning, "heldout": render_heldout}
"""The conditions' recipes of a plain set, by name."""
PREPARES = {"speech": speech, "resampled": resampled, "raw": raw}
"""What a voice's output becomes before rendering, by name."""
WRITERS = {"flac": write_flac, "flac_float": write_flac_float}
"""How a plain set's files are written, by name."""


def _named(path: Path, data: dict[str, Any], key: str, default: str, known: dict[str, T]) -> T:
    name = data.get(key, default)
    if name not in known:
        raise RecipeError(f"{path}: {key!r} must be one of {sorted(known)}, got {name!r}")
    return known[name]


def write_plain(path: Path, data: dict[str, Any], out: Path) -> dict[str, int]:
    """Write the plain recipe ``data`` (read from ``path``) under ``out``; the files written,
    by set.

    Raises:
        RecipeError: a missing or malformed key, or a name the vocabulary lacks.
    """
    render = _named(path, data, "render", "", RENDERS)
    prepare = _named(path, data, "prepare", "speech", PREPARES)
    write = _named(path, data, "write", "flac", WRITERS)
    try:
        (folder,) = data["sets"]
        said = utterances(path, data["answers"])
        conditions = [str(c) for c in data["conditions"]]
        description, seed_stem = str(data["description"]), bool(data.get("seed_stem", False))
        seed_suffix, prefix = str(data.get("seed_suffix", "")), str(data.get("seed_prefix", ""))
        voices = _voices(path, data)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise RecipeError(f"{path}: a missing or malformed key ({exc!r})") from None
    where = out / folder
    run = recipe(render, seed_prefix=prefix, seed_stem=seed_stem, seed_suffix=seed_suffix)
    options: dict[str, Any] = {"prepare": prepare, "write": write}
    if "noises" in data:
        rig = read_rig(path, data, conditions)
        run = _mixed_in(run, rig.render(prefix), set(rig.noises))
        if data.get("noise_field", False):
            options["fields"] = _noise_named(data["noises"])
    entries = generate(where, said, voices, conditions, run, **options)
    write_manifest(where, description, entries, voices=list(voices), conditions=conditions)
    return {folder: len(entries)}


def _mixed_in(named: Render, mixed: Render, noisy: set[str]) -> Render:
    """``mixed`` in the conditions ``noisy``, ``named`` in the others."""

    def run(speech: FloatArray, slot: Slot) -> tuple[FloatArray, int]:
        return (mixed if slot.condition in noisy else named)(speech, slot)

    return run


def _noise_named(noises: Mapping[str, Any]) -> Callable[[Slot], dict[str, Any]]:
    """Every file's ``noise``: the name of the noise its voice is heard in (None: none)."""

    def field(slot: Slot) -> dict[str, Any]:
        spec = noises.get(slot.condition)
        if spec is None:
            return {"noise": None}
        return {"noise": str(spec.get("by_voice", {}).get(slot.voice, spec["noise"]))}

    return field


def write_takes(path: Path, data: dict[str, Any], out: Path) -> dict[str, int]:
    """Write the takes recipe ``data`` (read from ``path``) under ``out``; the files written,
    by set.

    Raises:
        RecipeError: a missing or malformed key, or a voice the vocabulary lacks.
    """
    try:
        (folder,) = data["sets"]
        phrases = {str(k): str(v) for k, v in data["phrases"].items()}
        conditions = [str(c) for c in data["conditions"]]
        description = str(data["description"])
        voices = _voices(path, data)
        babblers = [speech(voices[str(who)], str(line)) for who, line in data["babble"]]
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise RecipeError(f"{path}: a missing or malformed key ({exc!r})") from None
    where = out / folder
    run = recipe(partial(render_take, babblers=babblers))
    entries = generate(where, challenges(phrases), voices, conditions, run, takes=TAKES)
    write_manifest(where, description, entries, voices=list(voices), conditions=conditions)
    return {folder: len(entries)}


def _voices(path: Path, data: dict[str, Any]) -> dict[str, Voice]:
    return {name: voice(v, f"{path}: voices.{name}") for name, v in data["voices"].items()}


def _written(out: Path, sets: list[str]) -> dict[str, int]:
    """The files each of ``sets`` has, by its manifest."""
    return {
        name: len(json.loads((out / name / "manifest.json").read_text())["fixtures"])
        for name in sets
    }
