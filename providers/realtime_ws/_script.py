"""Scripted sessions: a loopback server's side of a conversation written as data.

``await play(connection, [FunctionCall(...), Expect...(), Speak("..."), Drop()])`` runs each
step on one test-server connection, in order, and returns what each step produced (a call id,
what the client answered, or ``None``). A step is any object with
``async def run(connection, state)``; :class:`ScriptState` carries the id of the last call a
step emitted, which later steps default to. The steps every realtime protocol has (the model
calls a function or speaks, the caller speaks, the connection drops) are here; each provider
adds its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = ["Drop", "FunctionCall", "ScriptState", "ScriptStep", "Speak", "UserSays", "play"]

C = TypeVar("C", contravariant=True)
D = TypeVar("D")


class ScriptState:
    """What the steps of one script share: the last call emitted."""

    def __init__(self) -> None:
        self.last_call: str | None = None

    def call_id(self, given: str | None, step: str) -> str:
        """``given``, else the last call's id.

        Raises:
            ValueError: Neither is known: ``step`` needs a call id or an earlier call.
        """
        call_id = given or self.last_call
        if call_id is None:
            raise ValueError(f"{step} needs a call id or an earlier FunctionCall")
        return call_id


class ScriptStep(Protocol[C]):
    """One step of a script, run on a connection of type ``C``."""

    async def run(self, connection: C, state: ScriptState, /) -> Any:
        """Play the step; returns its result (``None`` when it has none)."""
        ...


class _Calls(Protocol):
    async def function_call(
        self, name: str, arguments: dict[str, Any] | str, /, *, call_id: str | None = ...
    ) -> str: ...


class _Speaks(Protocol):
    async def speak(self, text: str, /) -> object: ...


class _Hears(Protocol):
    async def transcribe_user(self, text: str, /) -> object: ...


class _Drops(Protocol):
    async def drop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """The model calls ``name`` with ``arguments`` (an object, or its JSON text); the step
    yields the call id (later steps default to it)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    call_id: str | None = None

    async def run(self, connection: _Calls, state: ScriptState, /) -> str:
        call_id = await connection.function_call(self.name, self.arguments, call_id=self.call_id)
        state.last_call = call_id
        return call_id


@dataclass(frozen=True, slots=True)
class Speak:
    """The model speaks ``text`` (audio and its transcript, as the protocol sends them)."""

    text: str

    async def run(self, connection: _Speaks, state: ScriptState, /) -> None:
        await connection.speak(self.text)


@dataclass(frozen=True, slots=True)
class UserSays:
    """The caller's speech is transcribed as ``text``."""

    text: str

    async def run(self, connection: _Hears, state: ScriptState, /) -> None:
        await connection.transcribe_user(self.text)


@dataclass(frozen=True, slots=True)
class Drop:
    """The connection drops without a closing handshake."""

    async def run(self, connection: _Drops, state: ScriptState, /) -> None:
        await connection.drop()


async def play(connection: D, script: Sequence[ScriptStep[D]]) -> list[Any]:
    """Play ``script`` on ``connection``; returns each step's result, in order.

    Raises:
        ValueError: A step that defaults to the last call comes before any call.

    Cancellation: stops between (or inside) steps; what was sent stays sent.
    """
    state = ScriptState()
    return [await step.run(connection, state) for step in script]
