"""Script steps for the Live test server: a test's conversation written as data.

``await play(connection, [FunctionCall("AskUserQuestion", {...}), ExpectResponse(),
Speak("..."), GoAway()])`` plays the steps in order on one :class:`LiveServerConnection` and
returns what each step produced (a call id, a :class:`ToolResponse`, or ``None``). ``FunctionCall``,
``Speak``, ``UserSays`` and ``Drop`` are the shared steps of :mod:`providers.realtime_ws`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from providers import realtime_ws
from providers.realtime_ws import Drop, FunctionCall, ScriptState, Speak, UserSays

from ._testing import LiveServerConnection, ToolResponse

__all__ = [
    "Cancel",
    "Close",
    "Drop",
    "ExpectResponse",
    "FunctionCall",
    "GoAway",
    "Interrupt",
    "ScriptStep",
    "SendRaw",
    "Speak",
    "UserSays",
    "play",
]


@dataclass(frozen=True, slots=True)
class ExpectResponse:
    """Wait for the ``toolResponse`` of ``call_id`` (default: the last call); the step yields
    the :class:`ToolResponse`."""

    call_id: str | None = None

    async def run(self, connection: LiveServerConnection, state: ScriptState, /) -> ToolResponse:
        return await connection.expect_tool_response(state.call_id(self.call_id, "ExpectResponse"))


@dataclass(frozen=True, slots=True)
class Cancel:
    """The server withdraws ``call_id`` (default: the last call) with ``toolCallCancellation``."""

    call_id: str | None = None

    async def run(self, connection: LiveServerConnection, state: ScriptState, /) -> None:
        await connection.cancel(state.call_id(self.call_id, "Cancel"))


@dataclass(frozen=True, slots=True)
class Interrupt:
    """The caller speaks over the model (``interrupted``)."""

    async def run(self, connection: LiveServerConnection, state: ScriptState, /) -> None:
        await connection.interrupt()


@dataclass(frozen=True, slots=True)
class GoAway:
    """The server announces the end of the connection."""

    time_left: str = "10s"

    async def run(self, connection: LiveServerConnection, state: ScriptState, /) -> None:
        await connection.go_away(self.time_left)


@dataclass(frozen=True, slots=True)
class Close:
    """The server closes the connection with ``code`` (how the Live API reports errors)."""

    code: int = 1011
    reason: str = "Internal error encountered."

    async def run(self, connection: LiveServerConnection, state: ScriptState, /) -> None:
        await connection.close(self.code, self.reason)


@dataclass(frozen=True, slots=True)
class SendRaw:
    """The server sends a frame as is."""

    data: str | bytes

    async def run(self, connection: LiveServerConnection, state: ScriptState, /) -> None:
        await connection.send_raw(self.data)


ScriptStep = (
    FunctionCall
    | ExpectResponse
    | Cancel
    | Speak
    | UserSays
    | Interrupt
    | GoAway
    | Drop
    | Close
    | SendRaw
)
"""One step of a test server script."""


async def play(connection: LiveServerConnection, script: Sequence[ScriptStep]) -> list[Any]:
    """Play ``script`` on ``connection``; returns each step's result, in order.

    Raises:
        ValueError: An ``ExpectResponse`` or ``Cancel`` without a call id comes before any
            ``FunctionCall``.

    Cancellation: stops between (or inside) steps; what was sent stays sent.
    """
    return await realtime_ws.play(connection, script)
