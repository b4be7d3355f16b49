"""PCM16 audio to and from the Realtime API's wire format (base64, mono, 24 kHz).

Resampling uses linear interpolation with numpy (no extra dependency). It is adequate for
speech at telephone and wideband rates; it applies no anti-alias filter when downsampling.
"""

from __future__ import annotations

import base64
import binascii

import numpy as np

from voice_hitl.voice._audio import resample_linear as resample
from voice_hitl.voice._provider_events import PCM16

__all__ = ["WIRE_RATE", "decode_pcm16", "encode_pcm16", "resample"]

WIRE_RATE = 24_000
"""The only PCM rate the GA API accepts and produces (``audio/pcm``)."""


def encode_pcm16(frame: PCM16, rate: int) -> str:
    """Base64 of ``frame`` (at ``rate`` Hz) as little-endian PCM16 at 24 kHz.

    Raises:
        ValueError: ``frame`` is not a one-dimensional int16 array.
    """
    if frame.dtype != np.int16 or frame.ndim != 1:
        raise ValueError(
            f"audio frames must be 1-D int16 arrays (mono PCM16), got {frame.dtype} "
            f"with shape {frame.shape}"
        )
    wire = resample(frame, rate, WIRE_RATE)
    return base64.b64encode(wire.astype("<i2", copy=False).tobytes()).decode("ascii")


def decode_pcm16(data: str, rate: int) -> PCM16:
    """Decode a base64 PCM16 24 kHz delta and resample it to ``rate`` Hz.

    Raises:
        ValueError: ``data`` is not base64, or not whole 16-bit samples.
    """
    try:
        raw = base64.b64decode(data, validate=True)
    except binascii.Error:
        raise ValueError("audio delta is not valid base64") from None
    if len(raw) % 2:
        raise ValueError(f"audio delta has an odd byte count ({len(raw)}); PCM16 expected")
    frame = np.frombuffer(raw, dtype="<i2").astype(np.int16)
    return resample(frame, WIRE_RATE, rate)
