#!/usr/bin/env python3
"""A development probe for the near-miss check: words that sound like the challenge word.

adversarial4's near-misses ("conform", "can firm", "comfort", "I'll conform") come from seven
voices no tuning set uses. This probe says near-misses in the *tuning* voices (those of
``audio_fixtures/confirmations``: piper joe at two speeds, flite kal / awb / rms, espeak-ng
en-us+m3 and en-gb+f3), in the confirmations' clean and telephone conditions
(`fixturegen.render_take`), in memory (nothing written). Half the phrases are in the
near-miss lexicon (`voice_hitl.speech._near_miss.NEAR_MISSES`), half are not ("inform",
"can form", "come from", "a groove"), to see whether the check generalises past its list.
None is a yes.

Printed per phrase: how often it was read as yes (low tier) and taken at the high tier at
each near-miss margin, and every near-miss gap seen.

Run: ``python bench/bench_near_miss_probe.py --cache FILE [--near-miss-gap G ...]
[--without-near-miss WORD ...]``
(``speech`` extra, Debian's flite and espeak-ng).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from pathlib import Path

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.responder._risk import NEAR_MISS_GAP, EvidencePolicy, weigh_yes
from voice_hitl.speech import Answer, AnswerSpec
from voice_hitl.speech._near_miss import NEAR_MISSES
from voice_hitl.speech.asr import Denoiser, GatedRecognizer, SpeechGate, WhisperRecognizer
from voice_hitl.voice._provider_events import transcription_of

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import fixturegen as fg  # noqa: E402


def voices() -> dict[str, fg.Voice]:
    """The voices of the tuning confirmations (recipe ``confirmations``)."""
    return fg.recipe_voices("confirmations")


IN_LEXICON = ("conform", "I'll conform", "can firm", "comfort", "confer", "a proof", "improve")
OUTSIDE = ("inform", "can form", "come from", "I'll inform", "a groove", "I'll improve")
CONDITIONS = ("clean", "telephone")
SPEC = AnswerSpec.from_tool_call("ConfirmAction", {"action": "move 500 dollars to savings"})


async def main_async(gaps_at: list[float]) -> None:
    whisper = WhisperRecognizer()
    engine = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
    await engine.load()
    policies = [EvidencePolicy(min_near_miss_gap=g) for g in gaps_at]
    low: Counter[str] = Counter()
    high: list[Counter[str]] = [Counter() for _ in gaps_at]
    total: Counter[str] = Counter()
    seen: list[tuple[float, str, str, str]] = []
    for name, voice in voices().items():
        for text in (*IN_LEXICON, *OUTSIDE):
            said = fg.speech(voice, text)
            for condition in CONDITIONS:
                x, rate = fg.render_take(said, condition, f"{text}_{name}_{condition}", [])
                pcm = fg.pcm16(x)
                heard = Heard.of(transcription_of(await engine.recognize(pcm, rate, SPEC)))
                understood = understand_heard(heard, SPEC)
                yes = isinstance(understood, Answer) and understood.value is True
                total[text] += 1
                low[text] += yes
                for counter, policy in zip(high, policies, strict=True):
                    counter[text] += yes and weigh_yes(heard, policy, repeated=True).accepted
                if heard.competition is not None:
                    c = heard.competition
                    seen.append((c.gap, text, f"{name}/{condition}", c.competitor))
    labels = "/".join(f"{g:g}" for g in gaps_at)
    print(
        f"near-miss probe ({sum(total.values())} utterances, tuning voices, clean and "
        f"telephone); high tier at near-miss margin {labels} (an unmeasured layer counted "
        "as passed: the second challenge answer)"
    )
    for text in (*IN_LEXICON, *OUTSIDE):
        where = "in lexicon" if text in IN_LEXICON else "outside"
        highs = "/".join(str(counter[text]) for counter in high)
        print(
            f"  {text!r:16s} ({where:10s}) {total[text]:3d}: low tier {low[text]:3d}, "
            f"high tier {highs}"
        )
    print(
        "  all: low tier "
        + str(sum(low.values()))
        + ", high tier "
        + "/".join(str(sum(counter.values())) for counter in high)
    )
    print("  gaps (nats, phrase, voice/condition, best competitor):")
    for gap, text, where, rival in sorted(seen):
        print(f"    {gap:6.1f}  {text!r:16s} {where:26s} {rival!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache", type=Path, default=None, metavar="FILE")
    parser.add_argument("--near-miss-gap", type=float, action="append")
    parser.add_argument("--without-near-miss", action="append", default=[])
    args = parser.parse_args()
    for word, nears in NEAR_MISSES.items():
        NEAR_MISSES[word] = tuple(n for n in nears if n not in args.without_near_miss)
    if args.cache is not None:
        sys.path.insert(0, str(ROOT / "bench"))
        import asr_cache

        asr_cache.install(args.cache)
    asyncio.run(main_async(args.near_miss_gap or [NEAR_MISS_GAP]))
    if args.cache is not None:
        print(asr_cache.summary(), file=sys.stderr)


if __name__ == "__main__":
    main()
