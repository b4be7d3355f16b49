"""Audio input for recognisers: validation, WAV loading (soundfile) and resampling (soxr).

soundfile and soxr belong to the ``speech`` extra and are imported on first use.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..._exceptions import AudioFormatError
from ...voice._audio import resample_pcm16
from ...voice._transport import check_pcm16 as check_frame

__all__ = [
    "AudioFormatError",
    "check_pcm16",
    "is_narrowband",
    "load_wav",
    "read_wav",
    "resample",
]


def check_pcm16(pcm16: object, sample_rate: object) -> npt.NDArray[np.int16]:
    """Return ``pcm16`` if it is mono int16 audio at a sane rate.

    Raises:
        AudioFormatError: wrong type, dtype, shape or sample rate (the message says which).
    """
    frame = check_frame(pcm16)
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, int):
        raise AudioFormatError(f"sample_rate must be an int, got {sample_rate!r}")
    if not 8000 <= sample_rate <= 96000:
        raise AudioFormatError(f"sample_rate must be 8000..96000 Hz, got {sample_rate}")
    return frame


def read_wav(path: str | Path) -> tuple[npt.NDArray[np.int16], int]:
    """Read a mono WAV or FLAC file as PCM16 (blocking; see `load_wav`).

    Raises:
        FileNotFoundError: no such file.
        AudioFormatError: not a readable WAV or FLAC file, or not mono.
    """
    import soundfile

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such audio file: {p}")
    try:
        info = soundfile.info(str(p))
        data, rate = soundfile.read(str(p), dtype="int16", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise AudioFormatError(f"{p}: not a readable audio file ({exc})") from exc
    if info.format not in ("WAV", "FLAC"):
        raise AudioFormatError(f"{p}: expected a WAV or FLAC file, got {info.format}")
    if data.shape[1] != 1:
        raise AudioFormatError(f"{p}: expected mono audio, got {data.shape[1]} channels")
    return np.ascontiguousarray(data[:, 0]), int(rate)


async def load_wav(path: str | Path) -> tuple[npt.NDArray[np.int16], int]:
    """Read a mono WAV file as ``(pcm16, sample_rate)`` in a worker thread.

    Raises:
        FileNotFoundError: no such file.
        AudioFormatError: not a readable WAV, or not mono.

    Cancellation:
        Safe: nothing is changed; the read finishes in its thread and is discarded.
    """
    return await asyncio.to_thread(read_wav, path)


def resample(pcm16: npt.NDArray[np.int16], from_rate: int, to_rate: int) -> npt.NDArray[np.int16]:
    """Resample PCM16 audio (soxr when installed; blocking: run long audio in a thread).

    Raises:
        AudioFormatError: bad audio or rates.
    """
    check_pcm16(pcm16, from_rate)
    check_pcm16(pcm16, to_rate)
    return resample_pcm16(pcm16, from_rate, to_rate)


NARROWBAND_HZ = 4_000
"""Telephone speech (G.711, 8 kHz sampling) carries nothing above this frequency."""


def is_narrowband(pcm16: npt.NDArray[np.int16], sample_rate: int) -> bool:
    """Whether the audio is band-limited like a telephone call (nothing above 4 kHz).

    True for audio sampled at 8 kHz or less, or for audio whose energy above 4 kHz is under
    1/10,000 (-40 dB) of the total, as after an 8 kHz call was resampled upwards.

    Raises:
        AudioFormatError: bad audio.
    """
    frame = check_pcm16(pcm16, sample_rate)
    if sample_rate <= 2 * NARROWBAND_HZ:
        return True
    spectrum = np.abs(np.fft.rfft(frame.astype(np.float64))) ** 2
    total = float(spectrum.sum())
    if total == 0.0:
        return False
    cut = int(len(spectrum) * NARROWBAND_HZ / (sample_rate / 2))
    return float(spectrum[cut:].sum()) < 1e-4 * total
