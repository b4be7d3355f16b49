"""Client events of the OpenAI Realtime API (GA), as strict pydantic models.

The test server validates what a client sends against these models, the way the real server
answers an unknown or malformed parameter with an ``invalid_request_error``; the protocol tests
check every frame the provider writes against them too. Unknown fields are rejected.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

__all__ = ["ClientEvent", "ClientEventError", "validate_client_event"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ClientEvent(_Strict):
    event_id: str | None = Field(default=None, max_length=512)


class AudioFormatParam(_Strict):
    type: Literal["audio/pcm", "audio/pcmu", "audio/pcma"]
    rate: Literal[24000] | None = None


class TranscriptionParam(_Strict):
    model: str | None = None
    language: str | None = None
    prompt: str | None = None


class AudioInputParam(_Strict):
    format: AudioFormatParam | None = None
    transcription: TranscriptionParam | None = None
    turn_detection: dict[str, Any] | None = None
    noise_reduction: dict[str, Any] | None = None


class AudioOutputParam(_Strict):
    format: AudioFormatParam | None = None
    voice: str | None = None
    speed: float | None = Field(default=None, ge=0.25, le=1.5)


class AudioParam(_Strict):
    input: AudioInputParam | None = None
    output: AudioOutputParam | None = None


class FunctionToolParam(_Strict):
    type: Literal["function"]
    name: str = Field(min_length=1, max_length=64)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class SessionParam(_Strict):
    type: Literal["realtime"]
    model: str | None = None
    instructions: str | None = None
    output_modalities: list[Literal["audio", "text"]] | None = Field(default=None, max_length=1)
    audio: AudioParam | None = None
    tools: list[FunctionToolParam] | None = None
    tool_choice: Literal["auto", "none", "required"] | dict[str, Any] | None = None
    max_output_tokens: int | Literal["inf"] | None = None
    truncation: Any = None
    tracing: Any = None
    include: list[str] | None = None
    prompt: Any = None


class SessionUpdate(_ClientEvent):
    type: Literal["session.update"]
    session: SessionParam


class InputAudioBufferAppend(_ClientEvent):
    type: Literal["input_audio_buffer.append"]
    audio: str

    @field_validator("audio")
    @classmethod
    def _pcm16_base64(cls, value: str) -> str:
        try:
            raw = base64.b64decode(value, validate=True)
        except binascii.Error:
            raise ValueError("audio is not valid base64") from None
        if len(raw) % 2:
            raise ValueError("audio is not whole PCM16 samples (odd byte count)")
        return value


class InputAudioBufferCommit(_ClientEvent):
    type: Literal["input_audio_buffer.commit"]


class InputAudioBufferClear(_ClientEvent):
    type: Literal["input_audio_buffer.clear"]


class FunctionCallOutputItem(_Strict):
    type: Literal["function_call_output"]
    call_id: str = Field(min_length=1, max_length=32)
    output: str
    id: str | None = None
    object: Literal["realtime.item"] | None = None
    status: Literal["completed", "incomplete", "in_progress"] | None = None


class ContentPart(_Strict):
    type: Literal["input_text", "output_text", "input_audio", "text"]
    text: str | None = None
    audio: str | None = None
    transcript: str | None = None


class MessageItem(_Strict):
    type: Literal["message"]
    role: Literal["user", "system", "assistant"]
    content: list[ContentPart] = Field(min_length=1)
    id: str | None = None
    object: Literal["realtime.item"] | None = None
    status: Literal["completed", "incomplete", "in_progress"] | None = None


class ConversationItemCreate(_ClientEvent):
    type: Literal["conversation.item.create"]
    item: Annotated[FunctionCallOutputItem | MessageItem, Field(discriminator="type")]
    previous_item_id: str | None = None


class ResponseParam(_Strict):
    instructions: str | None = None
    output_modalities: list[Literal["audio", "text"]] | None = Field(default=None, max_length=1)
    audio: AudioParam | None = None
    tools: list[FunctionToolParam] | None = None
    tool_choice: Literal["auto", "none", "required"] | dict[str, Any] | None = None
    max_output_tokens: int | Literal["inf"] | None = None
    conversation: Literal["auto", "none"] | str | None = None
    input: list[dict[str, Any]] | None = None
    metadata: dict[str, str] | None = Field(default=None, max_length=16)
    prompt: Any = None


class ResponseCreate(_ClientEvent):
    type: Literal["response.create"]
    response: ResponseParam | None = None


class ResponseCancel(_ClientEvent):
    type: Literal["response.cancel"]
    response_id: str | None = None


class ConversationItemTruncate(_ClientEvent):
    type: Literal["conversation.item.truncate"]
    item_id: str
    content_index: int = Field(ge=0)
    audio_end_ms: int = Field(ge=0)


class ConversationItemDelete(_ClientEvent):
    type: Literal["conversation.item.delete"]
    item_id: str


ClientEvent = Annotated[
    SessionUpdate
    | InputAudioBufferAppend
    | InputAudioBufferCommit
    | InputAudioBufferClear
    | ConversationItemCreate
    | ResponseCreate
    | ResponseCancel
    | ConversationItemTruncate
    | ConversationItemDelete,
    Field(discriminator="type"),
]
"""Every GA client event the test server accepts."""

_ADAPTER: TypeAdapter[ClientEvent] = TypeAdapter(ClientEvent)


class ClientEventError(ValueError):
    """A client event failed validation; ``code`` and ``param`` mirror the server's error."""

    def __init__(self, message: str, *, code: str, param: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.param = param


_CODES = {"extra_forbidden": "unknown_parameter", "missing": "missing_required_parameter"}


def validate_client_event(data: Any) -> ClientEvent:
    """Validate one decoded client message.

    Raises:
        ClientEventError: The message is not a known client event of the right shape; the
            message names the first offending parameter.
    """
    if not isinstance(data, dict):
        raise ClientEventError(
            "a client event must be a JSON object", code="invalid_value", param=None
        )
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        kind = data.get("type")
        item = data.get("item")
        tags = {kind, item.get("type") if isinstance(item, dict) else None}
        loc = [str(p) for p in first["loc"] if p not in tags]
        if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
            path = ".".join([*loc, "type"])
            raise ClientEventError(
                f"Invalid value for '{path}': {first['msg']}", code="invalid_value", param=path
            ) from None
        param = ".".join(loc)
        code = _CODES.get(first["type"], "invalid_value")
        head = {"unknown_parameter": "Unknown parameter", "missing_required_parameter": "Missing"}
        raise ClientEventError(
            f"{head.get(code, 'Invalid value for')} '{param}' in {kind!r}: {first['msg']}",
            code=code,
            param=param,
        ) from None
