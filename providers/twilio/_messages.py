"""Twilio Media Streams messages, as tolerant pydantic models (inbound) and dicts (outbound).

Twilio sends ``connected``, ``start``, ``media``, ``dtmf``, ``mark`` and ``stop``; we send
``media``, ``mark`` and ``clear``. Inbound models allow extra fields, so fields Twilio adds later
never break parsing. :func:`parse_message` tells an event we do not know (``None``: ignore it)
from a known one whose shape is wrong (:class:`StreamProtocolError`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from voice_hitl import VoiceHitlError

__all__ = [
    "KEYPAD_DIGITS",
    "Connected",
    "Dtmf",
    "InboundMessage",
    "Mark",
    "Media",
    "MediaFormat",
    "OutboundMessage",
    "Start",
    "StartInfo",
    "Stop",
    "StreamProtocolError",
    "clear_message",
    "mark_message",
    "media_message",
    "parse_message",
]

KEYPAD_DIGITS = frozenset("0123456789*#ABCD")
"""The keys a ``dtmf`` message can carry."""


class StreamProtocolError(VoiceHitlError, ValueError):
    """A Media Streams message we cannot use (malformed, out of order, unsupported format)."""


class _Wire(BaseModel):
    """Field names are Twilio's (camelCase)."""

    model_config = ConfigDict(extra="allow", frozen=True)


class Connected(_Wire):
    """The first message of every stream."""

    event: Literal["connected"]
    protocol: str = ""
    version: str = ""


class MediaFormat(_Wire):
    """The audio Twilio sends and expects: ``audio/x-mulaw`` at 8000 Hz, mono."""

    encoding: str
    sampleRate: int
    channels: int = 1


class StartInfo(_Wire):
    """What ``start`` says about the call."""

    streamSid: str
    callSid: str
    accountSid: str = ""
    tracks: list[str] = Field(default_factory=lambda: ["inbound"])
    customParameters: dict[str, str] = Field(default_factory=dict)
    mediaFormat: MediaFormat


class Start(_Wire):
    """The stream started: call and stream ids, custom parameters, media format."""

    event: Literal["start"]
    sequenceNumber: str = ""
    streamSid: str = ""
    start: StartInfo


class MediaPayload(_Wire):
    track: str = "inbound"
    chunk: str = ""
    timestamp: str = ""
    payload: str


class Media(_Wire):
    """A chunk of caller audio: base64 µ-law."""

    event: Literal["media"]
    sequenceNumber: str = ""
    streamSid: str = ""
    media: MediaPayload


class DtmfPayload(_Wire):
    track: str = "inbound_track"
    digit: str


class Dtmf(_Wire):
    """The caller pressed a key."""

    event: Literal["dtmf"]
    sequenceNumber: str = ""
    streamSid: str = ""
    dtmf: DtmfPayload


class MarkPayload(_Wire):
    name: str


class Mark(_Wire):
    """Audio we sent up to a ``mark`` of ours has finished playing (or was cleared)."""

    event: Literal["mark"]
    sequenceNumber: str = ""
    streamSid: str = ""
    mark: MarkPayload


class Stop(_Wire):
    """The stream ended: the call hung up, or the stream was stopped."""

    event: Literal["stop"]
    sequenceNumber: str = ""
    streamSid: str = ""
    stop: dict[str, Any] = Field(default_factory=dict)


InboundMessage = Annotated[
    Connected | Start | Media | Dtmf | Mark | Stop, Field(discriminator="event")
]
_INBOUND: TypeAdapter[InboundMessage] = TypeAdapter(InboundMessage)
_KNOWN = frozenset({"connected", "start", "media", "dtmf", "mark", "stop"})


def parse_message(text: str | bytes) -> InboundMessage | None:
    """Parse one Media Streams message.

    Returns:
        The message, or None for an event this module does not know (to be ignored).

    Raises:
        StreamProtocolError: Not a JSON object, no ``event``, or a known event whose fields are
            missing or of the wrong type (the message names which).
    """
    if not isinstance(text, str):
        raise StreamProtocolError(
            "binary frame not allowed: Media Streams messages are JSON text frames"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StreamProtocolError(f"Media Streams message is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("event"), str):
        raise StreamProtocolError(
            f"Media Streams message must be an object with an 'event' string, got {text[:80]!r}"
        )
    if data["event"] not in _KNOWN:
        return None
    try:
        return _INBOUND.validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'][1:])}: {error['msg']}"
            for error in exc.errors()
        )
        raise StreamProtocolError(f"bad {data['event']!r} message ({problems})") from None


class _MediaOut(TypedDict):
    payload: str


class MediaOut(TypedDict):
    event: Literal["media"]
    streamSid: str
    media: _MediaOut


class _MarkOut(TypedDict):
    name: str


class MarkOut(TypedDict):
    event: Literal["mark"]
    streamSid: str
    mark: _MarkOut


class ClearOut(TypedDict):
    event: Literal["clear"]
    streamSid: str


OutboundMessage = MediaOut | MarkOut | ClearOut


def media_message(stream_sid: str, payload_b64: str) -> MediaOut:
    """Audio for the caller (base64 µ-law, 8 kHz)."""
    return {"event": "media", "streamSid": stream_sid, "media": {"payload": payload_b64}}


def mark_message(stream_sid: str, name: str) -> MarkOut:
    """Ask Twilio to tell us (with a ``mark`` back) when the audio sent so far has played."""
    return {"event": "mark", "streamSid": stream_sid, "mark": {"name": name}}


def clear_message(stream_sid: str) -> ClearOut:
    """Drop the audio queued for the caller that has not played yet (barge-in)."""
    return {"event": "clear", "streamSid": stream_sid}
