"""The steady-noise denoiser and how the speech gate hands its output to the recogniser."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from voice_hitl.speech import AnswerSpec
from voice_hitl.speech._audio_quality import AudioQuality
from voice_hitl.speech.asr import AudioFormatError, Denoiser, GatedRecognizer, Hypothesis

RATE = 16_000


def _tone_burst(seconds: float = 2.0) -> npt.NDArray[np.float64]:
    """A 440 Hz "word" from 0.6 s to 1.4 s inside silence."""
    t = np.arange(int(RATE * seconds)) / RATE
    envelope = ((t > 0.6) & (t < 1.4)).astype(np.float64)
    return 0.1 * np.sin(2 * np.pi * 440 * t) * envelope


def _pcm(x: npt.NDArray[np.float64]) -> npt.NDArray[np.int16]:
    return np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)


def _power_db(x: npt.NDArray[np.float64]) -> float:
    return float(10 * np.log10(np.mean(x * x) + 1e-15))


def _white(n: int, level: float, seed: int = 1) -> npt.NDArray[np.float64]:
    return np.random.default_rng(seed).normal(0.0, level, n)


def _babble_like(n: int, seed: int = 2) -> npt.NDArray[np.float64]:
    """Noise whose level swings by 20 dB every few hundred ms, as talkers come and go."""
    rng = np.random.default_rng(seed)
    swing = np.repeat(10 ** (rng.uniform(-1.0, 0.0, n // 4_000 + 1)), 4_000)[:n]
    return rng.normal(0.0, 0.03, n) * swing


def test_steady_noise_is_taken_out_and_the_word_kept() -> None:
    clean = _tone_burst()
    noisy = clean + _white(len(clean), 0.03)
    out, rate = Denoiser().denoise(_pcm(noisy), RATE)
    assert rate == RATE and out.dtype == np.int16 and len(out) == len(noisy)
    y = out.astype(np.float64) / 32768
    gap = slice(0, int(0.5 * RATE))
    word = slice(int(0.7 * RATE), int(1.3 * RATE))
    assert _power_db(y[gap]) < _power_db(noisy[gap]) - 6  # the noise between words
    assert abs(_power_db(y[word]) - _power_db(clean[word])) < 2.0  # the word itself


def test_only_steady_noise_counts_as_steady() -> None:
    denoiser = Denoiser()
    clean = _tone_burst()
    assert denoiser.steady(_pcm(clean + _white(len(clean), 0.03)), RATE)
    assert not denoiser.steady(_pcm(clean + _babble_like(len(clean))), RATE)
    assert not denoiser.steady(_pcm(clean[:1_000]), RATE)  # too short to judge


def test_narrowband_input_comes_out_at_16k() -> None:
    clean = _tone_burst()[::2]
    out, rate = Denoiser().denoise(_pcm(clean + _white(len(clean), 0.03)), 8_000)
    assert rate == RATE and len(out) == 2 * len(clean)


def test_settings_and_audio_are_checked() -> None:
    with pytest.raises(ValueError, match="over"):
        Denoiser(over=0.0)
    with pytest.raises(ValueError, match="floor"):
        Denoiser(floor=1.5)
    with pytest.raises(ValueError, match="max_snr_db"):
        Denoiser(max_snr_db=-1.0)
    with pytest.raises(AudioFormatError):
        Denoiser().denoise(np.zeros((10, 2), dtype=np.int16), RATE)


class _Gate:
    """A speech gate stub reporting a fixed SNR (the real one needs silero-vad)."""

    def __init__(self, snr_db: float) -> None:
        self.snr_db = snr_db

    def measure(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> AudioQuality:
        return AudioQuality(800.0, 0.9, self.snr_db, 0.0)

    def passes(self, quality: AudioQuality) -> bool:
        return True


class _Ear:
    """A recogniser that keeps what it was given."""

    name = "ear"

    def __init__(self) -> None:
        self.heard: list[tuple[npt.NDArray[np.int16], int]] = []

    async def recognize(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        self.heard.append((pcm16, sample_rate))
        return [Hypothesis("yes", 0.9)]


@pytest.mark.parametrize(
    ("snr_db", "noise", "denoised"),
    [(10.0, "white", True), (40.0, "white", False), (10.0, "babble", False)],
)
async def test_the_gate_hands_noisy_steady_audio_over_denoised(
    snr_db: float, noise: str, denoised: bool
) -> None:
    clean = _tone_burst()
    bg = _white(len(clean), 0.03) if noise == "white" else _babble_like(len(clean))
    pcm = _pcm(clean + bg)
    ear = _Ear()
    gated = GatedRecognizer(ear, _Gate(snr_db), denoiser=Denoiser())  # type: ignore[arg-type]
    hypotheses = await gated.recognize(pcm, RATE, None)
    (heard, rate), = ear.heard
    assert rate == RATE
    assert (not np.array_equal(heard, pcm)) is denoised
    assert gated.denoised == int(denoised)
    # the reported quality is the audio's as it arrived
    assert hypotheses[0].quality is not None and hypotheses[0].quality.snr_db == snr_db


async def test_without_a_denoiser_the_audio_is_untouched() -> None:
    clean = _tone_burst()
    pcm = _pcm(clean + _white(len(clean), 0.03))
    ear = _Ear()
    gated = GatedRecognizer(ear, _Gate(5.0))  # type: ignore[arg-type]
    await gated.recognize(pcm, RATE, None)
    assert ear.heard[0][0] is pcm and gated.denoised == 0
