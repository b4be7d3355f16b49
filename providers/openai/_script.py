"""Script steps for the Realtime test server: a test's conversation written as data.

``await play(connection, [FunctionCall("AskUserQuestion", {...}), ExpectOutput(), Speak("..."),
Drop()])`` plays the steps in order on one :class:`ServerConnection` and returns what each
step produced (a call id, an output text, or ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._server_connection import ServerConnection

__all__ = [
    "Drop",
    "ExpectOutput",
    "FunctionCall",
    "Keypad",
    "ScriptStep",
    "SendError",
    "SendRaw",
    "Speak",
    "UserSays",
    "play",
]


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """The model calls ``name`` (a whole response); the step yields the call id."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ExpectOutput:
    """Wait for the ``function_call_output`` of ``call_id`` (default: the last call emitted);
    the step yields the output text."""

    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Speak:
    """The model speaks ``text`` (audio plus transcript)."""

    text: str


@dataclass(frozen=True, slots=True)
class UserSays:
    """The caller says ``text`` (a user item and its transcription)."""

    text: str


@dataclass(frozen=True, slots=True)
class Keypad:
    """The caller on a SIP call presses ``keys`` (``input_audio_buffer.dtmf_event_received``)."""

    keys: str


@dataclass(frozen=True, slots=True)
class Drop:
    """The connection drops without a closing handshake."""


@dataclass(frozen=True, slots=True)
class SendError:
    """The server sends an ``error`` event."""

    message: str
    code: str | None = None


@dataclass(frozen=True, slots=True)
class SendRaw:
    """The server sends a text frame as is."""

    text: str


ScriptStep = FunctionCall | ExpectOutput | Speak | UserSays | Keypad | Drop | SendError | SendRaw
"""One step of a test server script."""


async def play(connection: ServerConnection, script: Sequence[ScriptStep]) -> list[Any]:
    """Play ``script`` on ``connection``; returns each step's result, in order.

    Raises:
        ValueError: An ``ExpectOutput`` without a call id comes before any ``FunctionCall``.

    Cancellation: stops between (or inside) steps; what was sent stays sent.
    """
    results: list[Any] = []
    last_call: str | None = None
    for step in script:
        result: Any = None
        if isinstance(step, FunctionCall):
            result = last_call = await connection.function_call(
                step.name, step.arguments, call_id=step.call_id
            )
        elif isinstance(step, ExpectOutput):
            call_id = step.call_id or last_call
            if call_id is None:
                raise ValueError("ExpectOutput needs a call id or an earlier FunctionCall")
            result = await connection.expect_function_call_output(call_id)
        elif isinstance(step, Speak):
            await connection.speak(step.text)
        elif isinstance(step, UserSays):
            await connection.transcribe_user(step.text)
        elif isinstance(step, Keypad):
            await connection.dtmf(step.keys)
        elif isinstance(step, Drop):
            await connection.drop()
        elif isinstance(step, SendError):
            await connection.error(step.message, code=step.code)
        else:
            await connection.send_raw(step.text)
        results.append(result)
    return results
