"""Coloured noise mixed into committed clean speech at a known SNR (tests of the SNR estimate).

The SNR is the fixture sets' own: the noise's power under the power of the speech alone, from
the first to the last window the VAD calls speech.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from voice_hitl.speech._fixtures import read_audio

CONFIRMATIONS = Path(__file__).resolve().parents[1] / "audio_fixtures" / "confirmations"
COLOURS = ("white", "pink", "brown")


def coloured(colour: str, n: int, rate: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """``n`` samples of unit-RMS noise: ``white``, ``pink`` (1/f) or ``brown`` (1/f^2 above
    20 Hz: most of its power under 200 Hz)."""
    spectrum = np.fft.rfft(rng.normal(size=n))
    f = np.maximum(np.fft.rfftfreq(n, 1 / rate), 20.0)
    gain = {"white": np.ones_like(f), "pink": 1 / np.sqrt(f), "brown": 1 / f}[colour]
    x = np.fft.irfft(spectrum * gain, n)
    out: npt.NDArray[np.float64] = x / np.sqrt(np.mean(x**2))
    return out


def mixed(
    file: str, colour: str, snr: float, seed: int
) -> tuple[npt.NDArray[np.int16], int]:
    """The clean confirmation ``file`` with ``colour`` noise at ``snr`` dB."""
    from voice_hitl.speech.asr import SpeechGate

    pcm, rate = read_audio(CONFIRMATIONS / file)
    span = SpeechGate().speech_span(pcm, rate)
    assert span is not None
    x = pcm.astype(np.float64)
    power = float(np.mean(x[span[0] : span[1]] ** 2))
    noise = coloured(colour, len(x), rate, np.random.default_rng(seed))
    x = x + noise * np.sqrt(power / 10 ** (snr / 10))
    return np.clip(np.round(x), -32768, 32767).astype(np.int16), rate
