"""LiveKit Agents bridges (extra ``livekit``: ``pip install 'voice-hitl[livekit]'``).

Two ways to put voice-hitl and LiveKit Agents together:

* :class:`LiveKitRealtimeProvider` wraps any ``livekit.agents.llm.RealtimeModel`` (the OpenAI,
  Google, xAI, ... plugins) as a voice-hitl provider, so a ``RealtimeVoiceChannel`` drives it.
* :func:`human_input_tools` gives the human-input tools as LiveKit ``function_tool`` objects for
  an ``Agent`` / ``AgentSession``; they are withdrawn when the session closes or the agent is
  interrupted, so ``AgentSession.aclose()`` never waits for a person.
"""

from __future__ import annotations

from voice_hitl._public import publish

from ._convert import frame_to_pcm16, pcm16_to_frame, provider_capabilities
from ._provider import SAY_INSTRUCTIONS, LiveKitProviderSession, LiveKitRealtimeProvider
from ._tools import (
    SESSION_CLOSED,
    SPEECH_INTERRUPTED,
    human_input_tools,
    linked_identity,
    room_name,
)

__all__ = [
    "SAY_INSTRUCTIONS",
    "SESSION_CLOSED",
    "SPEECH_INTERRUPTED",
    "LiveKitProviderSession",
    "LiveKitRealtimeProvider",
    "frame_to_pcm16",
    "human_input_tools",
    "linked_identity",
    "pcm16_to_frame",
    "provider_capabilities",
    "room_name",
]


publish(__name__, globals(), __all__)
