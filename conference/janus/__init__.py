"""``conference.janus``: conference bots in a Janus AudioBridge room (extra ``janus``).

:class:`JanusConferenceBackend` puts the bot into a real audio conference: it creates or joins
an AudioBridge room over the Janus HTTP API and takes part as a plain-RTP participant (G.711
µ-law on loopback, or Opus through PyAV), with the roster from the room's events. Seated
participants (plain RTP, SIP gateway legs) send their RTP through the bot (``_relay``), which
hears each one's own audio (``open_speakers``, for per-speaker hearing) and passes it into the
room; speaker labels of the mix come from those levels and from talking events, and
participants without a seat (WebRTC clients) are heard through the mix cut by their talking
events (``conference.MixCut``, shared with the in-memory backend). The wire mapping is sans
I/O: ``_wire`` (Janus and AudioBridge JSON), ``_rtp`` (RTP packets and the RFC 6464 audio
level), ``_latch`` (which source and SSRC a socket takes) and ``_jitter`` (the input jitter
buffer), with ``conference.SpeakerClock`` (who spoke when); ``_client``, ``_media`` and
``_relay`` only move bytes. :func:`start_local_janus` and :class:`RtpParticipant` hold a meeting
on loopback (the demo's ``voice-hitl demo --conference --janus``, the tests,
``bench/bench_janus.py``).

How the backend protocol maps onto other conferencing servers (so they fit later without
changing the channel):

- **LiveKit rooms** and **Daily calls**: see ``conference._backend`` (``PerSpeakerBackend``):
  their tracks are per participant already, so ``open_speakers`` reads each one and
  ``open_audio`` mixes them with ``mix_pcm16``.
- **Twilio conferences.** The bot joins through a call whose TwiML ``<Connect><Stream>`` sends
  the conference mix (µ-law 8 kHz, the codec this backend already speaks) over a Media Stream;
  the roster comes from the conference status callbacks (``participant-join`` /
  ``participant-leave``, the call SID as the id, a label as the display name) and
  ``conference-end`` becomes ``ConferenceEnded``. Twilio reports speakers through the
  ``participant-speech-start``/``-stop`` callbacks, which map onto
  ``conference.SpeakerClock.talking`` exactly as Janus's talking events do.
"""

from __future__ import annotations

from voice_hitl._public import publish

from ._backend import JanusConferenceBackend
from ._client import JanusLostError, JanusSession
from ._jitter import JitterBuffer, JitterStats
from ._lane import JanusAudioLane, JanusSpeakerLane
from ._latch import RtpLatch, RtpStats
from ._participant import RtpParticipant
from ._relay import Seat
from ._rtp import RtpPacket, RtpSender, audio_level, parse_rtp
from ._server import LocalJanus, janus_binary, start_local_janus
from ._wire import JanusWireError, read_events

__all__ = [
    "JanusAudioLane",
    "JanusConferenceBackend",
    "JanusLostError",
    "JanusSession",
    "JanusSpeakerLane",
    "JanusWireError",
    "JitterBuffer",
    "JitterStats",
    "LocalJanus",
    "RtpLatch",
    "RtpPacket",
    "RtpParticipant",
    "RtpSender",
    "RtpStats",
    "Seat",
    "audio_level",
    "janus_binary",
    "parse_rtp",
    "read_events",
    "start_local_janus",
]

publish(__name__, globals(), __all__)
