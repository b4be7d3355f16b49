"""``voice-hitl replay PATH``: run recorded fixtures through a recogniser and `understand`.

Prints a table (expected, got, confidence, latency) after a progress bar, writes a JSON
report when asked (``--report FILE``), and exits 1 when accuracy falls below the committed
baseline (``baseline.json`` beside the manifest, or ``--baseline``). Exit codes: 0 pass, 1
below baseline, 2 bad input (checked before any recognition starts: arguments, the manifest's
entries, every WAV file).

Baseline format: ``{"recognizers": {NAME: LIMITS}}`` with one entry per recogniser name of
`RECOGNIZERS`, each ``{"min_accuracy": float, "min_accuracy_by_condition": {cond: float},
"min_accuracy_by_cell": {"voice/cond": float}, "max_false_yes": int}`` (missing keys are not
checked; a recogniser without an entry is not checked). A file without ``"recognizers"`` is one
set of limits for every recogniser.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import wave
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._usage import HelpFormatter, UsageError, positive_int
from ._recognizer_names import RECOGNIZERS
from ._spec import AnswerSpec, AnswerSpecError

if TYPE_CHECKING:
    from ._fixtures import FixtureResult

__all__ = ["RECOGNIZERS", "add_replay_command", "baseline_for", "check_baseline", "replay"]


_DESCRIPTION = """\
Run recorded answer fixtures through a recogniser and understand(), print a table and a
summary, and compare with the baseline: baseline.json beside the manifest, or --baseline FILE
(per recogniser: min_accuracy, min_accuracy_by_condition, min_accuracy_by_cell,
max_false_yes).

exit codes: 0 at or above the baseline, 1 below it, 2 bad input (arguments, manifest entries
and WAV files are all checked before any recognition starts)."""


def add_replay_command(subparsers: Any) -> None:
    """Register ``replay`` on the CLI's sub-parsers."""
    p = subparsers.add_parser(
        "replay",
        help="run recorded answer fixtures through a recogniser and check the baseline",
        description=_DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument("path", type=Path, help="fixture directory or its manifest.json")
    p.add_argument(
        "--report", type=Path, default=None, help="also write a JSON report to this file"
    )
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="baseline file (default: baseline.json beside the manifest, if any)",
    )
    p.add_argument(
        "--recognizer", choices=list(RECOGNIZERS), default="whisper", help="recogniser"
    )
    p.add_argument(
        "--verify",
        choices=["yes", "all", "off"],
        default="yes",
        help="PocketSphinx: check a yes (or every answer) against a free phone loop",
    )
    p.add_argument("--voice", action="append", help="only these voices (repeatable)")
    p.add_argument("--condition", action="append", help="only these conditions (repeatable)")
    p.add_argument(
        "--limit", type=positive_int, default=None, help="first N fixtures only (N >= 1)"
    )
    p.add_argument(
        "--sample",
        type=positive_int,
        default=1,
        help="run a stratified 1/K sample, K >= 1 (rotates voice and condition across answers)",
    )
    p.add_argument("--quiet", action="store_true", help="no table, only the summary")
    p.set_defaults(handler=_main)


_EXPECTED_TYPES = ("answer", "meta", "no_match")


def check_fixtures(audio_dir: Path, entries: list[Any]) -> None:
    """Check every selected entry and its WAV file before any recognition starts.

    Raises:
        UsageError: The first bad entry or file, named with what is wrong.
    """
    for index, entry in enumerate(entries):
        where = f"fixture {index}"
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: expected an object, got {type(entry).__name__}")
        name = entry.get("file")
        if not isinstance(name, str) or not name:
            raise UsageError(f"{where}: 'file' must be a file name, got {name!r}")
        where = f"fixture {index} ({name})"
        spec = entry.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("tool"), str):
            raise UsageError(f"{where}: 'spec' must be an object with a 'tool' name")
        try:
            AnswerSpec.from_tool_call(spec["tool"], spec.get("arguments", {}))
        except (AnswerSpecError, TypeError, ValueError) as exc:
            raise UsageError(f"{where}: bad 'spec': {exc}") from None
        expected = entry.get("expected")
        if not isinstance(expected, dict) or expected.get("type") not in _EXPECTED_TYPES:
            raise UsageError(
                f"{where}: 'expected' must be an object whose 'type' is one of "
                f"{list(_EXPECTED_TYPES)}, got {expected!r}"
            )
        _check_wav(audio_dir / name)


def _check_wav(path: Path) -> None:
    """A PCM WAV file with audio in it, as long as its header says (or a readable FLAC)."""
    from ._fixtures import read_audio

    if not path.is_file():
        raise UsageError(f"{path}: no such audio file")
    if path.suffix.lower() == ".flac":
        try:
            read_audio(path)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        return
    try:
        with wave.open(str(path), "rb") as wav:
            frames = wav.getnframes()
            frame_bytes = wav.getsampwidth() * wav.getnchannels()
            data = wav.readframes(frames)
    except (wave.Error, EOFError) as exc:
        raise UsageError(f"{path}: not a PCM WAV file ({exc})") from None
    if frames == 0:
        raise UsageError(f"{path}: the WAV file holds no audio (zero length)")
    if len(data) < frames * frame_bytes:
        got = len(data) // max(1, frame_bytes)
        raise UsageError(
            f"{path}: truncated WAV file (header says {frames} frames, file holds {got})"
        )


def check_baseline(summary: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """Failures of ``summary`` against ``baseline`` (empty: passed)."""
    failures: list[str] = []
    minimum = baseline.get("min_accuracy")
    if minimum is not None and summary["accuracy"] < minimum:
        failures.append(f"accuracy {summary['accuracy']:.3f} < baseline {minimum:.3f}")
    for cond, floor in baseline.get("min_accuracy_by_condition", {}).items():
        got = summary.get("condition", {}).get(cond)
        if got is not None and got < floor:
            failures.append(f"{cond} accuracy {got:.3f} < baseline {floor:.3f}")
    for cell, floor in baseline.get("min_accuracy_by_cell", {}).items():
        got = summary.get("voice_condition", {}).get(cell)
        if got is not None and got < floor:
            failures.append(f"{cell} accuracy {got:.3f} < baseline {floor:.3f}")
    max_yes = baseline.get("max_false_yes")
    if max_yes is not None and summary["false_yes"] > max_yes:
        failures.append(f"false yes {summary['false_yes']} > baseline {max_yes}")
    return failures


def baseline_for(data: dict[str, Any], recognizer: str) -> dict[str, Any]:
    """The limits in a baseline file's ``data`` that apply to ``recognizer`` (may be empty).

    Raises:
        ValueError: ``"recognizers"`` is not an object of objects.
    """
    per = data.get("recognizers")
    if per is None:
        return data
    if not isinstance(per, dict) or not all(isinstance(v, dict) for v in per.values()):
        raise ValueError("baseline: 'recognizers' must map recogniser names to objects")
    limits: dict[str, Any] = per.get(recognizer, {})
    return limits


def _progress(out: TextIO) -> Any:
    last = [-1]

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // total
        if filled == last[0] and done != total:
            return
        last[0] = filled
        out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            out.write("\n")
        out.flush()

    return show


def _table(results: list[FixtureResult], out: TextIO) -> None:
    out.write(f"{'file':44} {'expected':16} {'got':22} {'conf':>5} {'ms':>6}  ok\n")
    for r in results:
        mark = "ok" if r.correct else "XX"
        out.write(
            f"{r.file[:44]:44} {r.expected[:16]:16} {r.got[:22]:22} {r.confidence:5.2f} "
            f"{r.latency_s * 1000:6.0f}  {mark}\n"
        )


def _print_summary(summary: dict[str, Any], out: TextIO) -> None:
    out.write(
        f"accuracy {summary['accuracy']:.1%} over {summary['fixtures']} fixtures; "
        f"false yes {summary['false_yes']}; out-of-set accepted "
        f"{summary['out_of_set_false_accepts']}/{summary['out_of_set']}; "
        f"RTF {summary['rtf']:.3f}\n"
    )
    for cell, acc in summary["voice_condition"].items():
        out.write(f"  {cell:20} {acc:.1%}\n")


async def replay(
    path: Path,
    *,
    verify: str = "yes",
    recognizer: str = "whisper",
    voices: list[str] | None = None,
    conditions: list[str] | None = None,
    limit: int | None = None,
    sample: int = 1,
    progress_out: TextIO | None = None,
) -> list[FixtureResult]:
    """Run the fixtures at ``path`` through a recogniser and `understand`.

    ``recognizer`` is one of `RECOGNIZERS`; ``verify`` applies to PocketSphinx alone.

    Raises:
        FileNotFoundError: no manifest or audio file.
        ValueError: malformed manifest or audio.
        ModuleNotFoundError: the ``speech`` (or ``whisper``) extra is not installed.

    Cancellation:
        Safe: stops after the fixture in flight.
    """
    from ._fixtures import load_manifest, read_audio, run_fixtures
    from .asr import load_recognizer

    if recognizer not in RECOGNIZERS:
        raise ValueError(f"recognizer must be one of {RECOGNIZERS}, got {recognizer!r}")

    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    if sample < 1:
        raise ValueError(f"sample must be >= 1, got {sample}")
    audio_dir, entries = load_manifest(path)
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"fixture {index}: expected an object, got {type(entry).__name__}")
    selected = [
        e
        for e in entries
        if (not voices or e.get("voice") in voices)
        and (not conditions or e.get("condition") in conditions)
    ][:limit]
    if not selected:
        raise ValueError(_nothing_selected(entries, voices, conditions))
    entries = selected
    if sample > 1:
        k = sample
        entries = [e for i, e in enumerate(entries) if (i + i // k + i // (k * k)) % k == 0]
    try:
        check_fixtures(audio_dir, entries)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    engine = await load_recognizer(recognizer, verify=verify)  # type: ignore[arg-type]

    async def recognise(wav: Path, spec: AnswerSpec) -> tuple[str, float, float]:
        pcm, rate = await asyncio.to_thread(read_audio, wav)
        hyps = await engine.recognize(pcm, rate, spec)
        best = hyps[0] if hyps else None
        return (best.text if best else ""), (best.score if best else 0.0), len(pcm) / rate

    show = _progress(progress_out) if progress_out is not None else None
    return await run_fixtures(audio_dir, entries, recognise, show)


def _nothing_selected(
    entries: list[dict[str, Any]], voices: list[str] | None, conditions: list[str] | None
) -> str:
    """Why no fixture was selected, naming the filters and what the manifest holds."""
    if not entries:
        return "the manifest lists no fixtures"
    asked = [f"--voice {v}" for v in voices or ()] + [f"--condition {c}" for c in conditions or ()]
    held = []
    for key in ("voice", "condition"):
        names = sorted({str(e.get(key)) for e in entries if e.get(key) is not None})
        held.append(f"{key}s: {', '.join(names) or 'none'}")
    return f"no fixture matches {' '.join(asked)} (the manifest has {'; '.join(held)})"


def _check_args(args: argparse.Namespace) -> Path | None:
    """The paths the run will need, checked before it starts; returns the baseline file."""
    if not args.path.exists():
        raise UsageError(f"{args.path}: no such fixture folder or manifest")
    report = args.report
    if report is not None:
        if report.is_dir():
            raise UsageError(f"--report {report}: is a folder; give a file name")
        if not report.parent.is_dir():
            raise UsageError(f"--report {report}: folder {report.parent} does not exist")
    if args.baseline is not None:
        if not args.baseline.is_file():
            raise UsageError(f"--baseline {args.baseline}: no such file")
        return Path(args.baseline)
    candidate = (args.path if args.path.is_dir() else args.path.parent) / "baseline.json"
    return candidate if candidate.is_file() else None


def _main(args: argparse.Namespace) -> int:
    from ._fixtures import report_json, summarise

    baseline_path = _check_args(args)
    limits: dict[str, Any] | None = None
    if baseline_path is not None:
        try:
            limits = baseline_for(json.loads(baseline_path.read_text()), args.recognizer)
        except (ValueError, AttributeError) as exc:
            raise UsageError(f"{baseline_path}: not a baseline file ({exc})") from None
    try:
        results = asyncio.run(
            replay(
                args.path,
                verify=args.verify,
                recognizer=args.recognizer,
                voices=args.voice,
                conditions=args.condition,
                limit=args.limit,
                sample=args.sample,
                progress_out=sys.stderr,
            )
        )
    except (FileNotFoundError, ValueError, ModuleNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    summary = summarise(results)
    if not args.quiet:
        _table(results, sys.stdout)
    _print_summary(summary, sys.stdout)
    if args.report is not None:
        args.report.write_text(report_json(results, summary) + "\n")
        print(f"report written to {args.report}")
    if limits is None:
        return 0
    failures = check_baseline(summary, limits)
    for failure in failures:
        print(f"BELOW BASELINE: {failure}", file=sys.stderr)
    return 1 if failures else 0
