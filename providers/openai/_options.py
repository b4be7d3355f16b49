"""Settings of the OpenAI Realtime provider: session options (the reconnect policy is the
shared :class:`~providers.realtime_ws.ReconnectPolicy`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from providers.realtime_ws import ReconnectPolicy
from voice_hitl.voice._provider import SessionConfig

from ._audio import WIRE_RATE

__all__ = ["ReconnectPolicy", "RealtimeOptions", "default_turn_detection", "session_config"]


def default_turn_detection() -> dict[str, Any]:
    """Server voice activity detection that answers and lets the caller barge in."""
    return {
        "type": "server_vad",
        "threshold": 0.5,
        "prefix_padding_ms": 300,
        "silence_duration_ms": 500,
        "create_response": True,
        "interrupt_response": True,
    }


@dataclass(frozen=True, slots=True)
class RealtimeOptions:
    """What ``session.update`` asks of the model, beyond the channel's instructions and tools.

    Attributes:
        voice: The output voice (``audio.output.voice``).
        transcription_model: Transcribes the caller (``audio.input.transcription.model``);
            ``None`` turns input transcription off.
        turn_detection: ``audio.input.turn_detection``; ``None`` turns server VAD off (then
            the model answers only when asked).
        output_modality: ``"audio"`` (speech plus its transcript) or ``"text"``.
        tool_choice: ``"auto"``, ``"none"`` or ``"required"``.
        context_role: The role of the messages ``inject_context`` adds.
    """

    voice: str = "marin"
    transcription_model: str | None = "gpt-4o-mini-transcribe"
    turn_detection: dict[str, Any] | None = field(default_factory=default_turn_detection)
    output_modality: Literal["audio", "text"] = "audio"
    tool_choice: Literal["auto", "none", "required"] = "auto"
    context_role: Literal["system", "user"] = "system"


def session_config(config: SessionConfig, options: RealtimeOptions) -> dict[str, Any]:
    """The ``session`` object of ``session.update``: the channel's instructions and tools,
    and the options (PCM16 at 24 kHz both ways)."""
    pcm = {"type": "audio/pcm", "rate": WIRE_RATE}
    model = options.transcription_model
    transcription = {"model": model} if model is not None else None
    tools = [
        {"type": "function", "name": t.name, "description": t.description}
        | {"parameters": t.parameters}
        for t in config.tools
    ]
    audio_in = {"format": dict(pcm), "transcription": transcription}
    return {
        "type": "realtime",
        "instructions": config.instructions,
        "output_modalities": [options.output_modality],
        "audio": {
            "input": audio_in | {"turn_detection": options.turn_detection},
            "output": {"format": dict(pcm), "voice": options.voice},
        },
        "tools": tools,
        "tool_choice": options.tool_choice,
    }
