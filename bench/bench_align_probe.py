#!/usr/bin/env python3
"""A development probe for alignment scoring: the challenge word followed by words really said.

No development adversarial set holds the challenge word inside a sentence (adversarial3 does,
and it stays held out), so the alignment margin cannot be checked against real extra words on
them. This probe builds such utterances in memory from development audio only: a take of
``audio_fixtures/confirmations`` (the person says the challenge word) followed, after 150 ms
of silence, by a tuning-set utterance of the same condition family (``audio_fixtures/*.flac``:
"tomorrow morning", "the last one", "five hundred dollars", ...). Each is "confirm" said
together with words that change what is meant ("confirm ... tomorrow morning"), so none may be
taken as a challenge answer. Nothing is written to disk.

Printed: the alignment gaps (free reading minus the best forced reading, nats) of every
reading scored, and how many utterances each margin would have taken at the high tier.

Run: ``python bench/bench_align_probe.py --cache /tmp/asr.sqlite [--sample K]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._risk import weigh_yes
from voice_hitl.speech import AnswerSpec
from voice_hitl.speech._fixtures import load_manifest, read_audio
from voice_hitl.speech.asr import (
    Denoiser,
    GatedRecognizer,
    SpeechGate,
    WhisperRecognizer,
    resample,
)
from voice_hitl.voice._provider_events import transcription_of

ROOT = Path(__file__).resolve().parent.parent / "audio_fixtures"
TAILS = [
    "tomorrow_morning", "the_last_one", "five_hundred_dollars", "twelve_hundred", "weather",
    "hello_there", "pizza", "the_red_one", "credit_card", "bank_transfer", "the_second_one",
    "cash",
]  # fmt: skip
"""Tuning utterances that, said after the challenge word, change what is meant."""
FAMILY = {"clean": "clean", "white10": "noisy", "babble10": "noisy", "telephone": "telephone"}
TAIL_VOICES = ["piper", "flite", "espeak"]


def _joined(first: Any, first_rate: int, second: Any, second_rate: int) -> Any:
    a = resample(first, first_rate, 16000)
    b = resample(second, second_rate, 16000)
    gap = np.zeros(2400, dtype=np.int16)
    return np.concatenate([a, gap, b]).astype(np.int16)


async def main_async(args: argparse.Namespace) -> None:
    if args.cache is not None:
        import asr_cache

        asr_cache.install(args.cache)
    off = args.margins == "off"
    margins = [0.0] if off else [float(m) for m in args.margins.split(",")]
    whisper = WhisperRecognizer(
        alone_margin=None if off else max(margins), alone_quieter_db=args.quieter
    )
    engine = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
    await engine.load()
    real = WhisperRecognizer._alone
    gaps: list[float] = []
    quiet: list[float] = []
    taken_at: dict[float, int] = defaultdict(int)
    utterance_gaps: list[float] = []

    def spy(self: WhisperRecognizer, encoded: Any, reading: Any, aligned: Any, audio: Any) -> Any:
        before = len(aligned)
        result = real(self, encoded, reading, aligned, audio)
        if self._alone_margin is not None:
            from voice_hitl.speech.asr._align import may_rescue

            if may_rescue(reading[0]):
                from voice_hitl.speech.asr._align import extras_quieter_db

                frames = min(3000, len(audio) // 160)
                spans = self.word_spans_sync(encoded, reading[0], frames)
                quiet.append(round(extras_quieter_db(spans, audio, 16000), 1))
        for _, _, forced, free, _ in aligned[before:]:
            gaps.append(round(free - forced, 2))
            utterance_gaps.append(free - forced)
        return result

    WhisperRecognizer._alone = spy  # type: ignore[method-assign]
    audio_dir, entries = load_manifest(ROOT / "confirmations")
    firsts = [e for e in entries if e["take"] == 1][:: args.sample]
    n = 0
    for i, entry in enumerate(firsts):
        tail = TAILS[i % len(TAILS)]
        voice = TAIL_VOICES[i % len(TAIL_VOICES)]
        tail_path = ROOT / f"{tail}__{voice}__{FAMILY[entry['condition']]}.flac"
        a, ra = await asyncio.to_thread(read_audio, audio_dir / entry["file"])
        b, rb = await asyncio.to_thread(read_audio, tail_path)
        pcm = _joined(a, ra, b, rb)
        spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
        utterance_gaps.clear()
        heard = Heard.of(transcription_of(await engine.recognize(pcm, 16000, spec)))
        accepted = weigh_yes(heard).accepted
        n += 1
        for margin in margins:
            # taken at this margin only if every rescue it needed fits inside the margin
            if accepted and all(g <= margin for g in utterance_gaps):
                taken_at[margin] += 1
    print(f"probe: {n} utterances of the challenge word followed by other words (1/{args.sample})")
    print(f"  alignment gaps of readings taken at margin {max(margins)}: {sorted(gaps)}")
    print(
        f"  extra words quieter than the challenge word by (dB), every reading scored: "
        f"{sorted(quiet)}"
    )
    for margin in margins:
        print(f"  margin {margin:4.1f}: taken at the high tier {taken_at[margin]} of {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sample", type=int, default=2)
    parser.add_argument("--margins", default="1,2,3,4,6,8", help="or 'off': no alignment")
    parser.add_argument(
        "--cache", type=Path, metavar="FILE", help="Whisper's work in this SQLite file (asr_cache)"
    )
    parser.add_argument("--quieter", type=float, default=4.0)
    args = parser.parse_args()
    asyncio.run(main_async(args))
    if args.cache is not None:
        import asr_cache

        print(asr_cache.summary(), file=sys.stderr)


if __name__ == "__main__":
    main()
