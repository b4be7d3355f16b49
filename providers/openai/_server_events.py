"""Server events of the OpenAI Realtime API (GA names), as tolerant pydantic models.

Only the events the provider acts on are modelled; each model allows extra fields so that new
server fields never break parsing. :func:`parse_server_event` tells an event the provider does
not know (``None``, to be ignored) from one it knows but whose shape is wrong (``ValueError``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = [
    "DtmfReceived",
    "ErrorDetail",
    "ErrorEvent",
    "FunctionCallArgumentsDone",
    "InputTranscriptionCompleted",
    "InputTranscriptionDelta",
    "InputTranscriptionFailed",
    "KNOWN_IGNORED",
    "OutputAudioDelta",
    "OutputAudioTranscriptDelta",
    "OutputAudioTranscriptDone",
    "OutputItem",
    "OutputItemDone",
    "OutputTextDelta",
    "OutputTextDone",
    "ResponseCreated",
    "ResponseDone",
    "ResponseInfo",
    "ServerEvent",
    "SessionCreated",
    "SessionUpdated",
    "SpeechStarted",
    "SpeechStopped",
    "parse_server_event",
]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class _Event(_Wire):
    event_id: str | None = None


class ErrorDetail(_Wire):
    """The ``error`` object of an ``error`` event."""

    type: str = "error"
    message: str = ""
    code: str | None = None
    param: str | None = None
    event_id: str | None = None
    """The client ``event_id`` that caused the error, when it had one."""


class ErrorEvent(_Event):
    type: Literal["error"]
    error: ErrorDetail


class SessionCreated(_Event):
    type: Literal["session.created"]
    session: dict[str, Any] = Field(default_factory=dict)


class SessionUpdated(_Event):
    type: Literal["session.updated"]
    session: dict[str, Any] = Field(default_factory=dict)


class SpeechStarted(_Event):
    type: Literal["input_audio_buffer.speech_started"]
    item_id: str | None = None


class SpeechStopped(_Event):
    type: Literal["input_audio_buffer.speech_stopped"]
    item_id: str | None = None


class DtmfReceived(_Event):
    """A keypad press on a SIP call (``event`` is the key)."""

    type: Literal["input_audio_buffer.dtmf_event_received"]
    event: str
    received_at: int | None = None


class InputTranscriptionDelta(_Event):
    type: Literal["conversation.item.input_audio_transcription.delta"]
    item_id: str
    delta: str | None = None


class InputTranscriptionCompleted(_Event):
    type: Literal["conversation.item.input_audio_transcription.completed"]
    item_id: str
    transcript: str


class InputTranscriptionFailed(_Event):
    type: Literal["conversation.item.input_audio_transcription.failed"]
    item_id: str | None = None
    error: ErrorDetail = Field(default_factory=ErrorDetail)


class ResponseInfo(_Wire):
    """The ``response`` object of ``response.created`` / ``response.done`` (every field
    optional, as in the SDK)."""

    id: str | None = None
    status: str | None = None
    status_details: dict[str, Any] | None = None
    output: list[dict[str, Any]] | None = None
    metadata: dict[str, str] | None = None


class ResponseCreated(_Event):
    type: Literal["response.created"]
    response: ResponseInfo


class ResponseDone(_Event):
    type: Literal["response.done"]
    response: ResponseInfo


class OutputItem(_Wire):
    """An item of a response's output (function calls, and MCP calls the server ran)."""

    type: str
    id: str | None = None
    status: str | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | None = None
    error: dict[str, Any] | None = None


class OutputItemDone(_Event):
    type: Literal["response.output_item.done"]
    response_id: str | None = None
    item: OutputItem


class FunctionCallArgumentsDone(_Event):
    type: Literal["response.function_call_arguments.done"]
    response_id: str | None = None
    item_id: str | None = None
    call_id: str
    name: str
    arguments: str


class OutputAudioDelta(_Event):
    type: Literal["response.output_audio.delta"]
    response_id: str | None = None
    item_id: str | None = None
    delta: str


class OutputAudioTranscriptDelta(_Event):
    type: Literal["response.output_audio_transcript.delta"]
    item_id: str
    delta: str


class OutputAudioTranscriptDone(_Event):
    type: Literal["response.output_audio_transcript.done"]
    item_id: str | None = None
    transcript: str


class OutputTextDelta(_Event):
    type: Literal["response.output_text.delta"]
    item_id: str
    delta: str


class OutputTextDone(_Event):
    type: Literal["response.output_text.done"]
    item_id: str | None = None
    text: str


ServerEvent = Annotated[
    ErrorEvent
    | SessionCreated
    | SessionUpdated
    | SpeechStarted
    | SpeechStopped
    | DtmfReceived
    | InputTranscriptionDelta
    | InputTranscriptionCompleted
    | InputTranscriptionFailed
    | ResponseCreated
    | ResponseDone
    | OutputItemDone
    | FunctionCallArgumentsDone
    | OutputAudioDelta
    | OutputAudioTranscriptDelta
    | OutputAudioTranscriptDone
    | OutputTextDelta
    | OutputTextDone,
    Field(discriminator="type"),
]
"""The server events the provider acts on, discriminated on ``type``."""

_ADAPTER: TypeAdapter[ServerEvent] = TypeAdapter(ServerEvent)
_MODELLED = frozenset(
    get_args(model.model_fields["type"].annotation)[0]
    for model in get_args(get_args(ServerEvent)[0])
)
KNOWN_IGNORED = frozenset(
    {
        "conversation.item.added",
        "conversation.item.created",
        "conversation.item.done",
        "conversation.item.deleted",
        "conversation.item.retrieved",
        "conversation.item.truncated",
        "input_audio_buffer.committed",
        "input_audio_buffer.cleared",
        "input_audio_buffer.timeout_triggered",
        "rate_limits.updated",
        "response.output_item.added",
        "response.content_part.added",
        "response.content_part.done",
        "response.function_call_arguments.delta",
        "response.output_audio.done",
        "output_audio_buffer.started",
        "output_audio_buffer.stopped",
        "output_audio_buffer.cleared",
    }
)
"""GA events the provider receives and deliberately does nothing with (logged at debug)."""


def parse_server_event(data: dict[str, Any]) -> ServerEvent | None:
    """Validate one decoded server message.

    Returns:
        The event, or ``None`` when its ``type`` is one the provider does not act on.

    Raises:
        ValueError: The message has no string ``type``, or a known type with a wrong shape.
    """
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError("server message has no string 'type' field")
    if kind not in _MODELLED:
        return None
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ValueError(f"server event {kind!r} has an unexpected shape ({problems})") from None
