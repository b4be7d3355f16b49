"""``WebSocketSession``: one conversation over one socket at a time, reconnecting.

The session pumps a sans-I/O :class:`WireProtocol` over ``websockets``. It owns one reader
task (started by ``_open``, cancelled and awaited by ``aclose``). Its life:

1. **Establish** (:meth:`WebSocketSession._establish`): dial, tell the protocol
   ``connection_made()``, write what it queued, and read until :meth:`_ready` (a protocol
   with an opening exchange, such as Gemini's ``setup``/``setupComplete``, says when), all
   within ``reconnect.open_timeout``.
2. **Read**: each frame is fed to the protocol, its events are queued for ``events()``, and
   what the protocol queued in answer is written. A fatal in-band error (:meth:`_fatal`) ends
   the session; a planned close (:meth:`_planned_close`, e.g. Gemini's ``goAway``) closes the
   socket and reconnects at once.
3. **Lose** (:meth:`_lose`): the loss of a socket is booked once, with no await, so nothing
   slips onto a dead socket; the protocol gets ``connection_lost(reason, unsent)`` with the
   frames that were handed out but not written.
4. **Reconnect** with the provider's :class:`ReconnectPolicy`; a close that says retrying
   cannot help (:meth:`_close_error` not recoverable) ends the session instead.
5. **Close** (``aclose``): idempotent; cancels and awaits the reader, closes the socket and
   ends ``events()``, even when cancelled itself.

A subclass maps the channel's intents (``submit_tool_result``, ``inject_context``, ``say``,
``interrupt``) onto its protocol and calls :meth:`_flush`; it may override the hooks named
above. The ledger of results in flight lives in the protocol (see ``_ledger``).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import ClassVar, Generic, TypeVar

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from providers.base import (
    PCM16,
    ProviderErrorEvent,
    ProviderEvent,
    ProviderSession,
    SessionConfig,
    WireDirection,
)
from voice_hitl import ChannelClosedError, ProviderError
from voice_hitl.voice._transport import check_pcm16

from ._interface import SessionState, WireProtocol
from ._provider import WebSocketProvider

__all__ = ["WebSocketSession"]


P = TypeVar("P", bound=WireProtocol)


class _End:
    """Marks the end of a session's events."""


class WebSocketSession(ProviderSession, Generic[P]):
    """The connection lifecycle of one websocket realtime conversation.

    Args:
        provider: Dials the server; holds the reconnect policy and wire taps.
        config: The session's instructions, tools and audio formats.
        protocol: The sans-I/O mapping this session pumps.

    Attributes:
        connections: How many connections were opened (1, then 2 after a reconnect...).
        dropped_audio_frames: Caller frames dropped while no connection could take them.
    """

    label: ClassVar[str] = "realtime session"
    """How ``ChannelClosedError`` messages name the session."""
    logger: ClassVar[logging.Logger] = logging.getLogger("voice_hitl.providers.realtime_ws")

    def __init__(self, provider: WebSocketProvider, config: SessionConfig, protocol: P) -> None:
        self.provider = provider
        self.config = config
        self.protocol = protocol
        self.connections = 0
        self.dropped_audio_frames = 0
        self._server = provider.server_name
        self._state = SessionState.UNOPENED
        self._ws: ClientConnection | None = None
        self._runner: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[ProviderEvent | _End] = asyncio.Queue()
        self._ended = False
        self._outbox: collections.deque[str] = collections.deque()
        self._send_lock = asyncio.Lock()
        self._tick = asyncio.Event()  # set (and replaced) whenever the session's state moves
        self._gave_up: ProviderError | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.session_id!r}, {self._state.value})"

    # -- hooks -------------------------------------------------------------------------------

    def _ready(self) -> bool:
        """Whether the connection being established is usable (default: once written)."""
        return True

    def _fatal(self) -> ProviderError | None:
        """An in-band error after which no reconnect can help (default: none)."""
        return None

    def _planned_close(self) -> bool:
        """Whether the server announced the end of this connection (default: never)."""
        return False

    def _close_error(self, ws: ClientConnection, what: str) -> ProviderError:
        """What the close of ``ws`` means (default: a recoverable ``connection_lost``)."""
        code, why = ws.close_code, ws.close_reason
        detail = f"closed with code {code}" + (f": {why}" if why else "")
        return ProviderError(f"{what} ({detail})", code="connection_lost", recoverable=True)

    def _retry_unrecoverable(self, error: ProviderError) -> bool:
        """Whether to try again after an unrecoverable reconnect failure (default: no)."""
        return False

    # -- state -------------------------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self._state is not SessionState.OPEN:
            raise ChannelClosedError(f"{self.label} is {self._state.value} ({what})")

    def _notify(self) -> None:
        tick, self._tick = self._tick, asyncio.Event()
        tick.set()

    async def _until(self, ready: Callable[[], bool]) -> None:
        """Wait until ``ready()``; raise if the session closes or stops reconnecting first."""
        while not ready():
            if self._state is not SessionState.OPEN:
                raise ChannelClosedError(f"{self.label} closed")
            if self._gave_up is not None:
                raise self._gave_up
            await self._tick.wait()

    # -- events ------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[ProviderEvent]:
        while not self._ended:
            item = await self._queue.get()
            if isinstance(item, _End):
                self._ended = True
                return
            yield item

    def _drain_events(self) -> None:
        for event in self.protocol.events():
            self._queue.put_nowait(event)

    def _emit_error(self, message: str, code: str, *, recoverable: bool) -> None:
        error = ProviderError(message, code=code, recoverable=recoverable)
        self._queue.put_nowait(ProviderErrorEvent(error))

    # -- opening -----------------------------------------------------------------------------

    async def _open(self) -> None:
        """Establish the first connection and start the reader.

        Raises:
            ProviderError: As :meth:`_establish`.

        Cancellation: safe; nothing is left open.
        """
        if self._state is not SessionState.UNOPENED:
            raise RuntimeError(f"a {self.label} opens once")
        try:
            await self._establish()
        except BaseException:
            self._state = SessionState.CLOSED
            raise
        self._state = SessionState.OPEN
        prefix = type(self).__name__
        self._runner = asyncio.create_task(self._run(), name=f"{prefix}-{self.config.session_id}")

    def _tap(self, direction: WireDirection, data: str | bytes) -> None:
        taps = self.provider.wire_taps
        if taps:
            taps.emit(self.config.session_id, self.connections, direction, data)

    async def _establish(self) -> None:
        """Dial, write what opens the conversation and read until :meth:`_ready`, all under
        ``open_timeout``.

        Raises:
            ProviderError: The dial failed, the server closed the socket meanwhile
                (:meth:`_close_error`), or it did not get ready in time (``setup_timeout``).
        """
        ws = await self.provider._dial()
        try:
            self._ws = ws
            self._outbox.clear()
            self.connections += 1
            self.protocol.connection_made()
            async with asyncio.timeout(self.provider.reconnect.open_timeout):
                await self._flush()
                while not self._ready():
                    try:
                        message = await ws.recv()
                    except ConnectionClosed:
                        raise self._close_error(
                            ws, f"{self._server} closed the connection"
                        ) from None
                    self._tap("in", message)
                    self.protocol.receive(message)
                    self._drain_events()
            await self._flush()  # what waited for the opening exchange
        except BaseException as exc:
            self._lose(ws, f"setup failed: {exc!r}")
            await ws.close()
            if isinstance(exc, TimeoutError):
                raise ProviderError(
                    f"{self._server} did not answer setup in time",
                    code="setup_timeout",
                    recoverable=True,
                ) from exc
            raise
        self._notify()

    # -- sending -----------------------------------------------------------------------------

    def _lose(self, ws: ClientConnection, reason: str, unsent: Sequence[str] = ()) -> None:
        """Book the loss of ``ws`` once (no await: nothing slips onto a dead socket)."""
        if self._ws is not ws:
            return
        self._ws = None
        lost = [*unsent, *self._outbox]
        self._outbox.clear()
        self.protocol.connection_lost(reason, lost)
        self._drain_events()
        self._notify()

    async def _flush(self) -> None:
        """Write what the protocol queued, in order.

        Raises:
            ProviderError: No connection (``not_connected``) or it broke while writing
                (``connection_lost``, booked with :meth:`_lose`); both recoverable.

        Cancellation: partial effect: the frames before the cancellation are written.
        """
        async with self._send_lock:
            self._outbox.extend(self.protocol.outgoing())
            while self._outbox:
                ws = self._ws
                if ws is None:
                    self._outbox.clear()
                    raise ProviderError(
                        f"not connected to {self._server}", code="not_connected", recoverable=True
                    )
                message = self._outbox.popleft()
                self._tap("out", message)
                try:
                    await ws.send(message)
                except ConnectionClosed as exc:
                    self._lose(ws, f"send failed: {exc}", [message])
                    raise ProviderError(
                        f"the connection to {self._server} was lost ({exc})",
                        code="connection_lost",
                        recoverable=True,
                    ) from exc

    async def send_audio(self, frame: PCM16) -> None:
        """Send caller audio (dropped and counted while reconnecting).

        Raises:
            AudioFormatError: ``frame`` is not 1-D int16 PCM; the session keeps working.
            ChannelClosedError: The session is closed.

        Cancellation: safe; a frame is sent whole or not at all.
        """
        self._check_open("send_audio")
        if not self.protocol.append_audio(check_pcm16(frame)):
            self.dropped_audio_frames += 1
            self.logger.debug(
                "caller audio dropped while reconnecting (%d so far)", self.dropped_audio_frames
            )
            return
        try:
            await self._flush()
        except ProviderError as exc:
            self.dropped_audio_frames += 1
            self.logger.debug("caller audio not sent: %s", exc)

    async def inject_context(self, text: str) -> None:
        """Add ``text`` as context the model reads without answering (it waits for the next
        connection while there is none).

        Raises:
            ChannelClosedError: The session is closed.

        Cancellation: safe; the context stays queued.
        """
        await self._intent("inject_context", self.protocol.inject_context, text)

    async def say(self, text: str) -> None:
        """Have the model speak ``text`` (it waits for the next connection while there is
        none).

        Raises:
            ChannelClosedError: The session is closed.

        Cancellation: safe; the turn stays queued.
        """
        await self._intent("say", self.protocol.say, text)

    async def _intent(self, what: str, queue: Callable[[str], None], text: str) -> None:
        self._check_open(what)
        queue(text)
        await self._send_intent()

    async def _send_intent(self) -> None:
        """Write what an intent queued (a subclass may defer it instead)."""
        await self._flush()

    # -- the reader --------------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> int:
        received = 0
        try:
            async for message in ws:
                received += 1
                self._tap("in", message)
                self.protocol.receive(message)
                self._drain_events()
                self._notify()
                if self._fatal() is not None:
                    return received
                try:
                    await self._flush()  # what the frame asked for (e.g. a retried request)
                except ProviderError as exc:
                    self.logger.debug("send from the reader failed: %s", exc)
                if self._planned_close():
                    await ws.close()
                    break
        except ConnectionClosed:
            pass
        return received

    async def _run(self) -> None:
        failures = 0
        try:
            while True:
                planned = False
                ws = self._ws
                if ws is not None:
                    received = await self._read(ws)
                    fatal = self._fatal()
                    if fatal is not None:  # a bad key, no quota: reconnecting cannot help
                        self._gave_up = fatal
                        self._ws = None
                        self._notify()
                        await ws.close()
                        return
                    planned = self._planned_close()
                    error = self._close_error(ws, f"the connection to {self._server} was lost")
                    self._lose(ws, str(error))
                    if planned:
                        failures = 0
                        self.logger.info("the server announced the close; reconnecting at once")
                    else:
                        failures = 0 if received else failures + 1
                        if not error.recoverable:
                            self._emit_error(str(error), error.code, recoverable=False)
                            return
                        self._emit_error(f"{error}; reconnecting", error.code, recoverable=True)
                if not await self._reconnect(failures, immediate=planned):
                    return
        except Exception as exc:  # a bug: say so, and end the session rather than hang
            self.logger.exception("%s reader failed", self.label)
            self._emit_error(f"the reader failed: {exc!r}", "internal", recoverable=False)
        finally:
            if self._gave_up is None:
                self._gave_up = ProviderError(
                    f"the session with {self._server} ended",
                    code="connection_failed",
                    recoverable=False,
                )
            self._notify()
            self._queue.put_nowait(_End())

    async def _reconnect(self, first_attempt: int, *, immediate: bool = False) -> bool:
        policy = self.provider.reconnect
        last = "no attempts allowed"
        for attempt in range(first_attempt, policy.max_attempts):
            if not (immediate and attempt == first_attempt):
                await asyncio.sleep(policy.delay(attempt))
            try:
                await self._establish()
            except ProviderError as exc:
                last = str(exc)
                self.logger.warning("reconnect attempt %d failed: %s", attempt + 1, exc)
                if not exc.recoverable and not self._retry_unrecoverable(exc):
                    break
                continue
            self.logger.info("reconnected to %s (connection %d)", self._server, self.connections)
            return True
        message = f"gave up reconnecting to {self._server}: {last}"
        self._gave_up = ProviderError(message, code="connection_failed", recoverable=False)
        self._notify()
        self._emit_error(message, "connection_failed", recoverable=False)
        return False

    # -- closing -----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """End the session: stop the reader, close the socket, end ``events()``. Idempotent.

        Cancellation: the socket is closed and ``events()`` ended all the same.
        """
        if self._state is SessionState.CLOSED:
            return
        self._state = SessionState.CLOSED
        self._notify()
        runner, self._runner = self._runner, None
        ws, self._ws = self._ws, None
        try:
            if runner is not None:
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
        finally:
            try:
                if ws is not None:
                    await ws.close()
            finally:
                self._queue.put_nowait(_End())
