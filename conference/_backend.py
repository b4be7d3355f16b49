"""What a conference backend gives a :class:`~conference.ConferenceChannel`.

A backend owns the call: the roster (participants join and leave, each with an id and a display
name), each participant's audio in, and one bot track out. The channel sees the participants'
audio already mixed N -> 1 (:class:`MixedFrame`, which says who was speaking in it when the
backend can tell) through an audio lane it opens per provider plug, and the roster changes and
speaker-attributed transcriptions as :data:`ConferenceEvent` values.

A backend that can also hand over each participant's OWN audio (:class:`PerSpeakerBackend`)
lets the channel hear every participant on their own stream (``ConferenceChannel(hearing=)``):
detection and recognition per speaker, each utterance attributed to the stream it was heard
on, so back-to-back, overlapping and simultaneous answers each keep their speaker, and noise
on one line touches only that line. The mix still goes to the provider for its conversation.
A participant the backend has no stream for (a WebRTC client of a Janus AudioBridge) may get
one cut from the mix by when they talk (:class:`~conference.MixCut`), its frames marked with
a ``SpeakerFrame.attribution`` under 1.0.

How other conferencing servers map onto :class:`PerSpeakerBackend` (per-participant tracks
are native there, so no mix has to be taken apart):

- **LiveKit.** ``participants`` is ``room.remote_participants`` (``identity`` as the id,
  ``name`` as the display name); ``participant_connected``/``participant_disconnected`` become
  ``ParticipantJoined``/``ParticipantLeft`` and the room's ``disconnected`` event
  ``ConferenceEnded``. ``open_speakers`` subscribes to each participant's microphone track
  (``track_subscribed`` with ``TrackKind.KIND_AUDIO``) and reads it with
  ``rtc.AudioStream(track, sample_rate=..., num_channels=1)``: every ``AudioFrameEvent`` is
  one :class:`SpeakerFrame` of that participant, stamped with the loop time it arrived.
  ``open_audio`` mixes the same frames with ``mix_pcm16`` for the provider and publishes the
  bot's speech as one ``rtc.LocalAudioTrack`` fed by an ``rtc.AudioSource``.
- **Daily.** ``participants`` is ``call_client.participants()`` minus ``local`` (the session
  id as the id, ``user_name`` as the display name), ``on_participant_joined``/``_left``
  report the roster and ``on_call_state_updated`` (``left``) the end. ``open_speakers`` sets
  an audio renderer per participant (``call_client.set_audio_renderer(participant_id,
  callback, audio_source="microphone")``), whose callback hands each participant's own PCM
  frames over as :class:`SpeakerFrame` values; the bot speaks through a virtual microphone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from providers.base import PCM16

__all__ = [
    "ConferenceAudio",
    "ConferenceBackend",
    "ConferenceEnded",
    "ConferenceEvent",
    "ConferenceListener",
    "MixedFrame",
    "Participant",
    "PerSpeakerBackend",
    "SpeakerAudio",
    "SpeakerFrame",
    "ParticipantJoined",
    "ParticipantLeft",
    "SpeakerTranscription",
]


@dataclass(frozen=True, slots=True)
class Participant:
    """Someone in the call: a stable id and the name people use for them."""

    participant_id: str
    display_name: str

    def __post_init__(self) -> None:
        if not self.participant_id:
            raise ValueError("participant_id must not be empty")

    def __str__(self) -> str:
        if self.display_name == self.participant_id:
            return self.participant_id
        return f"{self.display_name} ({self.participant_id})"


@dataclass(frozen=True, slots=True)
class ParticipantJoined:
    """A participant joined the call."""

    participant: Participant
    type: Literal["participant_joined"] = "participant_joined"


@dataclass(frozen=True, slots=True)
class ParticipantLeft:
    """A participant left the call (or was dropped); ``reason`` says how."""

    participant: Participant
    reason: str = "left the conference"
    type: Literal["participant_left"] = "participant_left"


@dataclass(frozen=True, slots=True)
class SpeakerTranscription:
    """What one participant said, as the backend transcribed and attributed it."""

    participant_id: str
    text: str
    final: bool = True
    type: Literal["speaker_transcription"] = "speaker_transcription"


@dataclass(frozen=True, slots=True)
class ConferenceEnded:
    """The call itself ended under the bot (the room was destroyed, the conferencing server
    went away); ``reason`` says how. The channel unplugs its provider and settles every open
    request with that reason."""

    reason: str
    type: Literal["conference_ended"] = "conference_ended"


ConferenceEvent = ParticipantJoined | ParticipantLeft | SpeakerTranscription | ConferenceEnded
"""Everything a backend reports to its listeners."""

ConferenceListener = Callable[[ConferenceEvent], None]
"""Called for each event, synchronously (must not block). A listener that raises is logged
with its traceback and the other listeners still run."""


@dataclass(frozen=True, slots=True)
class MixedFrame:
    """One frame of the participants' mixed audio, and who was speaking in it.

    ``speakers`` is empty when nobody spoke or the backend cannot attribute its audio.
    """

    samples: PCM16 = field(repr=False)
    speakers: frozenset[str] = frozenset()


@runtime_checkable
class ConferenceAudio(Protocol):
    """One audio lane between the call and a provider session: mixed audio in, bot audio out."""

    def mixed(self) -> AsyncIterator[MixedFrame]:
        """The participants' mixed audio; ends when the lane closes."""
        ...

    async def play(self, frame: PCM16) -> None:
        """Play bot audio to every participant.

        Cancellation: safe; the frame is played whole or not at all.
        """

    async def stop_playback(self) -> None:
        """Drop bot audio not yet played (a participant barged in).

        Cancellation: safe.
        """

    async def aclose(self) -> None:
        """Close the lane; :meth:`mixed` ends, later plays are dropped. Idempotent.

        Cancellation: safe.
        """


@runtime_checkable
class ConferenceBackend(Protocol):
    """A multi-party call as a :class:`~conference.ConferenceChannel` uses it."""

    @property
    def participants(self) -> Mapping[str, Participant]:
        """The participants in the call now, by id."""
        ...

    def add_listener(self, listener: ConferenceListener) -> Callable[[], None]:
        """Receive roster changes and attributed transcriptions; returns a remover."""
        ...

    def open_audio(self) -> ConferenceAudio:
        """Open a lane: the mixed audio from now on, and the bot track out."""
        ...


@dataclass(frozen=True, slots=True)
class SpeakerFrame:
    """One frame of one participant's own audio.

    Attributes:
        participant_id: Whose audio it is (the stream it came on, never a guess).
        samples: Mono PCM16 at the lane's ``sample_rate``.
        at: When the frame's first sample was heard, in seconds on the backend's media clock
            (one clock for every participant, so spans of speech compare).
        attribution: How sure the backend is that the audio is this participant's alone:
            1.0 for their own stream; lower for audio cut from the room mix by who was
            talking when (see ``_mix_cut``). An utterance is attributed the lowest value of
            its frames (``Heard.attribution``).
    """

    participant_id: str
    samples: PCM16 = field(repr=False)
    at: float = 0.0
    attribution: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.attribution <= 1.0:
            raise ValueError(f"attribution must be in 0..1, got {self.attribution}")


@runtime_checkable
class SpeakerAudio(Protocol):
    """Each participant's own audio in, one :class:`SpeakerFrame` at a time."""

    sample_rate: int
    """The rate of every frame's samples."""

    def frames(self) -> AsyncIterator[SpeakerFrame]:
        """Every participant's frames as they arrive (interleaved); ends when the lane
        closes or the call ends."""
        ...

    def keypad(self, participant_id: str) -> bool:
        """True when the participant's line can carry keypad tones in band (a phone or SIP
        leg); the bot offers the keypad only to a room where every addressed line does."""
        ...

    async def aclose(self) -> None:
        """Close the lane; :meth:`frames` ends. Idempotent.

        Cancellation: safe.
        """


@runtime_checkable
class PerSpeakerBackend(ConferenceBackend, Protocol):
    """A backend that also gives each participant's own audio (see the module docstring
    for how LiveKit and Daily rooms map onto it)."""

    def open_speakers(self, sample_rate: int) -> SpeakerAudio:
        """Open a lane of every participant's own audio at ``sample_rate``, from now on."""
        ...
