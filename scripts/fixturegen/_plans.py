"""A never-heard recipe (``kind = "never_heard"``: the three sets of `Plan`) read into the
`Plan`, the voices and the `Rig` that write it; `make` is the one generator's entry
(``scripts/make_set.py``).

Its keys: ``sets``, ``descriptions`` (a set each), ``lead_s``, ``trail_s``, ``take2_speed``,
``confirmation_seed``, ``codes``, ``dialogues`` (code and word dialogues), ``conditions``,
``babble``, ``code_sentences`` (``[id, category, code, text]``), ``word_sentences`` (``[id,
category, text]``), ``answers`` (``[id, category, question, text, expected]``),
``noise_alone`` and ``heldout_noise_alone`` (``[maker, level dBFS, condition, code]``), and
the tables ``phrases`` (the word dialogues' phrases by id), ``voices`` (name: voice),
``crowd`` (``talkers``: the voices saying ``babble`` in turn), ``noises`` (condition:
``{noise = maker, snr = dB}``), ``lines`` (condition: steps) and ``makers`` (name: maker,
for the files of noise alone). The vocabulary of voices, makers, steps and expected results
is `fixturegen._recipe`'s.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._kinds import write_adversarial, write_pair, write_plain, write_takes
from ._neverheard import NoiseRow, Plan, Rig
from ._recipe import RecipeError, load, recipe_path, recipes, utterances, voice
from ._scenes import read_rig, write_scenes
from ._sets import fixtures_root
from ._voices import Voice

__all__ = ["KINDS", "Recipe", "make", "read_recipe"]


class Recipe:
    """A never-heard recipe read: its `plan`, and `voices` and `rig` (made when called: they
    synthesise the crowd)."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path, self.data = path, data
        self.plan = _plan(path, data)

    def voices(self) -> dict[str, Voice]:
        """The speakers, by name, in the recipe's order."""
        table = _get(self.data, "voices", dict, self.path)
        return {name: voice(spec, f"{self.path}: voices.{name}") for name, spec in table.items()}

    def rig(self) -> Rig:
        """The conditions: their noise and SNR, rooms and lines, the makers of noise alone
        (`read_rig`)."""
        return read_rig(self.path, self.data, self.plan_conditions())

    def plan_conditions(self) -> list[str]:
        """The conditions, taken in turn."""
        return [str(c) for c in _get(self.data, "conditions", list, self.path)]


def _get(data: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    item = data.get(key)
    if not isinstance(item, kind):
        raise RecipeError(f"{path}: {key!r} must be a {kind.__name__}, got {item!r}")
    return item


def _noise_rows(rows: list[list[Any]]) -> list[NoiseRow]:
    return [(str(k), float(level), str(through), str(code)) for k, level, through, code in rows]


def _plan(path: Path, d: dict[str, Any]) -> Plan:
    if d.get("kind") != "never_heard":
        raise RecipeError(f"{path}: 'kind' must be 'never_heard', got {d.get('kind')!r}")
    try:
        answers = utterances(path, d["answers"])
        sets, descriptions = d["sets"], d["descriptions"]
        code_count, word_count = d["dialogues"]
        return Plan(
            script=path,
            sets=(sets[0], sets[1], sets[2]),
            sentences=(
                [(u, c, code, t) for u, c, code, t in d["code_sentences"]],
                [(u, c, t) for u, c, t in d["word_sentences"]],
            ),
            answers=answers,
            babble=tuple(d["babble"]),
            codes=tuple(d["codes"]),
            phrases=dict(d["phrases"]),
            counts=(int(code_count), int(word_count)),
            take2_speed=float(d["take2_speed"]),
            confirmation_seed=str(d["confirmation_seed"]),
            noise=(_noise_rows(d["noise_alone"]), _noise_rows(d["heldout_noise_alone"])),
            descriptions=(descriptions[0], descriptions[1], descriptions[2]),
        )
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise RecipeError(f"{path}: a missing or malformed key ({exc!r})") from None


def read_recipe(path: Path) -> Recipe:
    """The recipe at ``path`` (its plan checked for shape; voices and rig made on demand).

    Raises:
        RecipeError: naming what is wrong.
    """
    return Recipe(path, load(path))


def _never_heard(path: Path, data: dict[str, Any], out: Path) -> dict[str, int]:
    recipe = Recipe(path, data)
    speakers, sound = recipe.voices(), recipe.rig()
    recipe.plan.check(list(speakers), sound.conditions)
    return recipe.plan.write(out, speakers, sound)


KINDS: dict[str, Callable[[Path, dict[str, Any], Path], dict[str, int]]] = {
    "never_heard": _never_heard,
    "heldout_pair": write_pair,
    "adversarial": write_adversarial,
    "plain": write_plain,
    "takes": write_takes,
    "scenes": write_scenes,
}
"""The generators of each kind of recipe: ``(recipe file, its data, out) -> files by set``."""


def make(argv: list[str] | None = None) -> int:
    """The generator: ``make_set.py NAME [--out DIR]`` writes the sets of recipe NAME
    (``--list``: the recipes) as its ``kind`` says (`KINDS`; a never-heard recipe after its
    freshness checks, `Plan.check`); prints the files written, by set, and the time it took."""
    parser = argparse.ArgumentParser(description="Generate a fixture set from its recipe.")
    parser.add_argument("name", nargs="?", help="the recipe (scripts/fixturegen/sets/NAME.toml)")
    parser.add_argument("--out", type=Path, default=fixtures_root(), help="default: %(default)s")
    parser.add_argument("--list", action="store_true", help="list the recipes and exit")
    args = parser.parse_args(argv)
    if args.list or not args.name:
        print("\n".join(recipes()))
        return 0 if args.list else 2
    started = time.perf_counter()
    path = recipe_path(args.name)
    data = load(path)
    kind = data.get("kind")
    if kind not in KINDS:
        raise RecipeError(f"{path}: 'kind' must be one of {sorted(KINDS)}, got {kind!r}")
    counts = KINDS[str(kind)](path, data, args.out)
    for name, n in counts.items():
        print(f"{args.out / name}: {n} files")
    print(f"generated in {time.perf_counter() - started:.0f} s")
    return 0
