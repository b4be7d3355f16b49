"""Wire replay: a recorded call's provider side, played back by the loopback test servers.

The project's OpenAI Realtime and Gemini Live test servers accept the agent's connection and
check each client frame against the provider SDK's own types, as they always do; instead of
their scripted model they play the recording (a cassette, as VCR does for HTTP): each
recorded server frame is sent verbatim, in order, and each recorded client frame is awaited
from the agent and compared. The first client frame that differs, is missing, or is not in
the recording ends the playback as a :class:`Divergence` with the frames around it.

Compared as parsed JSON, without caller audio appends (the wire replay has no caller audio)
and the fields the project writes and knows to vary, by their place in the frame (see
:mod:`._volatile`): the protocol's event ids and, unless ``strict``, the recogniser's figures
of a spoken answer and an approval's time. The user's tool results and the session's
configuration are compared whole.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._volatile import WireNormaliser
from ._writer import _is_audio_append

if TYPE_CHECKING:  # websockets comes with the openai and gemini extras, not the core
    from websockets.asyncio.server import ServerConnection as _WsConnection

__all__ = ["Cassette", "Divergence", "WireLine", "normalised"]

@dataclass(frozen=True, slots=True)
class WireLine:
    """One recorded frame: its line in ``wire.jsonl``, direction, connection and text."""

    number: int
    t: float
    dir: str
    conn: int
    frame: str
    binary: bool = False

    def summary(self) -> str:
        """``out session.update`` or ``in toolCall`` (the frame's type or first key)."""
        return f"{self.dir:>3} {_kind(self.frame)}"


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the agent's client frames first differ from the recording."""

    line: int
    """The line of ``wire.jsonl`` (1-based) the agent should have matched (0: none)."""
    what: str
    """One sentence: which frame differs and how."""
    expected: Any = None
    actual: Any = None
    context: list[str] = field(default_factory=list)
    """The recorded frames just before, ``in``/``out`` and type."""

    def report(self) -> str:
        """The divergence as a failing test prints it."""
        lines = [f"first divergence (wire.jsonl line {self.line}): {self.what}"]
        if self.context:
            lines.append("  recorded just before:")
            lines.extend(f"    {item}" for item in self.context)
        if self.expected is not None:
            lines.append(f"  recorded: {json.dumps(self.expected, sort_keys=True)[:600]}")
        if self.actual is not None:
            lines.append(f"  replayed: {json.dumps(self.actual, sort_keys=True)[:600]}")
        return "\n".join(lines)


def _kind(text: str) -> str:
    try:
        frame = json.loads(text)
    except ValueError:
        return "(not JSON)"
    if isinstance(frame, dict):
        kind = frame.get("type")
        if isinstance(kind, str):
            return kind
        return next(iter(frame), "{}")
    return type(frame).__name__


def normalised(text: str | bytes, normaliser: WireNormaliser) -> Any:
    """A client frame as compared (``None`` for a caller audio append)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        frame = json.loads(text)
    except ValueError:
        return {"(not JSON)": text}
    if _is_audio_append(frame):
        return None
    return normaliser(frame)


class Cassette:
    """Plays one recording's frames on the connections the agent opens."""

    def __init__(
        self, lines: list[WireLine], normaliser: WireNormaliser, *, patience: float
    ) -> None:
        self.lines = lines
        self.normaliser = normaliser
        self.patience = patience
        self.connections = max((line.conn for line in lines), default=1)
        self.divergence: Divergence | None = None
        self.invalid: list[str] = []
        self.done = asyncio.Event()
        self.cues: list[tuple[float, Callable[[], None]]] = []
        """``(t, act)``: do ``act`` when the playback reaches the recording's time ``t``
        (a person's answer that did not come over the wire)."""
        self._served = 0
        self._sorted = -1

    def _context(self, index: int) -> list[str]:
        before = self.lines[max(0, index - 4) : index]
        return [f"line {line.number}: {line.summary()}" for line in before]

    def _fire(self, until: float) -> None:
        if len(self.cues) != self._sorted:  # cues are added before the playback starts
            self.cues.sort(key=lambda cue: cue[0])
        while self.cues and self.cues[0][0] <= until:
            self.cues.pop(0)[1]()
        self._sorted = len(self.cues)

    def _diverge(self, divergence: Divergence) -> None:
        if self.divergence is None:
            self.divergence = divergence
        self.done.set()

    async def serve(self, ws: _WsConnection, validate: Callable[[Any], object]) -> None:
        """Play the next connection's frames on ``ws`` (the test server's handler).

        Cancellation: safe; the connection's reader is cancelled and awaited.
        """
        from websockets.exceptions import ConnectionClosed

        self._served += 1
        conn = self._served
        mine = [(i, line) for i, line in enumerate(self.lines) if line.conn == conn]
        arrived: asyncio.Queue[Any] = asyncio.Queue()

        async def read() -> None:
            try:
                async for message in ws:
                    try:
                        validate(json.loads(message))
                    except ValueError as exc:
                        self.invalid.append(f"{str(message)[:200]}: {exc}")
                    frame = normalised(message, self.normaliser)
                    if frame is not None:
                        arrived.put_nowait(frame)
            except ConnectionClosed:
                pass

        reader = asyncio.create_task(read(), name=f"cassette-reader-{conn}")
        try:
            if not mine:
                self._diverge(Divergence(0, f"the agent opened connection {conn}, not recorded"))
                return
            await self._play(ws, mine, arrived)
            if conn < self.connections and self.divergence is None:
                await ws.close(1011, "recorded connection loss")  # the recorded reconnect
                return
            if conn >= self.connections:
                self._fire(float("inf"))
                self.done.set()
            await ws.wait_closed()
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            self._leftover(arrived, conn)

    def _leftover(self, arrived: asyncio.Queue[Any], conn: int) -> None:
        if not arrived.empty() and self.divergence is None:
            extra = arrived.get_nowait()
            self._diverge(
                Divergence(
                    0,
                    f"the agent sent a frame the recording does not have on connection {conn}",
                    actual=extra,
                    context=self._context(len(self.lines)),
                )
            )

    async def _play(
        self, ws: _WsConnection, mine: list[tuple[int, WireLine]], arrived: asyncio.Queue[Any]
    ) -> None:
        for index, line in mine:
            if self.divergence is not None:
                return
            self._fire(line.t)
            if line.dir == "in":
                await ws.send(line.frame.encode() if line.binary else line.frame)
                continue
            expected = normalised(line.frame, self.normaliser)
            if expected is None:
                continue
            try:
                async with asyncio.timeout(self.patience):
                    actual = await arrived.get()
            except TimeoutError:
                self._diverge(
                    Divergence(
                        line.number,
                        f"the agent did not send {_kind(line.frame)} within {self.patience:g} s",
                        expected=expected,
                        context=self._context(index),
                    )
                )
                return
            if actual != expected:
                self._diverge(
                    Divergence(
                        line.number,
                        f"the agent sent {_describe(actual)} where the recording has "
                        f"{_kind(line.frame)}",
                        expected=expected,
                        actual=actual,
                        context=self._context(index),
                    )
                )
                return


def _describe(frame: Any) -> str:
    if isinstance(frame, dict):
        kind = frame.get("type")
        return f"a different {kind}" if isinstance(kind, str) else next(iter(frame), "{}")
    return "a frame"
