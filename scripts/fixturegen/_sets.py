"""What a set is: questions and expected answers, the loop that speaks and renders every
utterance in every voice and condition, and the manifest ``voice_hitl.speech._fixtures``
and the benches read.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ._audio import FloatArray, write_flac
from ._voices import Prepare, Voice, speech

__all__ = [
    "AMOUNT",
    "CHALLENGE",
    "CODE",
    "COLOUR",
    "CONFIRM",
    "PAY",
    "REJECT",
    "TAKES",
    "Render",
    "Slot",
    "Utterance",
    "challenges",
    "fixtures_root",
    "generate",
    "meta",
    "no",
    "pick",
    "recipe",
    "value",
    "write_manifest",
    "write_set",
    "yes",
]

CONFIRM: dict[str, Any] = {
    "tool": "ConfirmAction",
    "arguments": {"action": "transfer five hundred dollars"},
}
CHALLENGE: dict[str, Any] = {
    "tool": "ConfirmAction",
    "arguments": {"action": "move 500 dollars to savings"},
}
"""The high-risk question the confirmation and adversarial sets answer."""
COLOUR: dict[str, Any] = {
    "tool": "AskUserQuestion",
    "arguments": {"question": "Which colour would you like?", "choices": ["Red", "Green", "Blue"]},
}
PAY: dict[str, Any] = {
    "tool": "AskUserQuestion",
    "arguments": {
        "question": "How would you like to pay?",
        "choices": ["Credit card", "Bank transfer", "Cash"],
    },
}
AMOUNT: dict[str, Any] = {
    "tool": "AskUserQuestion",
    "arguments": {"question": "How much?", "mode": "number"},
}
CODE: dict[str, Any] = {
    "tool": "AskUserQuestion",
    "arguments": {"question": "Your code?", "mode": "digits"},
}
REJECT: dict[str, Any] = {"type": "no_match"}
TAKES: tuple[tuple[int, float], ...] = ((1, 1.0), (2, 0.95))
"""A confirmation said twice: take 2 resampled by 0.95 (5 % shorter and higher), with its own
noise."""


def yes() -> dict[str, Any]:
    return {"type": "answer", "choice_id": "yes", "value": True}


def no() -> dict[str, Any]:
    return {"type": "answer", "choice_id": "no", "value": False}


def pick(cid: str, label: str) -> dict[str, Any]:
    return {"type": "answer", "choice_id": cid, "value": label}


def value(v: Any) -> dict[str, Any]:
    return {"type": "answer", "choice_id": None, "value": v}


def meta(intent: str) -> dict[str, Any]:
    return {"type": "meta", "intent": intent}


class Utterance(NamedTuple):
    """One thing said, the question it answers, and what it must be understood as."""

    id: str
    category: str
    spec: dict[str, Any]
    text: str
    expected: dict[str, Any]


def challenges(phrases: Mapping[str, str]) -> list[Utterance]:
    """True confirmations: each phrase answers `CHALLENGE` and is a yes."""
    return [Utterance(pid, "challenge", CHALLENGE, text, yes()) for pid, text in phrases.items()]


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one rendered file goes: ``stem`` is ``id__voice__condition[__take]``."""

    id: str
    voice: str
    condition: str
    take: int | None
    stem: str
    file: str


Render = Callable[[FloatArray, Slot], tuple[FloatArray, int]]
"""Speech and its slot to ``(samples, rate)`` of the file."""


def recipe(
    render: Callable[[FloatArray, str, str], tuple[FloatArray, int]],
    *,
    seed_prefix: str = "",
    seed_stem: bool = False,
    seed_suffix: str = "",
) -> Render:
    """A ``(speech, condition, name)`` recipe of `_render` as a `Render`: the name that seeds
    it is the file's (the stem's, with ``seed_stem``; the stem and ``seed_suffix``, with that:
    a set stored in another format than it was made in keeps its seeds), after
    ``seed_prefix``."""

    def run(speech: FloatArray, slot: Slot) -> tuple[FloatArray, int]:
        name = slot.stem + seed_suffix if seed_suffix else slot.stem if seed_stem else slot.file
        return render(speech, slot.condition, seed_prefix + name)

    return run


def fixtures_root() -> Path:
    """``audio_fixtures/`` of this repository, or ``$FIXTUREGEN_ROOT`` when set (regenerate a
    set elsewhere and compare it with the committed one)."""
    default = Path(__file__).resolve().parents[2] / "audio_fixtures"
    return Path(os.environ.get("FIXTUREGEN_ROOT") or default)


def generate(
    folder: Path,
    utterances: Iterable[Sequence[Any]],
    voices: Mapping[str, Voice],
    conditions: Sequence[str],
    render: Render,
    *,
    prepare: Prepare = speech,
    takes: Sequence[tuple[int, float]] | None = None,
    suffix: str = ".flac",
    write: Callable[[Path, FloatArray, int], None] = write_flac,
    fields: Callable[[Slot], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Speak every utterance in every voice (each take at its speed), render it in every
    condition, write the files into ``folder`` and return their manifest entries.

    Args:
        utterances: `Utterance` or tuples of its fields.
        prepare: the voice's output to the speech ``render`` gets.
        takes: ``(take, speed)`` pairs; the files and entries then name the take.
        fields: extra manifest fields of a slot, placed after ``condition``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    for row in utterances:
        u = Utterance(*row)
        for voice, speak in voices.items():
            for take, speed in takes or ((None, 1.0),):
                audio = prepare(speak, u.text, speed)
                for condition in conditions:
                    stem = f"{u.id}__{voice}__{condition}" + (f"__{take}" if take else "")
                    slot = Slot(u.id, voice, condition, take, stem, stem + suffix)
                    x, rate = render(audio, slot)
                    write(folder / slot.file, x, rate)
                    entry: dict[str, Any] = {"file": slot.file, "id": u.id, "voice": voice}
                    entry["condition"] = condition
                    entry |= fields(slot) if fields else {}
                    entry |= {"take": take} if take else {}
                    entries.append(
                        entry
                        | {
                            "sample_rate": rate,
                            "category": u.category,
                            "text": u.text,
                            "spec": u.spec,
                            "expected": u.expected,
                        }
                    )
        print(f"{u.id}: done", file=sys.stderr)
    return entries


def write_manifest(
    folder: Path, description: str, entries: list[dict[str, Any]], **fields: Any
) -> None:
    """``folder/manifest.json``: the description, ``fields`` in order (``voices``,
    ``conditions``, ...), then the entries as ``fixtures``."""
    manifest = {"description": description, **fields, "fixtures": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def write_set(
    folder: Path,
    description: str,
    utterances: Iterable[Sequence[Any]],
    voices: Mapping[str, Voice],
    conditions: Sequence[str],
    render: Render,
    **options: Any,
) -> list[dict[str, Any]]:
    """`generate` the set (``options`` are its keywords), then its manifest with the voices and
    conditions; returns the entries."""
    entries = generate(folder, utterances, voices, conditions, render, **options)
    fields = {"voices": list(voices), "conditions": list(conditions)}
    write_manifest(folder, description, entries, **fields)
    return entries
