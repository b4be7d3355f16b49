"""Small audio helpers shared by transports and providers: resampling and WAV files.

WAV files are read and written with the standard library (mono or stereo PCM16 only); call
the file functions through ``asyncio.to_thread`` from async code.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from ._provider_events import PCM16

__all__ = ["read_wav_pcm16", "resample_linear", "resample_pcm16", "write_wav_pcm16"]


def resample_linear(frame: PCM16, from_rate: int, to_rate: int) -> PCM16:
    """Resample mono PCM16 by linear interpolation (numpy only; no anti-alias filter).

    Deterministic frame by frame, so it suits streaming; returns ``frame`` if rates match.
    """
    if from_rate == to_rate or frame.size == 0:
        return frame
    count = max(1, round(frame.size * to_rate / from_rate))
    positions = np.arange(count, dtype=np.float64) * (from_rate / to_rate)
    samples = np.interp(positions, np.arange(frame.size), frame.astype(np.float64))
    interpolated: PCM16 = np.clip(np.rint(samples), -32768, 32767).astype(np.int16)
    return interpolated


def resample_pcm16(frame: PCM16, from_rate: int, to_rate: int) -> PCM16:
    """Resample mono PCM16: soxr (high quality) when installed, else :func:`resample_linear`."""
    if from_rate == to_rate or len(frame) == 0:
        return frame
    try:
        import soxr
    except ImportError:
        return resample_linear(frame, from_rate, to_rate)
    result: PCM16 = np.asarray(soxr.resample(frame, from_rate, to_rate, quality="HQ"), np.int16)
    return result


def read_wav_pcm16(path: str | Path) -> tuple[PCM16, int]:
    """Read a PCM16 WAV file as mono samples and its rate (stereo is averaged).

    Raises:
        ValueError: The file is not a PCM16 WAV file (names the file and what is wrong).
    """
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"{path}: not a readable WAV file ({exc})") from None
    if width != 2:
        raise ValueError(f"{path}: expected 16-bit PCM, got {8 * width}-bit samples")
    if channels not in (1, 2):
        raise ValueError(f"{path}: expected mono or stereo, got {channels} channels")
    samples = np.frombuffer(raw, dtype="<i2").astype(np.int16)
    if channels == 2:
        samples = samples.reshape(-1, 2).mean(axis=1).astype(np.int16)
    return samples, rate


def write_wav_pcm16(path: str | Path, samples: PCM16, rate: int) -> None:
    """Write mono PCM16 samples (or an (n, 2) array for stereo) to a WAV file."""
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(np.ascontiguousarray(samples, dtype="<i2").tobytes())
