"""RTP packets of G.711 µ-law audio, with the RFC 6464 audio-level extension (sans I/O).

:func:`parse_rtp` reads a datagram (RFC 3550 fixed header, CSRCs, a one-byte-header extension
block of RFC 8285 carrying the audio level when its id is given); :class:`RtpSender` cuts PCM16
at 8 kHz into 20 ms PCMU packets with consecutive sequence numbers and a timestamp that grows
by the samples sent, the marker bit set on the first packet of each talkspurt.
"""

from __future__ import annotations

import secrets
import struct
from dataclasses import dataclass

import numpy as np

from providers.base import PCM16

from ._codec import Codec, Pcmu

__all__ = [
    "FRAME_SAMPLES",
    "PCMU",
    "RtpPacket",
    "RtpSender",
    "audio_level",
    "parse_rtp",
]

PCMU = 0
FRAME_SAMPLES = 160  # 20 ms at 8 kHz
_HEADER = struct.Struct("!BBHII")
_ONE_BYTE_PROFILE = 0xBEDE


@dataclass(frozen=True, slots=True)
class RtpPacket:
    """One RTP packet: header fields, payload, and the audio level when it carried one."""

    sequence: int
    timestamp: int
    ssrc: int
    payload_type: int
    payload: bytes
    marker: bool = False
    level: int | None = None
    """RFC 6464 level in -dBov (0 loudest .. 127 silence), when the extension was present."""
    voice: bool = False


def parse_rtp(data: bytes, *, level_id: int | None = None) -> RtpPacket:
    """Read one RTP datagram.

    Args:
        data: The datagram.
        level_id: The extension id the audio level travels under (None: ignore extensions).

    Raises:
        ValueError: Not RTP version 2, or truncated (names what is short).
    """
    if len(data) < _HEADER.size:
        raise ValueError(f"an RTP packet is at least 12 bytes, got {len(data)}")
    first, second, sequence, timestamp, ssrc = _HEADER.unpack_from(data)
    if first >> 6 != 2:
        raise ValueError(f"not RTP version 2 (version {first >> 6})")
    offset = _HEADER.size + 4 * (first & 0x0F)
    level: int | None = None
    voice = False
    if first & 0x10:
        if len(data) < offset + 4:
            raise ValueError("RTP header extension truncated")
        profile, words = struct.unpack_from("!HH", data, offset)
        block = data[offset + 4 : offset + 4 + 4 * words]
        if len(block) < 4 * words:
            raise ValueError("RTP header extension block truncated")
        offset += 4 + 4 * words
        if profile == _ONE_BYTE_PROFILE and level_id is not None:
            level, voice = _find_level(block, level_id)
    end = len(data)
    if first & 0x20:
        pad = data[-1]
        if pad == 0 or pad > end - offset:
            raise ValueError(f"RTP padding of {pad} bytes does not fit the packet")
        end -= pad
    if offset > end:
        raise ValueError("RTP packet shorter than its header")
    return RtpPacket(
        sequence,
        timestamp,
        ssrc,
        second & 0x7F,
        bytes(data[offset:end]),
        marker=bool(second & 0x80),
        level=level,
        voice=voice,
    )


def _find_level(block: bytes, level_id: int) -> tuple[int | None, bool]:
    i = 0
    while i < len(block):
        head = block[i]
        if head == 0:  # padding
            i += 1
            continue
        ext_id, length = head >> 4, (head & 0x0F) + 1
        if ext_id == 15:
            break
        if ext_id == level_id and i + 1 < len(block):
            value = block[i + 1]
            return value & 0x7F, bool(value & 0x80)
        i += 1 + length
    return None, False


def audio_level(samples: PCM16) -> int:
    """The RFC 6464 level of a frame: its RMS in -dBov, 0 (full scale) .. 127 (silence)."""
    if not len(samples):
        return 127
    rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) / 32768.0
    if rms <= 0.0:
        return 127
    return int(min(127, max(0, round(-20.0 * np.log10(rms)))))


class RtpSender:
    """Packs PCM16 into 20 ms packets of one stream (µ-law at 8 kHz unless ``codec`` says).

    Args:
        level_id: When given, every packet carries the RFC 6464 audio level of its samples
            under this one-byte extension id (as browsers send it).
        ssrc: The stream's SSRC (random by default).
        codec: The payload's codec (:class:`Pcmu` by default).
    """

    def __init__(
        self, *, level_id: int | None = None, ssrc: int | None = None, codec: Codec | None = None
    ) -> None:
        if level_id is not None and not 1 <= level_id <= 14:
            raise ValueError(f"a one-byte extension id is 1..14, got {level_id}")
        self.codec: Codec = codec or Pcmu()
        self.level_id = level_id
        self.ssrc = secrets.randbits(32) if ssrc is None else ssrc
        self.sequence = secrets.randbits(16)
        self.timestamp = secrets.randbits(32)
        self._talking = False

    def packet(self, frame: PCM16, *, voice: bool | None = None) -> bytes:
        """One packet of the codec's 20 ms frame of samples (zero-padded if shorter).

        ``voice`` sets the extension's V flag and the talkspurt marker; by default a frame
        louder than -50 dBov is voice.

        Raises:
            ValueError: The frame is longer than one packet.
        """
        size = self.codec.frame
        if len(frame) > size:
            raise ValueError(f"a packet holds {size} samples, got {len(frame)}")
        if len(frame) < size:
            frame = np.concatenate([frame, np.zeros(size - len(frame), np.int16)])
        level = audio_level(frame)
        speaking = level < 50 if voice is None else voice
        marker = speaking and not self._talking
        self._talking = speaking
        first = 0x80 | (0x10 if self.level_id is not None else 0)
        header = _HEADER.pack(
            first,
            (0x80 if marker else 0) | self.codec.payload_type,
            self.sequence,
            self.timestamp,
            self.ssrc,
        )
        if self.level_id is not None:
            value = (0x80 if speaking else 0) | level
            header += struct.pack("!HHBBxx", _ONE_BYTE_PROFILE, 1, self.level_id << 4, value)
        self.sequence = (self.sequence + 1) & 0xFFFF
        self.timestamp = (self.timestamp + size) & 0xFFFFFFFF
        return header + self.codec.encode(frame)
