"""Risk tiers on recorded audio through the default recogniser (Whisper behind the gate).

A stratified sample of the held-out adversarial set (``audio_fixtures/adversarial2``: noise,
negations, cancels, requests for a person, questions, near-misses; never tuned on) must give
no yes at either tier, and a sample of held-out true confirmations
(``audio_fixtures/heldout2_confirmations``) must mostly complete within two turns. The full
figures are ``bench/bench_risk.py``'s; the floors here sit well under them, so that a loaded
machine or another CPU cannot fail the test on one marginal file.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("faster_whisper", reason="the speech extra (faster-whisper) is not installed")
pytest.importorskip("soundfile")

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.responder._risk import weigh_yes
from voice_hitl.speech import Answer, AnswerSpec
from voice_hitl.speech._fixtures import load_manifest, read_audio
from voice_hitl.speech.asr import Recognizer, load_recognizer
from voice_hitl.voice._provider_events import transcription_of

ROOT = Path(__file__).resolve().parents[2] / "audio_fixtures"
ADVERSARIAL2 = ROOT / "adversarial2"
CONFIRMATIONS2 = ROOT / "heldout2_confirmations"

WITHIN_TWO_TURNS_FLOOR = 0.45
"""The sample's share of confirmations taken within two turns must reach this: the full
figure is 60.0 % since the high tier scores a challenge answer against its near-misses
(66.2 % without; ``bench/results_risk.txt``, 2026-12-06: a true "confirm" that sounds about
as much like "conform" goes to the keypad). On the test's 20 dialogues one standard deviation
is about 11 points; the floor sits under the full figure by more than one. (The sample took
13 of 20 with the check, 15 without.)"""


def _spec(entry: dict[str, Any]) -> AnswerSpec:
    return AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])


async def _yes(engine: Recognizer, path: Path, spec: AnswerSpec) -> tuple[bool, bool, str]:
    """``(read as yes, yes taken at high risk, what was heard)``."""
    pcm, rate = await asyncio.to_thread(read_audio, path)
    heard = Heard.of(transcription_of(await engine.recognize(pcm, rate, spec)))
    understood = understand_heard(heard, spec)
    yes = isinstance(understood, Answer) and understood.value is True
    return yes, yes and weigh_yes(heard).accepted, heard.transcript or heard.text


@pytest.mark.timeout(300)
async def test_held_out_adversarial_sample_gives_no_yes_at_any_tier() -> None:
    engine = await load_recognizer("whisper")
    audio_dir, entries = load_manifest(ADVERSARIAL2)
    sample = entries[::19]
    assert len({e["category"] for e in sample}) >= 5
    yeses = []
    for entry in sample:
        yes, taken, said = await _yes(engine, audio_dir / entry["file"], _spec(entry))
        if yes or taken:
            yeses.append((entry["file"], said, "high" if taken else "low"))
    assert yeses == []


@pytest.mark.timeout(300)
async def test_held_out_confirmations_mostly_complete_within_two_turns() -> None:
    engine = await load_recognizer("whisper")
    audio_dir, entries = load_manifest(CONFIRMATIONS2)
    takes: dict[tuple[str, str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for entry in entries:
        takes[(entry["id"], entry["voice"], entry["condition"])][entry["take"]] = entry
    conditions = sorted({key[2] for key in takes})
    # one dialogue per phrasing x voice, rotating over the conditions
    pairs = sorted({key[:2] for key in takes})
    keys = [(*pair, conditions[i % len(conditions)]) for i, pair in enumerate(pairs)]
    done, missed = 0, []
    for key in keys:
        for take in (1, 2):
            entry = takes[key][take]
            _, taken, said = await _yes(engine, audio_dir / entry["file"], _spec(entry))
            if taken:
                done += 1
                break
        else:
            missed.append((key, said))
    assert done / len(keys) >= WITHIN_TWO_TURNS_FLOOR, json.dumps(missed)
