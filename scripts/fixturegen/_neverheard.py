"""The three sets of a never-heard recipe (``sets/adversarial6.toml`` on), for the two
high-risk challenges, the word ("say confirm") and the one-time code ("say the code four,
seven, two"): what is not a yes (`not_yes_set`), true confirmations in two takes
(`dialogues`, `confirmation_set`) and answers of every kind (`answer_set`), all rendered by
one `Rig`, as a `Plan` says (read from the recipe by `fixturegen._plans`).

Every fixture answering a code request has ``"code"`` (the digits asked for) after its
``condition``; files of noise alone (`NoiseRow`) close the first and the last set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._audio import RATE, FloatArray, peak_limited
from ._codes import CODE_FORMS, check_codes, code_phrase, say
from ._fresh import check_fresh
from ._scene import NoiseMaker, mixed, noise_alone
from ._sets import (
    CHALLENGE,
    CONFIRM,
    REJECT,
    Render,
    Slot,
    generate,
    write_manifest,
    yes,
)
from ._voices import Voice

__all__ = [
    "Dialogue",
    "Line",
    "NoiseRow",
    "Plan",
    "Rig",
    "answer_set",
    "close_set",
    "confirmation_set",
    "dialogues",
    "not_yes_set",
]

Line = Callable[[FloatArray, np.random.Generator, FloatArray], tuple[FloatArray, int]]
"""A condition's room or line: 16 kHz audio (noise and floor in), a generator and the sound
before the floor (a room that keeps the level keeps that one's) to ``(samples, rate)``."""

NoiseRow = tuple[str, float, str, str]
"""A file of noise alone: ``(kind of `Rig.makers`, level dBFS, condition whose channel it
goes through, code asked for or "")``."""


@dataclass(frozen=True, slots=True)
class Rig:
    """How the sets sound: their ``conditions`` (taken in turn), the noise of each condition
    that has one, at its SNR (`mixed`; ``by_voice``: condition to voice to the noise that
    voice is heard in instead), the room or line of each that has one, the makers of
    noise-alone files, the silence before and after the speech, the noise floor (None: none)
    and whether a file that would clip is scaled down (``peak_limit``)."""

    conditions: tuple[str, ...]
    noises: Mapping[str, tuple[NoiseMaker, float]]
    lines: Mapping[str, Line]
    makers: Mapping[str, NoiseMaker]
    lead_s: float
    trail_s: float
    floor_dbfs: float | None = -60.0
    peak_limit: bool = True
    by_voice: Mapping[str, Mapping[str, NoiseMaker]] = field(default_factory=dict)

    def channel(
        self, x: FloatArray, condition: str, rng: np.random.Generator
    ) -> tuple[FloatArray, int]:
        """``x`` (16 kHz, any noise already in) with a white floor at ``floor_dbfs``, through
        the condition's line (none: 16 kHz as it is), scaled down where it would clip
        (`peak_limited`, as an automatic gain control would) if ``peak_limit``."""
        floored = x
        if self.floor_dbfs is not None:
            floored = x + rng.normal(0.0, 10 ** (self.floor_dbfs / 20), len(x))
        line = self.lines.get(condition)
        y, rate = line(floored, rng, x) if line else (floored, RATE)
        return (peak_limited(y) if self.peak_limit else y), rate

    def render(self, seed_prefix: str) -> Render:
        """The conditions, seeded from the file name after ``seed_prefix``."""
        return mixed(
            self.noises, self.channel, seed_prefix, self.lead_s, self.trail_s, self.by_voice
        )


class Dialogue(NamedTuple):
    """A true confirmation: take 1's text, take 2's if it is said alone, the code asked for
    (or "": the word), indices of its voice and condition, and what take 2 is (``"repeat"``
    or ``"alone"``)."""

    id: str
    text: str
    alone: str
    code: str
    voice: int
    condition: int
    take2: str


def _tagged(**fields: str) -> Callable[[Slot], dict[str, Any]]:
    """The manifest fields of every slot: ``fields`` but the empty ones, in order."""
    kept = {key: item for key, item in fields.items() if item}
    return lambda _slot: dict(kept)


def _with_code(entry: dict[str, Any], code: str) -> dict[str, Any]:
    """``entry`` with ``"code": code`` after its ``condition`` (unchanged if ``code`` is
    empty)."""
    if not code:
        return entry
    out: dict[str, Any] = {}
    for key, item in entry.items():
        out[key] = item
        if key == "condition":
            out["code"] = code
    return out


def close_set(
    folder: Path,
    prefix: str,
    rig: Rig,
    entries: list[dict[str, Any]],
    noise: tuple[Sequence[NoiseRow], dict[str, Any]],
    description: str,
    voices: list[str],
) -> int:
    """Add the files of noise alone (``noise``: rows and the question they answer) to
    ``entries`` and write the manifest (the conditions: the rig's, then one ``nonspeech_``
    of each channel the noise went through); returns the number of files."""
    rows, spec = noise
    alone = noise_alone(folder, [r[:3] for r in rows], rig.makers, rig.channel, prefix, spec)
    entries += [_with_code(e, row[3]) for e, row in zip(alone, rows, strict=True)]
    nonspeech = sorted({f"nonspeech_{through}" for _, _, through, _ in rows})
    fields = {"voices": voices, "conditions": [*rig.conditions, *nonspeech]}
    write_manifest(folder, description, entries, **fields)
    return len(entries)


def not_yes_set(
    folder: Path,
    said: tuple[Sequence[tuple[str, str, str, str]], Sequence[tuple[str, str, str]]],
    voices: Mapping[str, Voice],
    rig: Rig,
    noise: tuple[Sequence[NoiseRow], dict[str, Any]],
    description: str,
) -> int:
    """Write ``folder``: the sentences ``said`` (code rows ``(id, category, code, text)``,
    then word rows ``(id, category, text)``; ids get ``code_`` and ``word_`` before them),
    none a yes to `CHALLENGE`, then ``noise``; seeds after ``folder.name + ":"``.

    Sentence j is said by voices j and j + 3 (in turn); its k-th voice's speech
    (t = 2j + k) in conditions c and c + 1, c = 2t + j // m (of m, in turn: each voice
    meets every condition). Returns the number of files.
    """
    prefix = folder.name + ":"
    names, conditions = list(voices), rig.conditions
    render = rig.render(prefix)
    codes, words = said
    rows = [(f"code_{u}", c, code, text) for u, c, code, text in codes]
    rows += [(f"word_{u}", c, "", text) for u, c, text in words]
    entries: list[dict[str, Any]] = []
    for j, (uid, category, code, text) in enumerate(rows):
        for k, voice in enumerate((names[j % len(names)], names[(j + 3) % len(names)])):
            c = 2 * (2 * j + k) + j // len(conditions)
            pair = [conditions[(c + i) % len(conditions)] for i in range(2)]
            utterance = [(uid, category, CHALLENGE, text, REJECT)]
            one = {voice: voices[voice]}
            entries += generate(folder, utterance, one, pair, render, fields=_tagged(code=code))
    return close_set(folder, prefix, rig, entries, noise, description, names)


def dialogues(
    codes: tuple[Sequence[str], int],
    words: tuple[Mapping[str, str], int],
    voices: int,
    conditions: int,
    word: str = "confirm",
) -> list[Dialogue]:
    """``count`` dialogues of each challenge (``codes``: the codes and the count; ``words``:
    the phrases by id and the count), code first. Code dialogue i says code i in form i
    (`CODE_FORMS`, both in turn) with voice 3i, in condition i + i // m (of ``voices`` and
    ``conditions`` = m), take 2 alone being the code's digits; word dialogue i says phrase i
    with voice 3i + 1 in condition i + i // m + m // 2, take 2 alone being ``word``. Take 2
    repeats take 1 or is said alone, by i // 2 + i // m: half the dialogues each."""
    out: list[Dialogue] = []

    def take2(i: int) -> str:
        return "alone" if (i // 2 + i // conditions) % 2 else "repeat"

    values, count = codes
    for i in range(count):
        code, form = values[i % len(values)], CODE_FORMS[i % len(CODE_FORMS)]
        c = (i + i // conditions) % conditions
        said, pid = code_phrase(form, code), f"code_{form}_{code}"
        out.append(Dialogue(pid, said, say(code), code, 3 * i % voices, c, take2(i)))
    phrases, count = list(words[0].items()), words[1]
    for i in range(count):
        pid, said = phrases[i % len(phrases)]
        c = (i + i // conditions + conditions // 2) % conditions
        out.append(Dialogue(f"word_{pid}", said, word, "", (3 * i + 1) % voices, c, take2(i)))
    return out


def confirmation_set(
    folder: Path,
    said: tuple[str, Sequence[Dialogue], float],
    voices: Mapping[str, Voice],
    rig: Rig,
    description: str,
) -> int:
    """Write ``folder``: the dialogues of ``said`` (seed prefix, dialogues, take 2's speed:
    resampled by it, with its own noise), two takes each, true confirmations of
    `CHALLENGE`; returns the number of files."""
    prefix, rows, speed = said
    names = list(voices)
    render = rig.render(prefix)
    entries: list[dict[str, Any]] = []
    for d in rows:
        voice, again = names[d.voice], d.alone if d.take2 == "alone" else d.text
        for take, at, text in ((1, 1.0, d.text), (2, speed, again)):
            entries += generate(
                folder,
                [(d.id, "challenge", CHALLENGE, text, yes())],
                {voice: voices[voice]},
                [rig.conditions[d.condition]],
                render,
                takes=((take, at),),
                fields=_tagged(code=d.code, take2=d.take2),
            )
    fields = {"voices": names, "conditions": list(rig.conditions), "take2": ["repeat", "alone"]}
    write_manifest(folder, description, entries, **fields)
    return len(entries)


def answer_set(
    folder: Path,
    answers: Sequence[Sequence[Any]],
    voices: Mapping[str, Voice],
    rig: Rig,
    noise: tuple[Sequence[NoiseRow], dict[str, Any]],
    description: str,
) -> int:
    """Write ``folder``: every answer (`Utterance` fields) in every voice, answer a by voice
    v in condition a + v (in turn), then ``noise``; seeds after ``folder.name + ":"``.
    Returns the number of files."""
    prefix = folder.name + ":"
    names, conditions = list(voices), rig.conditions
    render = rig.render(prefix)
    entries: list[dict[str, Any]] = []
    for a, answer in enumerate(answers):
        for v, voice in enumerate(names):
            condition = conditions[(a + v) % len(conditions)]
            entries += generate(folder, [answer], {voice: voices[voice]}, [condition], render)
    return close_set(folder, prefix, rig, entries, noise, description, names)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a never-heard recipe (``script``: its file) says, in which sets:

    - ``sets``: the folders of what is not a yes, of the confirmations, of the answers;
    - ``sentences``: the code rows ``(id, category, code, text)`` and the word rows
      ``(id, category, text)`` of the first (`not_yes_set`); ``answers``: the last's
      (`Utterance` fields, `answer_set`); ``babble``: the lines the crowd says;
    - ``codes``, ``phrases`` (the word dialogues' phrases by id) and ``counts`` (code and
      word dialogues): the confirmations (`dialogues`), take 2 resampled by ``take2_speed``,
      seeded after ``confirmation_seed``;
    - ``noise``: the files of noise alone closing the first and the last set;
    - ``descriptions``: the manifests' descriptions, a set each.
    """

    script: Path
    sets: tuple[str, str, str]
    sentences: tuple[Sequence[tuple[str, str, str, str]], Sequence[tuple[str, str, str]]]
    answers: Sequence[Sequence[Any]]
    babble: Sequence[str]
    codes: Sequence[str]
    phrases: Mapping[str, str]
    counts: tuple[int, int]
    take2_speed: float
    confirmation_seed: str
    noise: tuple[Sequence[NoiseRow], Sequence[NoiseRow]]
    descriptions: tuple[str, str, str]

    def check(self, voices: Sequence[str], conditions: Sequence[str]) -> None:
        """Refuse a sentence, answer or babble line an existing set says, a voice or
        condition name one uses, a voice or espeak setting another script uses
        (`check_fresh`), a code that is not one, and a wrong or stale code that is the code
        (`check_codes`).

        Raises:
            SystemExit: naming the fault.
        """
        codes, words = self.sentences
        texts = [t for *_, t in codes] + [t for *_, t in words]
        texts += [str(a[3]) for a in self.answers] + list(self.babble)
        check_fresh(self.script, self.sets, texts, voices, conditions)
        check_codes(self.codes, codes)

    def write(self, out: Path, voices: Mapping[str, Voice], rig: Rig) -> dict[str, int]:
        """The three sets under ``out``; the files written, by set."""
        adversarial, confirmations, heldout = self.sets
        code_count, word_count = self.counts
        said = dialogues(
            (self.codes, code_count),
            (self.phrases, word_count),
            len(voices),
            len(rig.conditions),
        )
        first, last = self.noise
        about, takes, answers = self.descriptions
        return {
            adversarial: not_yes_set(
                out / adversarial, self.sentences, voices, rig, (first, CHALLENGE), about
            ),
            confirmations: confirmation_set(
                out / confirmations,
                (self.confirmation_seed, said, self.take2_speed),
                voices,
                rig,
                takes,
            ),
            heldout: answer_set(out / heldout, self.answers, voices, rig, (last, CONFIRM), answers),
        }
