"""Server messages of the Gemini Live API, as tolerant pydantic models.

The server writes camelCase JSON (protobuf JSON names); each model allows extra fields so a new
server field never breaks parsing. Only the fields the provider acts on are modelled.
:func:`parse_server_message` raises ``ValueError`` for a message whose known fields have the
wrong shape.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

__all__ = [
    "KNOWN_IGNORED",
    "Blob",
    "CodeExecutionResult",
    "Content",
    "ExecutableCode",
    "FunctionCall",
    "GoAway",
    "Part",
    "ServerContent",
    "ServerMessage",
    "SessionResumptionUpdate",
    "ToolCall",
    "ToolCallCancellation",
    "Transcription",
    "VoiceActivity",
    "parse_server_message",
]


class _Wire(BaseModel):
    model_config = ConfigDict(
        extra="allow", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class Blob(_Wire):
    data: str = ""
    mime_type: str | None = None


class ExecutableCode(_Wire):
    """Code the model wrote for the server's code-execution tool (run server-side)."""

    code: str = ""
    language: str | None = None
    id: str | None = None


class CodeExecutionResult(_Wire):
    """What the server's code-execution tool returned for the code before it."""

    outcome: str | None = None
    output: str | None = None
    id: str | None = None


class Part(_Wire):
    text: str | None = None
    inline_data: Blob | None = None
    thought: bool | None = None
    executable_code: ExecutableCode | None = None
    code_execution_result: CodeExecutionResult | None = None


class Content(_Wire):
    parts: list[Part] = Field(default_factory=list)
    role: str | None = None


class Transcription(_Wire):
    text: str | None = None
    finished: bool | None = None


class ServerContent(_Wire):
    model_turn: Content | None = None
    turn_complete: bool | None = None
    generation_complete: bool | None = None
    interrupted: bool | None = None
    input_transcription: Transcription | None = None
    output_transcription: Transcription | None = None


class FunctionCall(_Wire):
    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class ToolCall(_Wire):
    function_calls: list[FunctionCall] = Field(default_factory=list)


class ToolCallCancellation(_Wire):
    ids: list[str] = Field(default_factory=list)


class GoAway(_Wire):
    time_left: str | None = None


class SessionResumptionUpdate(_Wire):
    new_handle: str | None = None
    resumable: bool | None = None


class VoiceActivity(_Wire):
    voice_activity_type: str | None = None


class ServerMessage(_Wire):
    setup_complete: dict[str, Any] | None = None
    server_content: ServerContent | None = None
    tool_call: ToolCall | None = None
    tool_call_cancellation: ToolCallCancellation | None = None
    go_away: GoAway | None = None
    session_resumption_update: SessionResumptionUpdate | None = None
    voice_activity: VoiceActivity | None = None


KNOWN_IGNORED = frozenset({"usageMetadata", "voiceActivityDetectionSignal"})
"""Server message fields the provider knows and does not act on."""


def parse_server_message(data: dict[str, Any]) -> ServerMessage:
    """Parse one server message (a JSON object).

    Raises:
        ValueError: A known field has the wrong shape (the message names the field).
    """
    try:
        return ServerMessage.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ValueError(
            f"the Live server sent an invalid message: {where}: {first['msg']}"
        ) from None
