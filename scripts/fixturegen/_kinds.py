"""The recipe kinds besides the never-heard one (`fixturegen._plans`), written by the one
generator: `write_pair` and `write_adversarial`. The vocabulary is `fixturegen._recipe`'s.

A held-out pair (``kind = "heldout_pair"``: spoken answers and true confirmations in the same
voices, over babble, `heldout_pair`). Its keys: ``sets`` (the answers' folder, the
confirmations'), ``descriptions`` (what each is; the manifests add "never tuned on; regenerate
with ..."), ``conditions`` (the answers'; the confirmations are in `TAKE_CONDITIONS`),
``babble`` (lines), ``answers`` (``[id, category, question, text, expected]``), and the tables
``phrases`` (the confirmations by id), ``voices`` (name: voice) and ``crowd`` (``talkers``: the
voices saying ``babble`` in turn).

An adversarial set (``kind = "adversarial"``: nothing in it is a yes, `adversarial_set`). Its
keys: ``sets`` (its folder), ``description``, ``seed_prefix`` (put before every seed name; ""
if absent), ``sentences`` (``[id, category, text, fair reading]``), ``babble`` (lines) and
the table ``voices``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._adversarial import adversarial_set
from ._heldout import babblers, heldout_pair
from ._recipe import RecipeError, utterances, voice
from ._voices import Voice

__all__ = ["write_adversarial", "write_pair"]


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


def _voices(path: Path, data: dict[str, Any]) -> dict[str, Voice]:
    return {name: voice(v, f"{path}: voices.{name}") for name, v in data["voices"].items()}


def _written(out: Path, sets: list[str]) -> dict[str, int]:
    """The files each of ``sets`` has, by its manifest."""
    return {
        name: len(json.loads((out / name / "manifest.json").read_text())["fixtures"])
        for name in sets
    }
