"""``StreamResampler``: low-latency streaming resampling for the phone path (numpy only).

A rational (L/M) polyphase resampler with a Kaiser-windowed sinc low-pass. It keeps the last
input samples between calls, so a call's audio resampled in 20 ms frames is exactly what the
whole recording resampled at once would be, and each frame's output is ready with it: the only
delay is the filter's own, about 2 ms. (soxr's streaming resampler, at its "HQ" setting, holds
back 40-60 ms of audio between calls; ``bench/bench_twilio.py`` compares the two.)
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from voice_hitl.voice._provider_events import PCM16

__all__ = ["StreamResampler"]

_ROLLOFF = 0.9  # pass band edge, as a fraction of the lower Nyquist frequency
_ZERO_CROSSINGS = 16  # half the filter's length, in zero crossings of its sinc
_KAISER_BETA = 8.6  # about 90 dB stop-band attenuation


class StreamResampler:
    """Resamples a stream of mono PCM16 chunks from ``from_rate`` to ``to_rate``.

    Raises:
        ValueError: A rate is not a positive integer.
    """

    def __init__(self, from_rate: int, to_rate: int) -> None:
        if from_rate <= 0 or to_rate <= 0:
            raise ValueError(f"sample rates must be positive, got {from_rate} -> {to_rate}")
        self.from_rate = from_rate
        self.to_rate = to_rate
        common = math.gcd(from_rate, to_rate)
        self._up = to_rate // common
        self._down = from_rate // common
        self._passthrough = from_rate == to_rate
        up_rate = from_rate * self._up
        cutoff = _ROLLOFF * min(from_rate, to_rate) / 2 / up_rate  # cycles per upsampled sample
        half = math.ceil(_ZERO_CROSSINGS / (2 * cutoff))
        n = np.arange(-half, half + 1, dtype=np.float64)
        taps = 2 * cutoff * np.sinc(2 * cutoff * n) * np.kaiser(n.size, _KAISER_BETA) * self._up
        self._per_phase = math.ceil(taps.size / self._up)
        padded = np.zeros(self._per_phase * self._up)
        padded[: taps.size] = taps
        # bank[p, t] multiplies x[i - t] for an output whose upsampled index is i * up + p.
        self._bank = padded.reshape(self._per_phase, self._up).T.copy()
        self.delay_seconds = half / up_rate
        """The filter's group delay: how far the output lags the input."""
        self.reset()

    def reset(self) -> None:
        """Forget the stream so far (after a barge-in drops what was queued)."""
        self._history = np.zeros(self._per_phase - 1, dtype=np.float64)
        self._consumed = 0  # input samples seen
        self._produced = 0  # output samples made

    def __call__(self, chunk: PCM16) -> PCM16:
        """Resample the next chunk; returns the output samples it completes."""
        if self._passthrough:
            return chunk
        buffer = np.concatenate([self._history, chunk.astype(np.float64)])
        base = self._consumed - self._history.size  # input index of buffer[0]
        self._consumed += chunk.size
        last = (self._consumed * self._up - 1) // self._down  # last output computable
        outputs = np.arange(self._produced, last + 1, dtype=np.int64)
        self._produced = last + 1
        self._history = buffer[buffer.size - self._history.size :]
        if outputs.size == 0:
            return np.zeros(0, dtype=np.int16)
        upsampled = outputs * self._down
        newest = upsampled // self._up  # the newest input sample each output uses
        phase = upsampled - newest * self._up
        index = (newest - base)[:, None] - np.arange(self._per_phase)[None, :]
        samples: npt.NDArray[np.float64] = np.einsum("ij,ij->i", buffer[index], self._bank[phase])
        result: PCM16 = np.clip(np.rint(samples), -32768, 32767).astype(np.int16)
        return result
