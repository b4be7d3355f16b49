"""Streaming DTMF detection with the Goertzel algorithm.

Each block of 25.6 ms (hop 12.8 ms) is measured at the eight DTMF frequencies and their
second harmonics. The per-frequency power is what a Goertzel filter yields (a single-bin
DFT at the exact tone frequency); it is computed for all sixteen frequencies at once as one
matrix product, which is the same arithmetic vectorised. A block holds a key when:

- the block is louder than ``min_level_dbfs``;
- the strongest row and column tones together carry at least ``min_share`` of the block's
  energy (speech spreads its energy over many harmonics and formants, so it fails this);
- each is at least 6 dB above the runner-up of its group;
- the twist (column minus row level) is within ``max_twist_db``;
- once both tones are fitted and subtracted, neither tone's second harmonic is within 10 dB
  of it (speech and music have harmonics; subtracting first keeps a column tone from
  leaking into the nearby second harmonic of a row tone, e.g. 1336 Hz vs 2 x 697 Hz).

A key is reported once, after two consecutive blocks agree; it is released after two blocks
without it, so a dropout inside a noisy tone does not repeat the key.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._tones import _LAYOUT, COLUMN_FREQS, ROW_FREQS

__all__ = ["DtmfDetector"]

_BLOCK_SECONDS = 0.0256


class DtmfDetector:
    """Find keypad tones in a stream of PCM16 audio.

    Feed audio in chunks of any size; keys come back as they are recognised, each once per
    key press. Not thread-safe; use one detector per stream.

    Args:
        sample_rate: samples per second of the fed audio (8000, 16000, 24000, up to 48000).
        min_share: fraction of block energy the two tones must carry.
        min_level_dbfs: quietest block (RMS, dBFS) considered.
        max_twist_db: largest accepted level difference between the two tones.
    """

    def __init__(
        self,
        sample_rate: int,
        *,
        min_share: float = 0.5,
        min_level_dbfs: float = -45.0,
        max_twist_db: float = 8.0,
    ) -> None:
        if not isinstance(sample_rate, int) or not 8000 <= sample_rate <= 48000:
            raise ValueError(f"sample_rate must be an int in 8000..48000 Hz, got {sample_rate!r}")
        self.sample_rate = sample_rate
        self._n = round(sample_rate * _BLOCK_SECONDS)
        self._hop = self._n // 2
        self._min_share = min_share
        self._min_ms = 10 ** (min_level_dbfs / 10)
        self._max_twist = 10 ** (max_twist_db / 10)
        freqs = np.array([*ROW_FREQS, *COLUMN_FREQS])
        freqs = np.concatenate([freqs, 2 * freqs])
        if freqs.max() >= sample_rate / 2:
            freqs[freqs >= sample_rate / 2] = 0.0  # harmonic above Nyquist: measures nothing
        phase = 2 * np.pi * np.outer(freqs, np.arange(self._n)) / sample_rate
        # Real and imaginary parts apart: the projections below run as einsum, never through
        # BLAS, whose thread pool spins after each call (a whole core for the length of a call).
        self._cos = np.cos(phase).T  # (n, 16)
        self._sin = np.sin(phase).T
        # Per key: least-squares projector onto its two tones (to subtract them).
        self._fits: dict[tuple[int, int], tuple[npt.NDArray[np.float64], ...]] = {}
        t = np.arange(self._n) / sample_rate
        for r, f_row in enumerate(ROW_FREQS):
            for c, f_col in enumerate(COLUMN_FREQS):
                m = np.stack(
                    [
                        np.cos(2 * np.pi * f_row * t),
                        np.sin(2 * np.pi * f_row * t),
                        np.cos(2 * np.pi * f_col * t),
                        np.sin(2 * np.pi * f_col * t),
                    ],
                    axis=1,
                )
                self._fits[(r, c)] = (m, np.linalg.pinv(m))
        self._buffer = np.zeros(0, dtype=np.float64)
        self._candidate: str | None = None
        self._reported: str | None = None
        self._misses = 0

    def reset(self) -> None:
        """Forget buffered audio and key state (start of a new stream)."""
        self._buffer = np.zeros(0, dtype=np.float64)
        self._candidate = None
        self._reported = None
        self._misses = 0

    def feed(self, pcm16: npt.NDArray[np.int16]) -> list[str]:
        """Add audio; return the keys newly recognised in it (in order, each once).

        Args:
            pcm16: mono samples, a 1-D ``numpy.int16`` array at ``sample_rate``.

        Raises:
            TypeError: not a numpy array of dtype int16.
            ValueError: not one-dimensional.
        """
        if not isinstance(pcm16, np.ndarray):
            raise TypeError(f"pcm16 must be a numpy array, got {type(pcm16).__name__}")
        if pcm16.dtype != np.int16:
            raise TypeError(f"pcm16 must have dtype int16, got {pcm16.dtype}")
        if pcm16.ndim != 1:
            raise ValueError(f"pcm16 must be mono (1-D), got shape {pcm16.shape}")
        self._buffer = np.concatenate([self._buffer, pcm16.astype(np.float64) / 32768.0])
        if len(self._buffer) < self._n:
            return []
        count = (len(self._buffer) - self._n) // self._hop + 1
        windows = np.lib.stride_tricks.sliding_window_view(self._buffer, self._n)[:: self._hop]
        windows = windows[:count]
        keys: list[str] = []
        for candidate in self._classify(windows):
            key = self._step(candidate)
            if key is not None:
                keys.append(key)
        self._buffer = self._buffer[count * self._hop :]
        return keys

    def _classify(self, blocks: npt.NDArray[np.float64]) -> list[str | None]:
        n = self._n
        energy = np.einsum("ij,ij->i", blocks, blocks)
        power = _power(blocks, self._cos, self._sin) * (2.0 / n)  # (blocks, 16)
        out: list[str | None] = []
        for b in range(len(blocks)):
            out.append(self._key_of(blocks[b], energy[b], power[b]))
        return out

    def _key_of(
        self, block: npt.NDArray[np.float64], energy: float, power: npt.NDArray[np.float64]
    ) -> str | None:
        if energy / self._n < self._min_ms:
            return None
        rows, cols = power[:4], power[4:8]
        r, c = int(np.argmax(rows)), int(np.argmax(cols))
        p_row, p_col = rows[r], cols[c]
        if (p_row + p_col) < self._min_share * energy:
            return None
        if np.partition(rows, -2)[-2] * 4 > p_row or np.partition(cols, -2)[-2] * 4 > p_col:
            return None
        if p_col > p_row * self._max_twist or p_row > p_col * self._max_twist:
            return None
        m, pinv = self._fits[(r, c)]
        residual = block - np.einsum("nk,k->n", m, np.einsum("kn,n->k", pinv, block))
        pair = [8 + r, 12 + c]
        harmonics = _power(residual[None, :], self._cos[:, pair], self._sin[:, pair])[0]
        harmonics *= 2.0 / self._n
        if harmonics[0] * 10 > p_row or harmonics[1] * 10 > p_col:
            return None
        return _LAYOUT[r][c]

    def _step(self, candidate: str | None) -> str | None:
        previous, self._candidate = self._candidate, candidate
        if candidate is not None and candidate == self._reported:
            self._misses = 0
            return None
        if self._reported is not None:
            self._misses += 1
            if self._misses >= 2:
                self._reported = None
        if candidate is not None and candidate == previous and self._reported is None:
            self._reported = candidate
            self._misses = 0
            return candidate
        return None


def _power(
    blocks: npt.NDArray[np.float64], cos: npt.NDArray[np.float64], sin: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``|blocks @ exp(-i phase)|**2`` per block and frequency, without BLAS."""
    re = np.einsum("bn,nk->bk", blocks, cos)
    im = np.einsum("bn,nk->bk", blocks, sin)
    return np.asarray(re * re + im * im, dtype=np.float64)
