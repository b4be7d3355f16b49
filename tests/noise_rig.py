"""Coloured noise mixed into committed clean speech at a known SNR (tests of the SNR estimate).

The noise comes from the fixture generator library (``scripts/fixturegen``: the generators the
noisy fixture sets were made with). The SNR is the fixture sets' own: the noise's power under
the power of the speech alone, from the first to the last window the VAD calls speech; over
the full band, or (``band=``) within a band, the speech's power there over the noise's.
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
COLOURS = ("white", "pink", "brown", "car")


def coloured(colour: str, n: int, rate: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    """``n`` samples of unit-RMS noise at ``rate`` (the generators' own, 16 kHz): ``white``,
    ``pink`` (1/f), ``brown`` (1/f^2 above 20 Hz: most of its power under 200 Hz) or ``car``
    (road rumble and engine harmonics, nearly all under 300 Hz, a faint hiss above)."""
    if rate != fg.RATE:
        raise ValueError(f"the noise generators make {fg.RATE} Hz audio, not {rate} Hz")
    make = {"white": fg.white, "pink": fg.pink, "brown": fg.brown, "car": fg.car}[colour]
    x = make(n, rng)
    out: npt.NDArray[np.float64] = x / np.sqrt(np.mean(x**2))
    return out


def noisy(
    pcm: npt.NDArray[np.int16], rate: int, colour: str, snr: float, power: float, seed: int
) -> npt.NDArray[np.int16]:
    """``pcm`` with ``colour`` noise at ``snr`` dB under ``power`` (the speech's mean power)."""
    noise = coloured(colour, len(pcm), rate, np.random.default_rng(seed))
    x = pcm.astype(np.float64) + noise * np.sqrt(power / 10 ** (snr / 10))
    x *= min(1.0, 32_000.0 / float(np.max(np.abs(x))))  # loud noise scaled down, not clipped
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


def band_power(x: npt.NDArray[np.float64], rate: int, band: tuple[float, float]) -> float:
    """``x``'s mean power within ``band`` Hz (one FFT over all of it)."""
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(len(x), 1.0 / rate)
    inside = (f >= band[0]) & (f < band[1])
    return float(2.0 * np.sum(spectrum[inside]) / len(x) ** 2)


def mixed(
    file: str, colour: str, snr: float, seed: int, band: tuple[float, float] | None = None
) -> tuple[npt.NDArray[np.int16], int]:
    """The clean confirmation ``file`` with ``colour`` noise at ``snr`` dB, over the full
    band or within ``band`` Hz."""
    from voice_hitl.speech.asr import SpeechGate

    pcm, rate = read_audio(CONFIRMATIONS / file)
    span = SpeechGate().speech_span(pcm, rate)
    assert span is not None
    speech = pcm[span[0] : span[1]].astype(np.float64)
    power = float(np.mean(speech**2))
    if band is not None:  # the same noise as `noisy` draws, its share of power in the band
        noise = coloured(colour, len(pcm), rate, np.random.default_rng(seed))
        power = band_power(speech, rate, band) / band_power(noise, rate, band)
    return noisy(pcm, rate, colour, snr, power, seed), rate
