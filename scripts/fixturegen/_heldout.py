"""A held-out pair: spoken answers and true confirmations in the same voices, with babble
of talkers and lines the speakers never say (``heldout2`` to ``heldout4``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ._audio import FloatArray
from ._noise import two_talkers
from ._render import render_answer, render_take
from ._sets import TAKES, challenges, recipe, write_set
from ._voices import Voice, speech

__all__ = ["ANSWER_CONDITIONS", "TAKE_CONDITIONS", "babblers", "heldout_pair"]

ANSWER_CONDITIONS = ("clean", "white10", "babble", "telephone_8k", "telephone_16k")
"""`render_answer`'s conditions."""
TAKE_CONDITIONS = ("clean", "white10", "babble10", "telephone")
"""`render_take`'s conditions."""


def babblers(talkers: Sequence[Voice], lines: Sequence[str]) -> list[FloatArray]:
    """Each line spoken by the talkers in turn (`speech`, -20 dBFS)."""
    return [speech(talkers[i % len(talkers)], line) for i, line in enumerate(lines)]


def heldout_pair(
    voices: Mapping[str, Voice],
    babble: list[FloatArray],
    answers: tuple[Path, str, Sequence[Sequence[Any]]],
    confirmations: tuple[Path, str, Mapping[str, str]],
    script: str,
    conditions: Sequence[str] = ANSWER_CONDITIONS,
) -> None:
    """The answers (`render_answer`, in ``conditions``) and the confirmations (two takes,
    `render_take`, `TAKE_CONDITIONS`), both over `two_talkers` babble of ``babble``.

    Args:
        answers: ``(folder, what, utterances)``.
        confirmations: ``(folder, what, phrases)``.
        script: the script that made them, named in the manifests.
    """
    tail = f", never tuned on; regenerate with scripts/{script}"
    folder, what, utterances = answers
    render = recipe(partial(render_answer, babblers=babble))
    write_set(folder, what + tail, utterances, voices, conditions, render)
    folder, what, phrases = confirmations
    render = recipe(partial(render_take, babblers=babble, babble=two_talkers))
    said = challenges(phrases)
    write_set(folder, what + tail, said, voices, TAKE_CONDITIONS, render, takes=TAKES)
