"""The realtime provider interface a voice-hitl channel drives.

A :class:`RealtimeProvider` holds configuration and :class:`ProviderCapabilities`;
:meth:`RealtimeProvider.connect` opens a stateful :class:`ProviderSession`, which sends caller
audio, receives :data:`ProviderEvent` values, submits tool results, injects silent context,
speaks, interrupts and disconnects.
"""

from __future__ import annotations

from voice_hitl.voice._provider import (
    AudioFormat,
    ProviderCapabilities,
    ProviderSession,
    RealtimeProvider,
    SessionConfig,
)
from voice_hitl.voice._provider_events import (
    PCM16,
    AudioOutEvent,
    KeypadEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)
from voice_hitl.voice._wire_taps import WireDirection, WireFrame, WireTap, WireTaps

__all__ = [
    "PCM16",
    "AudioFormat",
    "AudioOutEvent",
    "KeypadEvent",
    "ProviderCapabilities",
    "ProviderErrorEvent",
    "ProviderEvent",
    "ProviderSession",
    "RealtimeProvider",
    "SessionConfig",
    "SpeechStartedEvent",
    "SpeechStoppedEvent",
    "ToolCallCancelledEvent",
    "ToolCallEvent",
    "TranscriptionEvent",
    "WireDirection",
    "WireFrame",
    "WireTap",
    "WireTaps",
]
