"""Conference channels: a bot in a multi-party call that asks the right people.

A :class:`ConferenceChannel` feeds the participants' mixed audio to one realtime provider
session (hot-pluggable), and with :class:`PerSpeakerHearing` hears each participant on their
own stream, and serves its tool calls through the core gate on the conference door.
Human-input requests can be addressed to participants (``ask`` / ``approvers`` + ``quorum``);
approvals settle at a quorum of distinct approvers and carry HMAC-signed receipts.
"""

from __future__ import annotations

from voice_hitl._public import publish

from ._approval import Approval, ApprovalRequest, ApprovalResult
from ._backend import (
    ConferenceAudio,
    ConferenceBackend,
    ConferenceEnded,
    ConferenceEvent,
    ConferenceListener,
    MixedFrame,
    Participant,
    ParticipantJoined,
    ParticipantLeft,
    PerSpeakerBackend,
    SpeakerAudio,
    SpeakerFrame,
    SpeakerTranscription,
)
from ._channel import CHANNEL_CLOSED, UNPLUGGED, ConferenceChannel
from ._config import ConferenceRealtimeConfig
from ._exceptions import AddressingError, ApprovalDeniedError, ApprovalTimeoutError
from ._hearing import HeardSpan, PerSpeakerHearing, SpeakerEars
from ._line import ConferenceLine
from ._memory import InMemoryAudioLane, InMemoryConferenceBackend, InMemorySpeakerLane
from ._mix_cut import MixCut
from ._mixer import mix_pcm16
from ._receipts import ApprovalReceipt, Decision, sign_receipt, verify_receipt
from ._roster import Addressing, parse_addressing, resolve_participant
from ._speaker_clock import SpeakerClock
from ._yesno import read_yes_no

__all__ = [
    "CHANNEL_CLOSED",
    "UNPLUGGED",
    "AddressingError",
    "Addressing",
    "Approval",
    "ApprovalDeniedError",
    "ApprovalReceipt",
    "ApprovalRequest",
    "ApprovalResult",
    "ApprovalTimeoutError",
    "ConferenceAudio",
    "ConferenceBackend",
    "ConferenceChannel",
    "ConferenceEnded",
    "ConferenceEvent",
    "ConferenceLine",
    "ConferenceListener",
    "ConferenceRealtimeConfig",
    "Decision",
    "HeardSpan",
    "InMemoryAudioLane",
    "InMemoryConferenceBackend",
    "InMemorySpeakerLane",
    "MixCut",
    "MixedFrame",
    "Participant",
    "ParticipantJoined",
    "ParticipantLeft",
    "PerSpeakerBackend",
    "PerSpeakerHearing",
    "SpeakerAudio",
    "SpeakerClock",
    "SpeakerEars",
    "SpeakerFrame",
    "SpeakerTranscription",
    "mix_pcm16",
    "parse_addressing",
    "read_yes_no",
    "resolve_participant",
    "sign_receipt",
    "verify_receipt",
]


publish(__name__, globals(), __all__)
