"""The bot leg's audio codecs: G.711 µ-law (no library) and Opus (PyAV's libopus).

A codec turns one 20 ms frame of PCM16 at its own rate into an RTP payload and back, and says
which payload type and timestamp step its packets carry. µ-law runs at 8 kHz (telephone band);
Opus at 48 kHz (the AudioBridge mixes at 16 kHz, so the bot hears wideband speech). Opus needs
PyAV (``av``), which bundles FFmpeg with libopus; it is imported only when chosen.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import numpy as np

from providers.base import PCM16
from providers.twilio._mulaw import mulaw_to_pcm16, pcm16_to_mulaw

__all__ = ["Codec", "CodecName", "Opus", "Pcmu", "make_codec"]

CodecName = Literal["pcmu", "opus"]


class Codec(Protocol):
    """One direction's worth of a codec: 20 ms frames of PCM16 at :attr:`rate`."""

    name: CodecName
    payload_type: int
    rate: int
    frame: int
    """Samples per 20 ms packet (also the RTP timestamp step)."""

    def encode(self, samples: PCM16) -> bytes:
        """One packet's payload for exactly :attr:`frame` samples."""
        ...

    def decode(self, payload: bytes) -> PCM16:
        """The samples of one packet's payload."""
        ...


class Pcmu:
    """G.711 µ-law, payload type 0, 8 kHz."""

    name: CodecName = "pcmu"
    payload_type = 0
    rate = 8_000
    frame = 160

    def encode(self, samples: PCM16) -> bytes:
        return pcm16_to_mulaw(samples)

    def decode(self, payload: bytes) -> PCM16:
        return mulaw_to_pcm16(payload)


class Opus:
    """Opus (libopus through PyAV), dynamic payload type 111, 48 kHz mono.

    Raises:
        ModuleNotFoundError: PyAV is not installed.
    """

    name: CodecName = "opus"
    payload_type = 111
    rate = 48_000
    frame = 960

    def __init__(self, bitrate: int = 32_000) -> None:
        import av

        self._av: Any = av
        self._encoder: Any = av.CodecContext.create("libopus", "w")
        self._encoder.sample_rate = self.rate
        self._encoder.layout = "mono"
        self._encoder.format = "s16"
        self._encoder.bit_rate = bitrate
        self._encoder.open()
        self._decoder: Any = av.CodecContext.create("opus", "r")
        self._decoder.sample_rate = self.rate
        self._decoder.layout = "mono"
        self._pts = 0

    def encode(self, samples: PCM16) -> bytes:
        frame = self._av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples, dtype=np.int16).reshape(1, -1),
            format="s16",
            layout="mono",
        )
        frame.sample_rate = self.rate
        frame.pts = self._pts
        self._pts += len(samples)
        return b"".join(bytes(packet) for packet in self._encoder.encode(frame))

    def decode(self, payload: bytes) -> PCM16:
        frames = self._decoder.decode(self._av.Packet(payload))
        chunks = [frame.to_ndarray().reshape(-1) for frame in frames]
        if not chunks:
            return np.zeros(self.frame, dtype=np.int16)
        audio = np.concatenate(chunks)
        if audio.dtype != np.int16:  # planar float from FFmpeg's decoder
            audio = np.clip(audio * 32768.0, -32768, 32767)
        out: PCM16 = audio.astype(np.int16)
        return out


def make_codec(name: CodecName) -> Codec:
    """The codec called ``name``.

    Raises:
        ValueError: An unknown name.
        ModuleNotFoundError: Opus without PyAV installed.
    """
    if name == "pcmu":
        return Pcmu()
    if name == "opus":
        return Opus()
    raise ValueError(f"codec must be 'pcmu' or 'opus', got {name!r}")
