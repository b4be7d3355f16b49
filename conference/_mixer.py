"""The N -> 1 saturating mix of PCM16 frames."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from providers.base import PCM16

__all__ = ["mix_pcm16"]

_INT16_MIN = np.iinfo(np.int16).min
_INT16_MAX = np.iinfo(np.int16).max


def mix_pcm16(frames: Sequence[PCM16], length: int | None = None) -> PCM16:
    """Sum mono PCM16 frames sample by sample, saturating at the int16 range.

    The sum is computed in int32, so N loud frames clip at +/-32767 instead of wrapping
    around. Shorter frames count as silence past their end.

    Args:
        frames: The frames to mix (each 1-D int16).
        length: The output length; the longest frame's length by default.

    Raises:
        ValueError: A frame is not 1-D int16, or ``length`` is negative.
    """
    for index, frame in enumerate(frames):
        if not isinstance(frame, np.ndarray) or frame.dtype != np.int16 or frame.ndim != 1:
            raise ValueError(
                f"frame {index} must be a 1-D int16 array, got "
                f"{getattr(frame, 'dtype', type(frame).__name__)} "
                f"with shape {getattr(frame, 'shape', '?')}"
            )
    if length is None:
        length = max((len(f) for f in frames), default=0)
    if length < 0:
        raise ValueError(f"length must be >= 0, got {length}")
    total = np.zeros(length, dtype=np.int32)
    for frame in frames:
        n = min(len(frame), length)
        total[:n] += frame[:n]
    mixed: PCM16 = np.clip(total, _INT16_MIN, _INT16_MAX).astype(np.int16)
    return mixed
