"""Events a realtime provider session emits to the channel that drives it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..speech._audio_quality import AudioQuality
    from ..speech._near_miss import Competition
    from ..speech.asr._protocol import Hypothesis

from .._exceptions import ProviderError
from ..text._ai_types import ServedCall

__all__ = [
    "AudioOutEvent",
    "KeypadEvent",
    "PCM16",
    "ProviderErrorEvent",
    "ProviderEvent",
    "SpeechStartedEvent",
    "SpeechStoppedEvent",
    "ToolCallCancelledEvent",
    "ToolCallEvent",
    "TranscriptionEvent",
    "transcription_of",
]

PCM16 = npt.NDArray[np.int16]
"""Mono PCM16 audio, one sample per element."""


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The model called a tool; ``arguments`` is the JSON text the model wrote.

    ``served`` is set when the provider ran the call itself (e.g. a remote MCP tool): the
    channel reports it to ``ON_TOOL_CALL`` and never runs it or answers it.
    """

    call_id: str
    name: str
    arguments: str
    served: ServedCall | None = None
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolCallCancelledEvent:
    """The model dropped a call (e.g. the caller barged in); its request is withdrawn."""

    call_id: str
    reason: str = "the provider cancelled the call"
    type: Literal["tool_call_cancelled"] = "tool_call_cancelled"


@dataclass(frozen=True, slots=True)
class TranscriptionEvent:
    """Text of what the caller (``user``) or the model (``assistant``) said.

    ``speaker_id`` names the participant when the provider or backend can attribute speech.
    A local recogniser also says how it read the words: ``interpretation`` (the answer phrase
    to understand, when it differs from ``text``), ``verbatim`` (False when ``text`` is a
    grammar's phrase rather than the words as heard), ``confidence`` (calibrated, when
    known), ``quality`` (the utterance's audio figures, an ``AudioQuality``) and
    ``competition`` (a challenge answer scored against its near-misses, a ``Competition``).
    """

    role: Literal["user", "assistant"]
    text: str
    final: bool = True
    speaker_id: str | None = None
    interpretation: str | None = None
    verbatim: bool = True
    confidence: float | None = None
    quality: AudioQuality | None = None
    competition: Competition | None = None
    type: Literal["transcription"] = "transcription"


@dataclass(frozen=True, slots=True)
class AudioOutEvent:
    """Audio the model speaks, PCM16 at the session's output rate."""

    frame: PCM16 = field(repr=False)
    type: Literal["audio_out"] = "audio_out"


@dataclass(frozen=True, slots=True)
class SpeechStartedEvent:
    """The provider detected the caller starting to speak."""

    type: Literal["speech_started"] = "speech_started"


@dataclass(frozen=True, slots=True)
class SpeechStoppedEvent:
    """The provider detected the caller stopping speaking."""

    type: Literal["speech_stopped"] = "speech_stopped"


@dataclass(frozen=True, slots=True)
class KeypadEvent:
    """The caller pressed a key (``0``-``9``, ``*``, ``#``, ``A``-``D``) and the provider
    reported it out of band (a SIP call's DTMF), not as tones in the audio."""

    key: str
    type: Literal["keypad"] = "keypad"


@dataclass(frozen=True, slots=True)
class ProviderErrorEvent:
    """The provider reported an error; ``error.recoverable`` says if the session goes on."""

    error: ProviderError
    type: Literal["error"] = "error"


ProviderEvent = (
    ToolCallEvent
    | ToolCallCancelledEvent
    | TranscriptionEvent
    | AudioOutEvent
    | SpeechStartedEvent
    | SpeechStoppedEvent
    | KeypadEvent
    | ProviderErrorEvent
)


def transcription_of(hypotheses: list[Hypothesis]) -> TranscriptionEvent:
    """The user transcription for a recogniser's result: the words as heard (or the
    grammar's phrase, marked not verbatim), with how they were read."""
    if not hypotheses:
        return TranscriptionEvent("user", "", final=True)
    best = hypotheses[0]
    verbatim = best.transcript is not None
    text = best.transcript if best.transcript is not None else best.text
    return TranscriptionEvent(
        "user",
        text,
        final=True,
        interpretation=best.text if best.text != text else None,
        verbatim=verbatim,
        confidence=best.confidence,
        quality=best.quality,
        competition=best.competition,
    )
