"""Phone callers through Twilio Media Streams (extra ``twilio``).

A call arrives as a Media Streams websocket (TwiML ``<Connect><Stream>``); :class:`PhoneServer`
makes each one a session of a ``RealtimeVoiceChannel`` whose transport is a
:class:`TwilioTransport`::

    transport = TwilioTransport()
    channel = RealtimeVoiceChannel("phone", provider=provider, transport=transport,
                                   human_input_handler=human)
    async with PhoneServer(channel, host="0.0.0.0", port=8080) as server:
        await server.serve_forever()

Caller audio is G.711 µ-law at 8 kHz, decoded and resampled to the channel's rates; keys come
as events (keypad answers); barge-in sends ``clear``; marks tell what the caller heard. The sans-I/O
protocol is :class:`MediaStream`; ``providers.twilio.testing.FakeTwilioCall`` places calls the way
Twilio does, for tests.
"""

from __future__ import annotations

from voice_hitl._public import publish

from ._call import PhoneCall, Question
from ._messages import StreamProtocolError
from ._mulaw import mulaw_to_pcm16, pcm16_to_mulaw
from ._protocol import (
    FRAME_SAMPLES,
    PHONE_RATE,
    AudioPlayed,
    CallerAudio,
    KeyPressed,
    MediaStream,
    StreamEvent,
    StreamStarted,
    StreamStopped,
)
from ._resample import StreamResampler
from ._transport import TwilioTransport

try:
    from ._server import (
        CALLER_HUNG_UP,
        SERVER_CLOSED,
        STREAM_DROPPED,
        PhoneServer,
        withdrawal_reason,
    )
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    if exc.name != "websockets":
        raise
    raise ModuleNotFoundError(
        "providers.twilio needs the 'websockets' package: pip install 'voice-hitl[twilio]'",
        name="websockets",
    ) from exc

__all__ = [
    "CALLER_HUNG_UP",
    "FRAME_SAMPLES",
    "PHONE_RATE",
    "SERVER_CLOSED",
    "STREAM_DROPPED",
    "AudioPlayed",
    "CallerAudio",
    "KeyPressed",
    "MediaStream",
    "PhoneCall",
    "PhoneServer",
    "Question",
    "StreamEvent",
    "StreamProtocolError",
    "StreamResampler",
    "StreamStarted",
    "StreamStopped",
    "TwilioTransport",
    "mulaw_to_pcm16",
    "pcm16_to_mulaw",
    "twiml",
    "withdrawal_reason",
]


def twiml(stream_url: str, *, caller: str = "{{From}}") -> str:
    """The TwiML that connects a call to a :class:`PhoneServer` at ``stream_url``
    (``wss://...``), passing the caller's number as the ``caller`` parameter."""
    from xml.sax.saxutils import quoteattr

    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<Response>\n"
        "  <Connect>\n"
        f"    <Stream url={quoteattr(stream_url)}>\n"
        f'      <Parameter name="caller" value={quoteattr(caller)} />\n'
        "    </Stream>\n"
        "  </Connect>\n"
        "</Response>\n"
    )


publish(__name__, globals(), __all__)
