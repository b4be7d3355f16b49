"""Script steps for the Live test server: a test's conversation written as data.

``await play(connection, [FunctionCall("AskUserQuestion", {...}), ExpectResponse(),
Speak("..."), GoAway()])`` plays the steps in order on one :class:`LiveServerConnection` and
returns what each step produced (a call id, a :class:`ToolResponse`, or ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._testing import LiveServerConnection

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
class FunctionCall:
    """The model calls ``name``; the step yields the call id."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ExpectResponse:
    """Wait for the ``toolResponse`` of ``call_id`` (default: the last call); the step yields
    the :class:`ToolResponse`."""

    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    """The server withdraws ``call_id`` (default: the last call) with ``toolCallCancellation``."""

    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Speak:
    """The model speaks ``text`` (audio, transcript, turn complete)."""

    text: str


@dataclass(frozen=True, slots=True)
class UserSays:
    """The caller's speech is transcribed as ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class Interrupt:
    """The caller speaks over the model (``interrupted``)."""


@dataclass(frozen=True, slots=True)
class GoAway:
    """The server announces the end of the connection."""

    time_left: str = "10s"


@dataclass(frozen=True, slots=True)
class Drop:
    """The connection drops without a closing handshake."""


@dataclass(frozen=True, slots=True)
class Close:
    """The server closes the connection with ``code`` (how the Live API reports errors)."""

    code: int = 1011
    reason: str = "Internal error encountered."


@dataclass(frozen=True, slots=True)
class SendRaw:
    """The server sends a frame as is."""

    data: str | bytes


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


def _last(step_id: str | None, last: str | None, what: str) -> str:
    call_id = step_id or last
    if call_id is None:
        raise ValueError(f"{what} needs a call id or an earlier FunctionCall")
    return call_id


async def play(connection: LiveServerConnection, script: Sequence[ScriptStep]) -> list[Any]:
    """Play ``script`` on ``connection``; returns each step's result, in order.

    Raises:
        ValueError: An ``ExpectResponse`` or ``Cancel`` without a call id comes before any
            ``FunctionCall``.

    Cancellation: stops between (or inside) steps; what was sent stays sent.
    """
    results: list[Any] = []
    last: str | None = None
    for step in script:
        result: Any = None
        if isinstance(step, FunctionCall):
            result = last = await connection.function_call(
                step.name, step.arguments, call_id=step.call_id
            )
        elif isinstance(step, ExpectResponse):
            result = await connection.expect_tool_response(
                _last(step.call_id, last, "ExpectResponse")
            )
        elif isinstance(step, Cancel):
            await connection.cancel(_last(step.call_id, last, "Cancel"))
        elif isinstance(step, Speak):
            await connection.speak(step.text)
        elif isinstance(step, UserSays):
            await connection.transcribe_user(step.text)
        elif isinstance(step, Interrupt):
            await connection.interrupt()
        elif isinstance(step, GoAway):
            await connection.go_away(step.time_left)
        elif isinstance(step, Drop):
            await connection.drop()
        elif isinstance(step, Close):
            await connection.close(step.code, step.reason)
        else:
            await connection.send_raw(step.data)
        results.append(result)
    return results
