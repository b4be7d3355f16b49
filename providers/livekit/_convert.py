"""Pure conversions between voice-hitl values and LiveKit Agents values (no I/O, no tasks)."""

from __future__ import annotations

from typing import Any

import numpy as np
from livekit import rtc
from livekit.agents import llm
from livekit.agents.llm import function_tool

from voice_hitl import AITool
from voice_hitl.voice._provider import ProviderCapabilities
from voice_hitl.voice._provider_events import PCM16

__all__ = [
    "frame_to_pcm16",
    "pcm16_to_frame",
    "provider_capabilities",
    "raw_schema",
    "schema_only_tool",
]


def provider_capabilities(capabilities: llm.RealtimeCapabilities) -> ProviderCapabilities:
    """Map a LiveKit model's capabilities onto the flags a voice-hitl channel branches on.

    ``say()`` is built on ``generate_reply(instructions=...)``, which every realtime model has;
    it speaks only when the model produces audio. LiveKit has no event for a model dropping a
    function call, and no speaker attribution.
    """
    return ProviderCapabilities(
        can_say=capabilities.audio_output,
        speaker_attribution=False,
        tool_call_cancellation=False,
        user_transcription=capabilities.user_transcription,
    )


def raw_schema(tool: AITool) -> dict[str, Any]:
    """The ``raw_schema`` LiveKit's ``function_tool`` takes for ``tool``."""
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": dict(tool.parameters),
    }


def schema_only_tool(tool: AITool) -> llm.Tool:
    """A LiveKit tool that only declares ``tool`` to a realtime model.

    The provider bridge serves calls itself (the channel's gate answers them), so the tool's
    function is never run by LiveKit; running it anyway is a clear error.
    """

    async def served_by_voice_hitl(raw_arguments: dict[str, Any]) -> str:
        raise RuntimeError(
            f"tool {tool.name!r} is served by a voice-hitl channel, not by LiveKit; "
            "use providers.livekit.human_input_tools() for an AgentSession"
        )

    return function_tool(served_by_voice_hitl, raw_schema=raw_schema(tool))


def pcm16_to_frame(frame: PCM16, sample_rate: int) -> rtc.AudioFrame:
    """Wrap mono PCM16 samples as a LiveKit audio frame.

    Raises:
        ValueError: ``frame`` is not a one-dimensional int16 array.
    """
    if frame.dtype != np.int16 or frame.ndim != 1:
        raise ValueError(
            f"caller audio must be mono PCM16 (1-D int16), got {frame.dtype} with shape "
            f"{frame.shape}"
        )
    return rtc.AudioFrame(
        np.ascontiguousarray(frame).tobytes(),
        sample_rate=sample_rate,
        num_channels=1,
        samples_per_channel=int(frame.shape[0]),
    )


def frame_to_pcm16(frame: rtc.AudioFrame, sample_rate: int) -> PCM16:
    """Mono PCM16 at ``sample_rate`` from a LiveKit frame (channels averaged, rate converted).

    The rate conversion is linear interpolation: cheap enough for 10-20 ms frames on the event
    loop, and good enough for speech.
    """
    samples = np.frombuffer(frame.data, dtype=np.int16)
    channels = frame.num_channels
    if channels > 1:
        interleaved = samples[: frame.samples_per_channel * channels].reshape(-1, channels)
        samples = interleaved.mean(axis=1).astype(np.int16)
    else:
        samples = samples[: frame.samples_per_channel].copy()
    if frame.sample_rate == sample_rate or samples.size == 0:
        return samples
    count = max(1, round(samples.size * sample_rate / frame.sample_rate))
    positions = np.linspace(0, samples.size - 1, count)
    resampled = np.interp(positions, np.arange(samples.size), samples.astype(np.float64))
    return np.clip(np.rint(resampled), -32768, 32767).astype(np.int16)
