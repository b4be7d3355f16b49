"""The client messages the Live protocol writes, as camelCase JSON objects.

``setup`` opens a server session; ``realtimeInput`` carries caller audio; ``toolResponse``
answers function calls; ``clientContent`` adds turns (silent context, a line to say, and the
results of calls made on a connection since lost).
"""

from __future__ import annotations

from typing import Any

from voice_hitl.voice._provider import SessionConfig

from ._options import LiveOptions
from ._wire import function_declaration, function_response, input_mime_type

__all__ = [
    "audio_message",
    "late_result_text",
    "pending_note_text",
    "setup_message",
    "tool_response_message",
    "turn_message",
]


def setup_message(
    config: SessionConfig, model: str, options: LiveOptions, handle: str | None
) -> dict[str, Any]:
    """The ``setup`` message (resuming the session of ``handle`` when given)."""
    generation: dict[str, Any] = {"responseModalities": [options.response_modality]}
    if options.voice is not None:
        voice = {"prebuiltVoiceConfig": {"voiceName": options.voice}}
        generation["speechConfig"] = {"voiceConfig": voice}
    setup: dict[str, Any] = {"model": model, "generationConfig": generation}
    if config.instructions:
        setup["systemInstruction"] = {"parts": [{"text": config.instructions}]}
    if config.tools:
        declarations = [function_declaration(tool) for tool in config.tools]
        setup["tools"] = [{"functionDeclarations": declarations}]
    if options.realtime_input_config is not None:
        setup["realtimeInputConfig"] = options.realtime_input_config
    if options.input_transcription:
        setup["inputAudioTranscription"] = {}
    if options.output_transcription:
        setup["outputAudioTranscription"] = {}
    if options.session_resumption:
        setup["sessionResumption"] = {"handle": handle} if handle else {}
    return {"setup": setup}


def audio_message(data: str) -> dict[str, Any]:
    """A ``realtimeInput`` with base64 PCM16 caller audio at 16 kHz."""
    return {"realtimeInput": {"audio": {"data": data, "mimeType": input_mime_type()}}}


def tool_response_message(
    call_id: str, name: str, output: str, *, is_error: bool
) -> dict[str, Any]:
    """A ``toolResponse`` answering one function call."""
    entry = function_response(call_id, name, output, is_error=is_error)
    return {"toolResponse": {"functionResponses": [entry]}}


def turn_message(text: str, *, turn_complete: bool, role: str) -> dict[str, Any]:
    """A ``clientContent`` turn; ``turn_complete=False`` adds it without asking for a reply."""
    content = {"role": role, "parts": [{"text": text}]}
    return {"clientContent": {"turns": [content], "turnComplete": turn_complete}}


def late_result_text(name: str, arguments: str, output: str, *, is_error: bool) -> str:
    """The turn that carries the result of a call made on a connection since lost."""
    label = "failed" if is_error else "completed"
    return (
        f"[Tool {name} {label}] The result of your call {name}({arguments}), made before the "
        f"connection was re-established: {output}"
    )


def pending_note_text(name: str, arguments: str) -> str:
    """The note that a call made on a connection since lost is still being served."""
    return (
        f"[Tool {name} pending] Your call {name}({arguments}), made before the connection was "
        "re-established, is still being served; its result will follow in a later message."
    )
