"""Script steps for the Realtime test server: a test's conversation written as data.

``await play(connection, [FunctionCall("AskUserQuestion", {...}), ExpectOutput(), Speak("..."),
Drop()])`` plays the steps in order on one :class:`ServerConnection` and returns what each
step produced (a call id, an output text, or ``None``). ``FunctionCall``, ``Speak``,
``UserSays`` and ``Drop`` are the shared steps of :mod:`providers.realtime_ws`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from providers import realtime_ws
from providers.realtime_ws import Drop, FunctionCall, ScriptState, Speak, UserSays

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
class ExpectOutput:
    """Wait for the ``function_call_output`` of ``call_id`` (default: the last call emitted);
    the step yields the output text."""

    call_id: str | None = None

    async def run(self, connection: ServerConnection, state: ScriptState, /) -> str:
        call_id = state.call_id(self.call_id, "ExpectOutput")
        return await connection.expect_function_call_output(call_id)


@dataclass(frozen=True, slots=True)
class Keypad:
    """The caller on a SIP call presses ``keys`` (``input_audio_buffer.dtmf_event_received``)."""

    keys: str

    async def run(self, connection: ServerConnection, state: ScriptState, /) -> None:
        await connection.dtmf(self.keys)


@dataclass(frozen=True, slots=True)
class SendError:
    """The server sends an ``error`` event."""

    message: str
    code: str | None = None

    async def run(self, connection: ServerConnection, state: ScriptState, /) -> None:
        await connection.error(self.message, code=self.code)


@dataclass(frozen=True, slots=True)
class SendRaw:
    """The server sends a text frame as is."""

    text: str

    async def run(self, connection: ServerConnection, state: ScriptState, /) -> None:
        await connection.send_raw(self.text)


ScriptStep = FunctionCall | ExpectOutput | Speak | UserSays | Keypad | Drop | SendError | SendRaw
"""One step of a test server script."""


async def play(connection: ServerConnection, script: Sequence[ScriptStep]) -> list[Any]:
    """Play ``script`` on ``connection``; returns each step's result, in order.

    Raises:
        ValueError: An ``ExpectOutput`` without a call id comes before any ``FunctionCall``.

    Cancellation: stops between (or inside) steps; what was sent stays sent.
    """
    return await realtime_ws.play(connection, script)
