"""The embedded default recogniser: Whisper tiny.en behind the speech gate.

Noise gives no answer, transcripts are the words as heard, confidence is calibrated and used,
and neither loading nor recognising blocks the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faster_whisper", reason="the speech extra (faster-whisper) is not installed")

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.speech import Answer, AnswerSpec, NoMatch
from voice_hitl.speech.asr import (
    DEFAULT_RECOGNIZER,
    GatedRecognizer,
    Hypothesis,
    SpeechGate,
    WhisperRecognizer,
    load_recognizer,
    read_wav,
)
from voice_hitl.speech.asr._whisper import calibrated_confidence
from voice_hitl.voice._provider_events import transcription_of

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
CONFIRM = AnswerSpec.from_tool_call("ConfirmAction", {"action": "transfer five hundred dollars"})
NUMBER = AnswerSpec.number("How much?")
RATE = 16_000

pytestmark = pytest.mark.timeout(120)


def _noises() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    n = 3 * RATE
    white = rng.normal(0.0, 3_000.0, n)
    spectrum = np.fft.rfft(rng.normal(0.0, 1.0, n))
    spectrum /= np.sqrt(np.maximum(np.arange(len(spectrum)), 1))
    pink = np.fft.irfft(spectrum, n)
    pink *= 5_000.0 / pink.std()
    clicks = rng.normal(0.0, 30.0, n)
    for start in rng.integers(0, n - 80, 12):
        clicks[start : start + 80] += rng.normal(0.0, 12_000.0, 80)
    hum = 2_000.0 * np.sin(2 * np.pi * 50.0 * np.arange(n) / RATE) + rng.normal(0.0, 30.0, n)
    near_silence = rng.normal(0.0, 20.0, n)
    return {
        name: np.clip(np.round(x), -32768, 32767).astype(np.int16)
        for name, x in {
            "white": white,
            "pink": pink,
            "clicks": clicks,
            "hum": hum,
            "near silence": near_silence,
        }.items()
    }


async def test_the_default_is_whisper_behind_the_gate() -> None:
    recognizer = await load_recognizer()
    assert DEFAULT_RECOGNIZER == "whisper"
    assert isinstance(recognizer, GatedRecognizer)
    assert isinstance(recognizer.inner, WhisperRecognizer)


async def test_noise_gives_no_answer_to_any_question() -> None:
    recognizer = await load_recognizer()
    for name, audio in _noises().items():
        for spec in (CONFIRM, NUMBER):
            heard = await recognizer.recognize(audio, RATE, spec)
            assert heard == [], f"{name} noise was heard as {heard!r}"
    assert isinstance(recognizer, GatedRecognizer)
    assert recognizer.rejected == 10


async def test_speech_passes_the_gate_with_its_words_as_heard() -> None:
    recognizer = await load_recognizer()
    audio, rate = read_wav(FIXTURES / "demo" / "03_confirm.wav")
    (best,) = await recognizer.recognize(audio, rate, CONFIRM)
    assert best.transcript is not None
    assert "go ahead" in best.transcript.lower()
    assert best.confidence is not None and best.confidence > 0.5
    assert best.quality is not None and best.quality.speech_ms > 300
    event = transcription_of([best])
    assert event.verbatim and event.text == best.transcript
    answer = understand_heard(Heard.of(event), CONFIRM)
    assert isinstance(answer, Answer) and answer.value is True
    assert answer.transcript == best.transcript  # what was said, not a grammar phrase


def test_a_grammar_phrase_is_never_reported_as_what_was_said() -> None:
    event = transcription_of([Hypothesis("definitely", 0.9)])
    assert not event.verbatim
    answer = understand_heard(Heard.of(event), CONFIRM)
    assert isinstance(answer, Answer) and answer.value is True
    assert answer.transcript == ""


def test_a_doubted_reading_asks_again() -> None:
    doubted = Heard("speech", "yes", transcript="yes", confidence=0.3)
    result = understand_heard(doubted, CONFIRM)
    assert isinstance(result, NoMatch) and "confidence 0.30" in result.detail
    sure = understand_heard(Heard("speech", "yes", transcript="yes", confidence=0.93), CONFIRM)
    assert isinstance(sure, Answer) and sure.confidence == pytest.approx(0.93)
    with pytest.raises(ValueError, match="min_confidence"):
        understand_heard(doubted, CONFIRM, min_confidence=1.5)


def test_calibration_orders_the_evidence() -> None:
    weak = calibrated_confidence(-1.5, as_heard=False, verified=False)
    strong = calibrated_confidence(-0.2, as_heard=True, verified=True)
    assert 0.0 <= weak < 0.5 < strong <= 1.0
    assert calibrated_confidence(float("-inf"), as_heard=True, verified=True) == 0.0


def test_the_gate_checks_its_settings() -> None:
    with pytest.raises(ValueError, match="threshold"):
        SpeechGate(threshold=1.5)
    with pytest.raises(ValueError, match="min_speech_ms"):
        SpeechGate(min_speech_ms=float("nan"))


async def test_loading_and_recognising_leave_the_event_loop_free(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fresh model (its own thread count, so not the cached one) loads and decodes while
    asyncio debug mode reports any callback over 100 ms."""
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    loop.slow_callback_duration = 0.1
    audio, rate = read_wav(FIXTURES / "demo" / "02_amount.wav")
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        recognizer = GatedRecognizer(WhisperRecognizer(cpu_threads=1), SpeechGate())
        await recognizer.load()
        hypotheses = await recognizer.recognize(audio, rate, NUMBER)
    assert hypotheses and hypotheses[0].text
    slow = [r.getMessage() for r in caplog.records if "took" in r.getMessage()]
    assert slow == [], slow
