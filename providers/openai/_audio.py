"""PCM16 audio to and from the Realtime API's wire format (base64, mono, 24 kHz).

Resampling uses linear interpolation with numpy (no extra dependency). It is adequate for
speech at telephone and wideband rates; it applies no anti-alias filter when downsampling.
"""

from __future__ import annotations

from providers.realtime_ws import _wire as wire
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
    return wire.encode_pcm16(frame, rate, WIRE_RATE)


def decode_pcm16(data: str, rate: int) -> PCM16:
    """Decode a base64 PCM16 24 kHz delta and resample it to ``rate`` Hz.

    Raises:
        ValueError: ``data`` is not base64, or not whole 16-bit samples.
    """
    return wire.decode_pcm16(data, WIRE_RATE, rate, what="audio delta")
