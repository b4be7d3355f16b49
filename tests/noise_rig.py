"""Coloured noise mixed into committed clean speech at a known SNR (tests of the SNR estimate).

The noise comes from the fixture generator library (``scripts/fixturegen``: the generators the
noisy fixture sets were made with). The SNR is the fixture sets' own: the noise's power under
the power of the speech alone, from the first to the last window the VAD calls speech.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voice_hitl.speech._fixtures import read_audio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import fixturegen as fg

CONFIRMATIONS = Path(__file__).resolve().parents[1] / "audio_fixtures" / "confirmations"
COLOURS = ("white", "pink", "brown")


def coloured(colour: str, n: int, rate: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """``n`` samples of unit-RMS noise at ``rate`` (the generators' own, 16 kHz): ``white``,
    ``pink`` (1/f) or ``brown`` (1/f^2 above 20 Hz: most of its power under 200 Hz)."""
    if rate != fg.RATE:
        raise ValueError(f"the noise generators make {fg.RATE} Hz audio, not {rate} Hz")
    make = {"white": fg.white, "pink": fg.pink, "brown": fg.brown}[colour]
    x = make(n, rng)
    out: npt.NDArray[np.float64] = x / np.sqrt(np.mean(x**2))
    return out


def noisy(
    pcm: npt.NDArray[np.int16], rate: int, colour: str, snr: float, power: float, seed: int
) -> npt.NDArray[np.int16]:
    """``pcm`` with ``colour`` noise at ``snr`` dB under ``power`` (the speech's mean power)."""
    noise = coloured(colour, len(pcm), rate, np.random.default_rng(seed))
    x = pcm.astype(np.float64) + noise * np.sqrt(power / 10 ** (snr / 10))
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def mixed(
    file: str, colour: str, snr: float, seed: int
) -> tuple[npt.NDArray[np.int16], int]:
    """The clean confirmation ``file`` with ``colour`` noise at ``snr`` dB."""
    from voice_hitl.speech.asr import SpeechGate

    pcm, rate = read_audio(CONFIRMATIONS / file)
    span = SpeechGate().speech_span(pcm, rate)
    assert span is not None
    power = float(np.mean(pcm[span[0] : span[1]].astype(np.float64) ** 2))
    return noisy(pcm, rate, colour, snr, power, seed), rate
