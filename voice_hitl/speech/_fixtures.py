"""Recorded-answer fixtures: manifest loading, running a recogniser over them, scoring.

A manifest (``audio_fixtures/manifest.json``) lists entries with ``file``, ``voice``,
``condition``, ``category``, ``text``, ``spec`` (``{"tool", "arguments"}``, mapped by
`AnswerSpec.from_tool_call`) and ``expected``: ``{"type": "answer", "value", "choice_id"}``,
``{"type": "meta", "intent"}`` or ``{"type": "no_match"}``.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._answer import Answer, MetaAnswer, NoMatch, Understood
from ._spec import AnswerSpec
from ._understand import understand

__all__ = [
    "FixtureResult",
    "load_manifest",
    "read_audio",
    "report_json",
    "run_fixtures",
    "scored",
    "summarise",
]


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """The outcome of one fixture."""

    file: str
    voice: str
    condition: str
    category: str
    expected: str
    got: str
    transcript: str
    confidence: float
    correct: bool
    false_yes: bool
    false_accept: bool
    latency_s: float
    audio_s: float


def load_manifest(path: str | Path) -> tuple[Path, list[dict[str, Any]]]:
    """``(audio_dir, entries)`` for a fixture directory or a manifest file.

    Raises:
        FileNotFoundError: no manifest there.
        ValueError: the manifest is malformed (the message names the entry).
    """
    p = Path(path)
    manifest = p / "manifest.json" if p.is_dir() else p
    if not manifest.is_file():
        raise FileNotFoundError(f"no manifest at {manifest}")
    data = json.loads(manifest.read_text())
    entries = data.get("fixtures") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{manifest}: expected an object with a 'fixtures' list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{manifest}: fixture {i} is {type(entry).__name__}, not an object")
        missing = {"file", "spec", "expected"} - set(entry)
        if missing:
            raise ValueError(f"{manifest}: fixture {i} lacks {sorted(missing)}")
    return manifest.parent, entries


AUDIO_SUFFIXES = (".wav", ".flac")
"""Fixture audio formats: PCM WAV (the tuning fixtures) and 16-bit FLAC (the held-out and
adversarial sets)."""


def read_audio(path: str | Path) -> tuple[npt.NDArray[np.int16], int]:
    """Read a mono fixture file (WAV via `asr.read_wav`, or FLAC) as ``(pcm16, rate)``.

    Blocking; run it in a thread from async code.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a readable mono WAV or FLAC file (``AudioFormatError`` for WAV).
    """
    p = Path(path)
    if p.suffix.lower() != ".flac":
        from .asr import read_wav

        return read_wav(p)
    import soundfile

    if not p.is_file():
        raise FileNotFoundError(f"no such audio file: {p}")
    try:
        data, rate = soundfile.read(str(p), dtype="int16", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise ValueError(f"{p}: not a readable FLAC file ({exc})") from exc
    if data.shape[1] != 1:
        raise ValueError(f"{p}: expected mono audio, got {data.shape[1]} channels")
    if data.shape[0] == 0:
        raise ValueError(f"{p}: the file holds no audio (zero length)")
    return np.ascontiguousarray(data[:, 0]), int(rate)


def _describe(expected: dict[str, Any]) -> str:
    kind = expected.get("type")
    if kind == "answer":
        return f"{expected.get('choice_id') or expected.get('value')!s}"
    if kind == "meta":
        return f"<{expected.get('intent')}>"
    return "<reject>"


def _describe_result(result: Understood) -> str:
    if isinstance(result, Answer):
        return f"{result.choice_id or result.value!s}"
    if isinstance(result, MetaAnswer):
        return f"<{result.intent}>"
    return f"<reject:{result.reason}>"


def scored(expected: dict[str, Any], result: Understood) -> tuple[bool, bool, bool]:
    """``(correct, false_yes, false_accept)`` for a result against a manifest expectation."""
    kind = expected.get("type")
    if kind == "answer":
        want = expected.get("value")
        correct = (
            isinstance(result, Answer)
            and result.choice_id == expected.get("choice_id")
            and isinstance(result.value, bool) == isinstance(want, bool)
            and result.value == want
        )
    elif kind == "meta":
        correct = isinstance(result, MetaAnswer) and result.intent == expected.get("intent")
    else:
        correct = isinstance(result, NoMatch)
    is_yes = isinstance(result, Answer) and result.value is True
    false_yes = is_yes and expected.get("value") is not True
    false_accept = kind == "no_match" and not isinstance(result, NoMatch)
    return bool(correct), false_yes, false_accept


Recognise = Callable[[Path, AnswerSpec], Awaitable[tuple[str, float, float]]]
"""``(wav_path, spec) -> (transcript, score, audio_seconds)``."""


async def run_fixtures(
    audio_dir: Path,
    entries: list[dict[str, Any]],
    recognise: Recognise,
    progress: Callable[[int, int], None] | None = None,
) -> list[FixtureResult]:
    """Recognise and understand every fixture, one at a time.

    Cancellation:
        Safe: stops after the fixture in flight; results so far are discarded.
    """
    results: list[FixtureResult] = []
    for i, entry in enumerate(entries):
        spec_json = entry["spec"]
        spec = AnswerSpec.from_tool_call(spec_json["tool"], spec_json["arguments"])
        start = time.perf_counter()
        transcript, _score, audio_s = await recognise(audio_dir / entry["file"], spec)
        result = understand(transcript, spec)
        latency = time.perf_counter() - start
        correct, false_yes, false_accept = scored(entry["expected"], result)
        confidence = 0.0 if isinstance(result, NoMatch) else result.confidence
        results.append(
            FixtureResult(
                file=entry["file"],
                voice=entry.get("voice", "?"),
                condition=entry.get("condition", "?"),
                category=entry.get("category", "?"),
                expected=_describe(entry["expected"]),
                got=_describe_result(result),
                transcript=transcript,
                confidence=confidence,
                correct=correct,
                false_yes=false_yes,
                false_accept=false_accept,
                latency_s=latency,
                audio_s=audio_s,
            )
        )
        if progress is not None:
            progress(i + 1, len(entries))
    return results


def summarise(results: list[FixtureResult]) -> dict[str, Any]:
    """Accuracy overall and per voice, condition, voice x condition and category; false
    accepts; real-time factor."""
    groups: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        groups["voice"][r.voice].append(r.correct)
        groups["condition"][r.condition].append(r.correct)
        groups["voice_condition"][f"{r.voice}/{r.condition}"].append(r.correct)
        groups["category"][r.category].append(r.correct)
    out_of_set = [r for r in results if r.expected == "<reject>"]
    negated = [r for r in results if r.category == "negated"]
    audio = sum(r.audio_s for r in results)
    return {
        "fixtures": len(results),
        "accuracy": sum(r.correct for r in results) / max(1, len(results)),
        **{name: {k: sum(v) / len(v) for k, v in sorted(g.items())} for name, g in groups.items()},
        "false_yes": sum(r.false_yes for r in results),
        "out_of_set": len(out_of_set),
        "out_of_set_false_accepts": sum(r.false_accept for r in out_of_set),
        "negated": len(negated),
        "negated_false_yes": sum(r.false_yes for r in negated),
        "rtf": sum(r.latency_s for r in results) / audio if audio else 0.0,
    }


def report_json(results: list[FixtureResult], summary: dict[str, Any]) -> str:
    """The JSON report: the summary and one row per fixture."""
    return json.dumps({"summary": summary, "results": [asdict(r) for r in results]}, indent=1)
