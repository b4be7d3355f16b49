#!/usr/bin/env python3
"""Held-out and adversarial measurement (issues 14 and 17) for one recogniser.

Usage (needs the ``speech`` extra; ``whisper``/``combined`` need the ``whisper`` extra)::

    python bench/bench_heldout.py --recognizer pocketsphinx|whisper|combined
        [--verify yes|all|off] [--sample K] [--sets tuning,heldout,adversarial]
        [--report DIR] [--whisper-model DIR] [--no-denoise] [--cache FILE]

Sets: ``tuning`` (``audio_fixtures``), ``heldout`` and ``adversarial`` (the first held-out
and adversarial sets; their failures have been read, so they are development sets now),
``dev_values``, and ``heldout2`` / ``adversarial2`` (new phrasings, voices and seeds, written
before any recogniser heard them and never tuned on, but run several times), and ``heldout3``
(a third set of new phrasings and voices, written 2026-12-04 when heldout2 had been run five
times; measured once, then its failures were read) and ``heldout4`` (a fourth, written before
heldout3's failures were read: the honest measure of what was designed on heldout3),
``heldout6`` (issue 32: yeses, no's and neither in voices and conditions no other set uses,
made by recipe ``adversarial5`` after the issue-32 rules; "a no that was not said"
on audio nothing was tuned on), ``heldout7`` (the same kinds again, in the voices and
conditions of recipe ``adversarial6``, none used before; once generated and committed),
``heldout8`` (again, in those of recipe ``adversarial7``; once generated and
committed), ``heldout9`` (again, in those of recipe ``adversarial8``) and
``heldout10`` (again, in those of recipe ``adversarial9``, with more refusals and
more non-refusals a noisy recogniser might hear as "no"; once generated and committed).

Prints, for the tuning set (``audio_fixtures``, what the recognisers are tuned on) and the
held-out set (``audio_fixtures/heldout``, phrasings and voices never used for tuning) side by
side: accuracy, false yeses, affirmatives read as negatives, out-of-set answers accepted, RTF;
then each set's voice x condition grid and per-category accuracy. On the adversarial set
(``audio_fixtures/adversarial``: noise and non-affirmative speech, every expected answer a
reject) it counts, per category, the files read as a yes (an `Answer` whose value is True from
`understand` on the top hypothesis) and the files that produced any answer at all (an
`Answer` or a `MetaAnswer`; noise must give none), then the yeses per noise x SNR x rate.

``--sample K`` runs a stratified 1/K of every set (the rotation ``voice-hitl replay
--sample`` uses). One recogniser is loaded once and files are recognised one at a time.
``--cache FILE`` replays and keeps Whisper's work in an SQLite file (`asr_cache`): a rerun
after a rule change decodes only what it has not heard (RTF then measures the replay).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from voice_hitl.speech._fixtures import (
    FixtureResult,
    load_manifest,
    read_audio,
    report_json,
    run_fixtures,
    summarise,
)
from voice_hitl.speech._spec import AnswerSpec
from voice_hitl.speech.asr import (
    RECOGNIZERS,
    Denoiser,
    GatedRecognizer,
    Recognizer,
    SpeechGate,
    WhisperRecognizer,
    load_recognizer,
)

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "tuning": ROOT / "audio_fixtures",
    "heldout": ROOT / "audio_fixtures" / "heldout",
    "adversarial": ROOT / "audio_fixtures" / "adversarial",
    "dev_values": ROOT / "audio_fixtures" / "dev_values",
    "heldout2": ROOT / "audio_fixtures" / "heldout2",
    "adversarial2": ROOT / "audio_fixtures" / "adversarial2",
    "heldout3": ROOT / "audio_fixtures" / "heldout3",
    "heldout4": ROOT / "audio_fixtures" / "heldout4",
    "adversarial3": ROOT / "audio_fixtures" / "adversarial3",
    "adversarial4": ROOT / "audio_fixtures" / "adversarial4",
    "heldout6": ROOT / "audio_fixtures" / "heldout6",
    "heldout7": ROOT / "audio_fixtures" / "heldout7",
    "heldout8": ROOT / "audio_fixtures" / "heldout8",
    "heldout9": ROOT / "audio_fixtures" / "heldout9",
    "heldout10": ROOT / "audio_fixtures" / "heldout10",
}


def stratified(entries: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """Every K-th entry, rotating the offset so voices and conditions vary across answers."""
    if k <= 1:
        return list(entries)
    return [e for i, e in enumerate(entries) if (i + i // k + i // (k * k)) % k == 0]


def kind_of(result: FixtureResult) -> str:
    """``"yes"``, ``"answer"`` (any other answer), ``"meta"`` or ``"none"`` (a reject)."""
    if result.got.startswith("<reject"):
        return "none"
    if result.got.startswith("<"):
        return "meta"
    return "yes" if result.false_yes or (result.got == "yes") else "answer"


def affirmatives_as_negatives(results: list[FixtureResult]) -> tuple[int, int]:
    """``(read as no, affirmatives)``: yeses that `understand` turned into a no."""
    yeses = [r for r in results if r.expected == "yes"]
    return sum(r.got == "no" for r in yeses), len(yeses)


async def run_set(
    engine: Recognizer, path: Path, sample: int, label: str, tools: set[str] | None = None
) -> tuple[list[dict[str, Any]], list[FixtureResult]]:
    audio_dir, entries = load_manifest(path)
    entries = stratified(entries, sample)
    if tools is not None:
        entries = [e for e in entries if e["spec"]["tool"] in tools]

    async def recognise(audio: Path, spec: AnswerSpec) -> tuple[str, float, float]:
        pcm, rate = await asyncio.to_thread(read_audio, audio)
        hyps = await engine.recognize(pcm, rate, spec)
        best = hyps[0] if hyps else None
        return (best.text if best else ""), (best.score if best else 0.0), len(pcm) / rate

    def progress(done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            print(f"\r{label}: {done}/{total}", end="\n" if done == total else "", file=sys.stderr)

    return entries, await run_fixtures(audio_dir, entries, recognise, progress)


def wrong_answers(results: list[FixtureResult]) -> tuple[int, int]:
    """Expected answers taken as another answer (not rejected, so nobody is asked again)."""
    answers = [r for r in results if not r.expected.startswith("<")]  # "<reject>", "<repeat>"
    wrong = [r for r in answers if not r.correct and not r.got.startswith("<reject")]
    return len(wrong), len(answers)


REFUSALS = frozenset({"negation", "refusal_with_word"})
"""Adversarial categories whose people did say no (every adversarial file expects a reject:
none is a yes, but a refusal read as no is right)."""


def nos_not_said(results: list[FixtureResult]) -> tuple[int, int]:
    """``(taken as a no, files)``: answers read as "no" where the person did not say no
    (a yes, another answer, a request or noise; not an adversarial refusal), over every
    file of the set (issue 32)."""
    not_said = [
        r for r in results if r.got == "no" and r.expected != "no" and r.category not in REFUSALS
    ]
    return len(not_said), len(results)


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.0%})" if d else "0/0"


def _pct1(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.1%})" if d else "0/0"


def print_side_by_side(summaries: dict[str, dict[str, Any]], res: dict[str, Any]) -> None:
    names = list(summaries)
    print(f"{'':28}" + "".join(f"{n:>20}" for n in names))
    rows: list[tuple[str, list[str]]] = [
        ("files", [str(summaries[n]["fixtures"]) for n in names]),
        ("accuracy", [f"{summaries[n]['accuracy']:.1%}" for n in names]),
        ("false yes", [str(summaries[n]["false_yes"]) for n in names]),
        ("affirmatives read as no", [_pct(*affirmatives_as_negatives(res[n])) for n in names]),
        ("a no that was not said", [_pct1(*nos_not_said(res[n])) for n in names]),
        (
            "out-of-set accepted",
            [
                _pct(summaries[n]["out_of_set_false_accepts"], summaries[n]["out_of_set"])
                for n in names
            ],
        ),
        ("wrong answers (not re-asked)", [_pct(*wrong_answers(res[n])) for n in names]),
        ("RTF", [f"{summaries[n]['rtf']:.3f}" for n in names]),
    ]
    for label, cells in rows:
        print(f"{label:28}" + "".join(f"{c:>20}" for c in cells))


def print_grid(name: str, s: dict[str, Any]) -> None:
    conditions = sorted(s["condition"])
    print(f"\n{name}: voice x condition")
    print(f"{'voice':12}" + "".join(f"{c:>15}" for c in conditions) + f"{'all':>9}")
    for voice in sorted(s["voice"]):
        cells = "".join(
            f"{s['voice_condition'].get(f'{voice}/{c}', float('nan')):>15.1%}" for c in conditions
        )
        print(f"{voice:12}{cells}{s['voice'][voice]:>9.1%}")
    print(f"{'all':12}" + "".join(f"{s['condition'][c]:>15.1%}" for c in conditions))
    print(f"{name}: per category: " + ", ".join(f"{k} {v:.0%}" for k, v in s["category"].items()))


def print_adversarial(entries: list[dict[str, Any]], results: list[FixtureResult]) -> None:
    meta = {e["file"]: e for e in entries}
    by_cat: dict[str, list[FixtureResult]] = defaultdict(list)
    for r in results:
        by_cat[r.category].append(r)
    print(f"\nadversarial ({len(results)} files; every expected answer a reject)")
    print(f"{'category':12}{'files':>7}{'yes':>6}{'any answer':>12}{'other answer':>14}{'meta':>6}")
    for cat in [*sorted(by_cat), "all"]:
        rs = results if cat == "all" else by_cat[cat]
        kinds = [kind_of(r) for r in rs]
        any_answer = sum(k != "none" for k in kinds)
        print(
            f"{cat:12}{len(rs):>7}{kinds.count('yes'):>6}{any_answer:>12}"
            f"{kinds.count('answer'):>14}{kinds.count('meta'):>6}"
        )
    nonspeech: dict[str, list[str]] = defaultdict(list)
    cells: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        e = meta[r.file]
        # adversarial3 and 4 name a condition ("noise05", "gsm_8k") instead
        noise = e.get("noise", r.condition)
        rate = f"{e.get('rate', e.get('sample_rate', 0)) // 1000:>2}k"
        if r.category == "nonspeech":
            nonspeech[f"{noise}/{rate.strip()}"].append(kind_of(r))
        else:
            snr = f" {e['snr_db']:>2} dB" if "snr_db" in e else ""
            cells[f"{noise}{snr} {rate}"].append(kind_of(r) == "yes")
    print("nonspeech, files giving any answer: " + ", ".join(
        f"{k} {sum(x != 'none' for x in v)}/{len(v)}" for k, v in sorted(nonspeech.items())
    ))  # fmt: skip
    print("speech, read as yes per noise/SNR/rate: " + ", ".join(
        f"{k}: {sum(v)}/{len(v)}" for k, v in sorted(cells.items())
    ))  # fmt: skip
    print("taken as a no that was not said: " + _pct1(*nos_not_said(results)))
    yeses = [r for r in results if kind_of(r) == "yes"]
    for r in yeses:
        print(f"  YES: {r.file}  heard {r.transcript!r}")


async def amain(args: argparse.Namespace) -> int:
    wanted = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SETS]
    if unknown:
        print(f"unknown set(s) {unknown}: use {', '.join(SETS)}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    engine: Recognizer
    if args.whisper_model is not None or args.no_denoise:
        if args.recognizer != "whisper":
            print("--whisper-model/--no-denoise go with --recognizer whisper", file=sys.stderr)
            return 2
        whisper = WhisperRecognizer(model_path=args.whisper_model)
        await whisper.load()
        denoiser = None if args.no_denoise else Denoiser()
        engine = GatedRecognizer(whisper, SpeechGate(), denoiser=denoiser)
        await engine.load()
    else:
        engine = await load_recognizer(args.recognizer, verify=args.verify)
    print(f"# {args.recognizer} loaded in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    entries: dict[str, list[dict[str, Any]]] = {}
    results: dict[str, list[FixtureResult]] = {}
    for name in wanted:
        tools = set(args.tools.split(",")) if args.tools else None
        entries[name], results[name] = await run_set(engine, SETS[name], args.sample, name, tools)
    summaries = {n: summarise(results[n]) for n in wanted}
    verify = f", verify={args.verify}" if args.recognizer == "pocketsphinx" else ""
    sample = f", stratified 1/{args.sample} sample" if args.sample > 1 else ""
    print(f"recognizer {args.recognizer}{verify}{sample}")
    scored = [n for n in wanted if not n.startswith("adversarial")]
    if scored:
        print_side_by_side({n: summaries[n] for n in scored}, results)
        for n in scored:
            print_grid(n, summaries[n])
    for name in (n for n in wanted if n.startswith("adversarial")):
        print(f"== {name}")
        print_adversarial(entries[name], results[name])
        print(f"{name} RTF {summaries[name]['rtf']:.3f}")
    if args.report is not None:
        args.report.mkdir(parents=True, exist_ok=True)
        for n in wanted:
            out = args.report / f"{args.recognizer}_{n}.json"
            out.write_text(report_json(results[n], summaries[n]) + "\n")
        print(f"reports written to {args.report}", file=sys.stderr)
    print(json.dumps({"elapsed_s": round(time.perf_counter() - start, 1)}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--recognizer", choices=RECOGNIZERS, default="pocketsphinx")
    parser.add_argument("--verify", choices=["yes", "all", "off"], default="yes")
    parser.add_argument("--sample", type=int, default=1, help="stratified 1/K of every set")
    parser.add_argument(
        "--sets", default="tuning,heldout,adversarial", help="comma-separated: " + ",".join(SETS)
    )
    parser.add_argument(
        "--tools",
        default=None,
        help="only files whose question is one of these tools (e.g. ConfirmAction: the "
        "yes/no rules touch no other question)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="FILE",
        help="replay and keep Whisper's decodes in this SQLite file (asr_cache)",
    )
    parser.add_argument("--report", type=Path, default=None, help="write JSON reports here")
    parser.add_argument(
        "--whisper-model",
        type=Path,
        default=None,
        help="another CTranslate2 Whisper model directory (default: the bundled tiny.en)",
    )
    parser.add_argument(
        "--no-denoise", action="store_true", help="Whisper without the steady-noise denoiser"
    )
    args = parser.parse_args()
    if args.sample < 1:
        parser.error("--sample must be >= 1")
    if args.cache is None:
        return asyncio.run(amain(args))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import asr_cache

    asr_cache.install(args.cache)
    try:
        return asyncio.run(amain(args))
    finally:
        print(asr_cache.summary(), file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
