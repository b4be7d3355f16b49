#!/usr/bin/env python3
"""Issue 32 item 5 for yes/no and choice questions: does scoring the *expected* answers against
the audio (Whisper's decoder, `voice_hitl.speech.asr._align.score_sync`) answer utterances the
recogniser now rejects, and is it right when it does?

For every yes/no and choice fixture of the chosen sets (``bench_heldout.py``'s sets; stratified
1/K), the default recogniser (Whisper behind the gate) answers as it does today. Where it gives
no hypothesis although the gate passed the audio, each answer's phrases (`answer_phrases`,
grouped by the answer `understand` reads from them; at most ``--per-answer`` each) and the
prompted free reading are scored; the best answer is taken when its best phrase scores at most
``margin`` nats below the free reading and at least ``separation`` nats above the runner-up.
Printed per set: accuracy today and with alignment for each (margin, separation), false yeses,
wrong answers. Development sets (tuning, heldout, heldout3) choose the thresholds; heldout2 and
heldout4 are reported with them.

Run: ``python bench/bench_align_answers.py --sets tuning,heldout3,heldout4 --sample 4
--cache /tmp/asr.sqlite``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_heldout import SETS, stratified

from voice_hitl.speech import AnswerSpec, understand
from voice_hitl.speech._answer import Answer, NoMatch, NoMatchReason
from voice_hitl.speech._fixtures import load_manifest, read_audio, scored
from voice_hitl.speech._spec import AnswerKind
from voice_hitl.speech.asr import Denoiser, GatedRecognizer, SpeechGate, WhisperRecognizer
from voice_hitl.speech.asr._grammar import answer_phrases

KINDS = (AnswerKind.CONFIRM, AnswerKind.CHOICES)


class ScoringWhisper(WhisperRecognizer):
    """Whisper that, when it rejects a yes/no or choice utterance, scores the answers."""

    per_answer = 6
    last: tuple[str, float, dict[str, tuple[str, float]]] | None = None

    def hear_sync(self, pcm16: Any, sample_rate: int, spec: AnswerSpec | None) -> Any:
        heard = super().hear_sync(pcm16, sample_rate, spec)
        self.last = None
        if heard.hypotheses or spec is None or spec.kind not in KINDS:
            return heard
        groups: dict[str, list[str]] = defaultdict(list)
        for phrase in answer_phrases(spec) or []:
            got = understand(phrase, spec)
            if isinstance(got, Answer) and len(groups[str(got.value)]) < self.per_answer:
                groups[str(got.value)].append(phrase[0].upper() + phrase[1:] + ".")
        free = heard.prompted[0]
        texts = [free, *(p for ps in groups.values() for p in ps)]
        scores = self.score_sync(self.encode_sync(pcm16, sample_rate), texts)
        by_text = dict(zip(texts, (s for s, _ in scores), strict=True))
        best = {
            value: max(((p, by_text[p]) for p in ps), key=lambda x: x[1])
            for value, ps in groups.items()
        }
        self.last = (free, by_text[free] if free else float("-inf"), best)
        return heard


def decide(
    last: tuple[str, float, dict[str, tuple[str, float]]], margin: float, separation: float
) -> str | None:
    """The phrase alignment answers with, or ``None``."""
    _, free, best = last
    ranked = sorted(best.values(), key=lambda x: x[1], reverse=True)
    if not ranked:
        return None
    top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else float("-inf")
    if top[1] >= free - margin and top[1] - second >= separation:
        return top[0]
    return None


async def main_async(args: argparse.Namespace) -> None:
    if args.cache is not None:
        import asr_cache

        asr_cache.install(args.cache)
    whisper = ScoringWhisper()
    whisper.per_answer = args.per_answer
    engine = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
    await engine.load()
    grid = [(m, s) for m in (0.0, 2.0, 4.0, 8.0, 16.0) for s in (1.0, 2.0, 4.0)]
    for name in args.sets.split(","):
        audio_dir, entries = load_manifest(SETS[name])
        rows: list[tuple[dict[str, Any], Any, Any]] = []
        for entry in stratified(entries, args.sample):
            spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
            if spec.kind not in KINDS:
                continue
            pcm, rate = await asyncio.to_thread(read_audio, audio_dir / entry["file"])
            whisper.last = None
            hyps = await engine.recognize(pcm, rate, spec)
            base = (
                understand(hyps[0].text, spec)
                if hyps
                else NoMatch(NoMatchReason.EMPTY, "", "rejected")
            )
            rows.append((entry, base, whisper.last))
            print(f"\r{name}: {len(rows)}", end="", file=sys.stderr)
        print(file=sys.stderr)
        n = len(rows)
        base_ok = sum(scored(e["expected"], b)[0] for e, b, _ in rows)
        base_fy = sum(scored(e["expected"], b)[1] for e, b, _ in rows)
        rejected = sum(last is not None for _, _, last in rows)
        print(
            f"== {name}: {n} yes/no and choice utterances (1/{args.sample}); today "
            f"{100 * base_ok / n:.1f}% right, {base_fy} false yes; "
            f"{rejected} rejected with the gate passed (scored)"
        )
        for margin, separation in grid:
            ok = fy = wrong = taken = 0
            for entry, base, last in rows:
                result = base
                if last is not None:
                    phrase = decide(last, margin, separation)
                    if phrase is not None:
                        taken += 1
                        got = understand(phrase, entry_spec(entry))
                        if isinstance(got, Answer):
                            result = Answer(got.value, got.choice_id, 0.5, phrase, "speech")
                correct, false_yes, _ = scored(entry["expected"], result)
                ok += correct
                fy += false_yes
                wrong += (result is not base) and not correct
            print(
                f"  margin {margin:3.1f} separation {separation:3.1f}: {100 * ok / n:5.1f}% "
                f"right ({100 * (ok - base_ok) / n:+.1f}), taken {taken}, wrong {wrong}, "
                f"false yes {fy}"
            )


def entry_spec(entry: dict[str, Any]) -> AnswerSpec:
    return AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sets", default="tuning,heldout3,heldout4")
    parser.add_argument("--sample", type=int, default=4)
    parser.add_argument("--per-answer", type=int, default=6)
    parser.add_argument(
        "--cache", type=Path, metavar="FILE", help="Whisper's work in this SQLite file (asr_cache)"
    )
    args = parser.parse_args()
    asyncio.run(main_async(args))
    if args.cache is not None:
        import asr_cache

        print(asr_cache.summary(), file=sys.stderr)


if __name__ == "__main__":
    main()
