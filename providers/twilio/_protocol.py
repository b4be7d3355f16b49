"""``MediaStream``: one Twilio Media Stream, sans I/O.

Feed it each text message from the socket with :meth:`MediaStream.receive`, then read what
happened from :meth:`events` and what to send from :meth:`outgoing`. Agent audio goes in with
:meth:`send_audio` (PCM16 at 8 kHz) and leaves as µ-law ``media`` messages of 20 ms, each batch
followed by a ``mark``; :meth:`clear` drops what the caller has not heard yet (barge-in).

Marks are how we know what the caller heard: Twilio echoes a mark once the audio before it has
played, and also, at once, every mark still queued when we send ``clear``. So a mark that comes
back after a ``clear`` we sent is counted as cleared, not played (one that had in fact played
just before the clear is counted unheard: the count errs on the side of "not heard").
"""

from __future__ import annotations

import base64
import binascii
import enum
import itertools
import json
import logging
from dataclasses import dataclass, field
from typing import Literal

from voice_hitl.voice._provider_events import PCM16

from ._messages import (
    KEYPAD_DIGITS,
    Connected,
    Dtmf,
    Mark,
    Media,
    OutboundMessage,
    Start,
    Stop,
    StreamProtocolError,
    clear_message,
    mark_message,
    media_message,
    parse_message,
)
from ._mulaw import mulaw_to_pcm16, pcm16_to_mulaw

__all__ = [
    "FRAME_SAMPLES",
    "PHONE_RATE",
    "AudioPlayed",
    "CallerAudio",
    "KeyPressed",
    "MediaStream",
    "StreamEvent",
    "StreamStarted",
    "StreamStopped",
]

logger = logging.getLogger("voice_hitl.providers.twilio")

PHONE_RATE = 8000
"""Twilio's media rate (G.711 µ-law, mono)."""
FRAME_SAMPLES = PHONE_RATE // 50
"""One 20 ms frame."""


@dataclass(frozen=True, slots=True)
class StreamStarted:
    """The ``start`` message: who is calling, on which stream."""

    stream_sid: str
    call_sid: str
    account_sid: str
    custom_parameters: dict[str, str] = field(default_factory=dict)
    type: Literal["started"] = "started"


@dataclass(frozen=True, slots=True)
class CallerAudio:
    """Caller audio, decoded to PCM16 at 8 kHz."""

    frame: PCM16 = field(repr=False)
    type: Literal["audio"] = "audio"


@dataclass(frozen=True, slots=True)
class KeyPressed:
    """The caller pressed a key (``0``-``9``, ``*``, ``#``, ``A``-``D``)."""

    digit: str
    type: Literal["dtmf"] = "dtmf"


@dataclass(frozen=True, slots=True)
class AudioPlayed:
    """Agent audio has played to the caller up to ``position`` (8 kHz samples sent so far)."""

    position: int
    type: Literal["played"] = "played"


@dataclass(frozen=True, slots=True)
class StreamStopped:
    """The ``stop`` message: the call ended (hung up, or the stream was stopped)."""

    type: Literal["stopped"] = "stopped"


StreamEvent = StreamStarted | CallerAudio | KeyPressed | AudioPlayed | StreamStopped


class _State(enum.Enum):
    CONNECTING = "connecting"  # before ``start``
    STREAMING = "streaming"
    STOPPED = "stopped"


class MediaStream:
    """The state of one Media Stream: its ids, the agent audio sent, the marks in flight."""

    def __init__(self) -> None:
        self._state = _State.CONNECTING
        self.stream_sid = ""
        self.call_sid = ""
        self._events: list[StreamEvent] = []
        self._outgoing: list[str] = []
        self._pending = bytearray()  # µ-law not yet sent (under one frame)
        self.sent_samples = 0
        """Agent audio sent to Twilio so far, in 8 kHz samples (cleared audio included)."""
        self.played_samples = 0
        """How far the agent audio has played, by the last mark Twilio played back."""
        self._marks: dict[str, int] = {}  # in flight: name -> position
        self._cleared: set[str] = set()
        self._names = (f"vh{n}" for n in itertools.count(1))

    @property
    def started(self) -> bool:
        """True once ``start`` arrived (and until the stream stops)."""
        return self._state is _State.STREAMING

    @property
    def stopped(self) -> bool:
        """True once ``stop`` arrived."""
        return self._state is _State.STOPPED

    def events(self) -> list[StreamEvent]:
        """What happened since the last call, in order."""
        events, self._events = self._events, []
        return events

    def outgoing(self) -> list[str]:
        """Messages to send, in order (JSON text)."""
        outgoing, self._outgoing = self._outgoing, []
        return outgoing

    def _send(self, message: OutboundMessage) -> None:
        self._outgoing.append(json.dumps(message, separators=(",", ":")))

    # -- inbound -----------------------------------------------------------------------------

    def receive(self, text: str | bytes) -> None:
        """Take one message from Twilio.

        Raises:
            StreamProtocolError: The message is malformed, comes out of order (media before
                ``start``, a second ``start``), names another stream, or ``start`` announces a
                media format other than µ-law 8 kHz mono. The stream is unchanged.
        """
        message = parse_message(text)
        if message is None:
            logger.debug("ignored Media Streams event: %.80s", text)
            return
        if self._state is _State.STOPPED:
            logger.debug("ignored %r after the stream stopped", message.event)
            return
        if isinstance(message, Connected):
            return
        if isinstance(message, Start):
            self._start(message)
            return
        if self._state is _State.CONNECTING:
            raise StreamProtocolError(f"{message.event!r} message before 'start'")
        if message.streamSid and message.streamSid != self.stream_sid:
            raise StreamProtocolError(
                f"{message.event!r} message for stream {message.streamSid!r}, this is "
                f"{self.stream_sid!r}"
            )
        if isinstance(message, Media):
            self._media(message)
        elif isinstance(message, Dtmf):
            digit = message.dtmf.digit
            if len(digit) != 1 or digit not in KEYPAD_DIGITS:
                raise StreamProtocolError(f"'dtmf' message with an unknown key {digit!r}")
            self._events.append(KeyPressed(digit))
        elif isinstance(message, Mark):
            self._mark(message.mark.name)
        elif isinstance(message, Stop):
            self._state = _State.STOPPED
            self._events.append(StreamStopped())

    def _start(self, message: Start) -> None:
        if self._state is not _State.CONNECTING:
            raise StreamProtocolError("a second 'start' message on one stream")
        info = message.start
        media = info.mediaFormat
        if (media.encoding, media.sampleRate, media.channels) != ("audio/x-mulaw", PHONE_RATE, 1):
            raise StreamProtocolError(
                "unsupported media format: expected audio/x-mulaw at 8000 Hz, 1 channel, got "
                f"{media.encoding} at {media.sampleRate} Hz, {media.channels} channel(s)"
            )
        self.stream_sid = info.streamSid
        self.call_sid = info.callSid
        self._state = _State.STREAMING
        self._events.append(
            StreamStarted(info.streamSid, info.callSid, info.accountSid, info.customParameters)
        )

    def _media(self, message: Media) -> None:
        if message.media.track not in ("inbound", "inbound_track"):
            return  # our own audio, echoed on a both-tracks stream
        try:
            data = base64.b64decode(message.media.payload, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise StreamProtocolError(f"'media' payload is not base64: {exc}") from None
        if data:
            self._events.append(CallerAudio(mulaw_to_pcm16(data)))

    def _mark(self, name: str) -> None:
        position = self._marks.pop(name, None)
        if position is None:
            logger.debug("mark %r is not one of ours", name)
            return
        if name in self._cleared:
            self._cleared.discard(name)
            return
        if position > self.played_samples:
            self.played_samples = position
            self._events.append(AudioPlayed(position))

    # -- outbound ----------------------------------------------------------------------------

    def send_audio(self, frame: PCM16) -> None:
        """Queue agent audio (PCM16 at 8 kHz): whole 20 ms frames go out as ``media``, then a
        ``mark``; a shorter tail waits for the next call (or :meth:`flush`)."""
        if self._state is not _State.STREAMING or frame.size == 0:
            return
        self._pending += pcm16_to_mulaw(frame)
        whole = len(self._pending) - len(self._pending) % FRAME_SAMPLES
        if whole == 0:
            return
        for start in range(0, whole, FRAME_SAMPLES):
            self._send_media(bytes(self._pending[start : start + FRAME_SAMPLES]))
        del self._pending[:whole]
        self._place_mark()

    def flush(self) -> None:
        """Send the tail shorter than a frame, and a mark after it."""
        if self._state is _State.STREAMING and self._pending:
            self._send_media(bytes(self._pending))
            self._pending.clear()
            self._place_mark()

    def _send_media(self, data: bytes) -> None:
        self._send(media_message(self.stream_sid, base64.b64encode(data).decode("ascii")))
        self.sent_samples += len(data)

    def _place_mark(self) -> None:
        name = next(self._names)
        self._marks[name] = self.sent_samples
        self._send(mark_message(self.stream_sid, name))

    def clear(self) -> None:
        """Drop the audio the caller has not heard yet (``clear``); marks still in flight
        will come back as cleared, not played. Nothing is sent when nothing may be playing
        (every mark played back or already cleared)."""
        if self._state is not _State.STREAMING:
            return
        self._pending.clear()
        if self._marks.keys() <= self._cleared:
            return
        self._cleared.update(self._marks)
        self._send(clear_message(self.stream_sid))

    @property
    def unplayed_samples(self) -> int:
        """Agent audio sent but not (yet) known to have played."""
        return self.sent_samples - self.played_samples

