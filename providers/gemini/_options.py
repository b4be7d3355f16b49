"""Settings of the Gemini Live provider's sessions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["LiveOptions"]


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """What the ``setup`` message asks of the model, beyond the channel's instructions and
    tools.

    Attributes:
        voice: A prebuilt voice name (``speechConfig.voiceConfig``); ``None``: the default.
        response_modality: ``"AUDIO"`` (speech; its transcript when ``output_transcription``)
            or ``"TEXT"``.
        input_transcription: Ask the server to transcribe the caller.
        output_transcription: Ask the server to transcribe the model's speech (the recovered
            door reads it).
        session_resumption: Ask for resumption handles and resume with the latest one after
            a ``goAway`` or a dropped connection.
        realtime_input_config: ``realtimeInputConfig`` as is (voice activity detection
            settings); ``None``: the server's defaults (automatic detection, barge-in on).
        context_role: The role of the turns ``inject_context`` adds.
    """

    voice: str | None = None
    response_modality: Literal["AUDIO", "TEXT"] = "AUDIO"
    input_transcription: bool = True
    output_transcription: bool = True
    session_resumption: bool = True
    realtime_input_config: dict[str, Any] | None = None
    context_role: Literal["user", "model"] = "user"
