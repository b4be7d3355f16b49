"""The websocket adapter: pumps :class:`LiveProtocol` messages over ``websockets``.

A session opens with ``setup`` and is usable once the server answers ``setupComplete``. It owns
one reader task (started by ``connect``, cancelled and awaited by ``aclose``). On ``goAway`` it
closes the socket and reconnects at once with the latest resumption handle; on a dropped
connection it reconnects with backoff, unless the close says retrying cannot help (a bad
key, an invalid request, quota). Calls open at the loss stay open: their results are
delivered to the next connection (see :class:`LiveProtocol`), and ``submit_tool_result``
returns only once the result is written — or raises if the session gave up reconnecting.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from voice_hitl._exceptions import ChannelClosedError, ProviderError
from voice_hitl.voice._provider import ProviderSession, SessionConfig
from voice_hitl.voice._provider_events import PCM16, ProviderErrorEvent, ProviderEvent

from ._protocol import LiveProtocol
from ._wire import classify_close

if TYPE_CHECKING:
    from ._provider import GeminiLiveProvider

__all__ = ["GeminiLiveSession"]

logger = logging.getLogger("voice_hitl.providers.gemini")


class _State(enum.Enum):
    UNOPENED = "unopened"
    OPEN = "open"
    CLOSED = "closed"


class _End:
    """Marks the end of a session's events."""


def _close_error(ws: ClientConnection, what: str) -> ProviderError:
    code, reason = ws.close_code, ws.close_reason or ""
    kind, fatal = classify_close(code, reason)
    detail = f"closed with code {code}" + (f": {reason}" if reason else "")
    return ProviderError(f"{what} ({detail})", code=kind, recoverable=not fatal)


class GeminiLiveSession(ProviderSession):
    """One conversation, over one WebSocket at a time (it reconnects and resumes)."""

    def __init__(self, provider: GeminiLiveProvider, config: SessionConfig) -> None:
        self.provider = provider
        self.config = config
        self.protocol = LiveProtocol(config, provider.model, provider.options)
        self.connections = 0
        self.dropped_audio_frames = 0
        self._state = _State.UNOPENED
        self._ws: ClientConnection | None = None
        self._runner: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[ProviderEvent | _End] = asyncio.Queue()
        self._ended = False
        self._gave_up = False
        self._changed = asyncio.Event()
        self._outbox: collections.deque[str] = collections.deque()
        self._send_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"GeminiLiveSession({self.config.session_id!r}, {self._state.value})"

    def _check_open(self, what: str) -> None:
        if self._state is not _State.OPEN:
            raise ChannelClosedError(f"Gemini Live session is {self._state.value} ({what})")

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # -- opening -----------------------------------------------------------------------------

    async def _open(self) -> None:
        if self._state is not _State.UNOPENED:
            raise RuntimeError("a Gemini Live session opens once")
        try:
            await self._establish()
        except BaseException:
            self._state = _State.CLOSED
            raise
        self._state = _State.OPEN
        self._runner = asyncio.create_task(self._run(), name=f"gemini-{self.config.session_id}")

    async def _establish(self) -> None:
        """Dial, send ``setup`` and read until ``setupComplete`` (under ``open_timeout``)."""
        ws = await self.provider._dial()
        try:
            self._ws = ws
            self.connections += 1
            self.protocol.connection_made()
            async with asyncio.timeout(self.provider.reconnect.open_timeout):
                await self._flush()
                while not self.protocol.ready:
                    try:
                        message = await ws.recv()
                    except ConnectionClosed:
                        raise _close_error(ws, "the Live server closed the connection") from None
                    taps = self.provider.wire_taps
                    if taps:
                        taps.emit(self.config.session_id, self.connections, "in", message)
                    self.protocol.receive(message)
                    self._drain_events()
            await self._flush()  # what waited for setupComplete
        except BaseException as exc:
            self._lose(ws, f"setup failed: {exc!r}")
            await ws.close()
            if isinstance(exc, TimeoutError):
                raise ProviderError(
                    "the Live server did not answer setup in time",
                    code="setup_timeout",
                    recoverable=True,
                ) from exc
            raise
        self._notify()

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

    # -- sending -----------------------------------------------------------------------------

    def _lose(self, ws: ClientConnection, reason: str, unsent: list[str] | None = None) -> None:
        """Book the loss of ``ws`` once (no await: nothing slips onto a dead socket)."""
        if self._ws is not ws:
            return
        self._ws = None
        lost = [*(unsent or []), *self._outbox]
        self._outbox.clear()
        self.protocol.connection_lost(reason, lost)
        self._drain_events()
        self._notify()

    async def _flush(self) -> None:
        async with self._send_lock:
            self._outbox.extend(self.protocol.outgoing())
            while self._outbox:
                ws = self._ws
                if ws is None:
                    raise ProviderError(
                        "not connected to the Live server", code="not_connected", recoverable=True
                    )
                message = self._outbox.popleft()
                taps = self.provider.wire_taps
                if taps:
                    taps.emit(self.config.session_id, self.connections, "out", message)
                try:
                    await ws.send(message)
                except ConnectionClosed as exc:
                    self._lose(ws, f"send failed: {exc}", [message])
                    raise ProviderError(
                        f"the connection to the Live server was lost ({exc})",
                        code="connection_lost",
                        recoverable=True,
                    ) from exc

    async def send_audio(self, frame: PCM16) -> None:
        self._check_open("send_audio")
        if not self.protocol.append_audio(frame):
            self.dropped_audio_frames += 1
            logger.debug("caller audio dropped while not connected (%d)", self.dropped_audio_frames)
            return
        try:
            await self._flush()
        except ProviderError as exc:
            self.dropped_audio_frames += 1
            logger.debug("caller audio not sent: %s", exc)

    async def submit_tool_result(
        self, call_id: str, output: str, *, is_error: bool
    ) -> str | None:
        """Send the result of ``call_id``: a ``toolResponse``, or — for a call made on a
        connection since lost — a turn with the call and its result on the new connection.

        Returns once the result is written to a live connection (waiting for a reconnect
        if need be): None when it went as the call's ``toolResponse``, a note when it went to
        a later connection as a turn the model reads.

        Raises:
            ProviderError: The call is not open (unknown, answered, or withdrawn by the
                server: ``call_withdrawn``), or the session gave up reconnecting before the
                result could be written (``connection_failed``, not recoverable).
            ChannelClosedError: The session is closed (or closed while the result waited).

        Cancellation: safe; a result not yet written stays queued for the next connection.
        """
        self._check_open("submit_tool_result")
        came_on = self.protocol.call_connection(call_id)
        self.protocol.submit_tool_result(call_id, output, is_error=is_error)
        while True:
            if self._state is not _State.OPEN:
                self.protocol.discard_result(call_id)
                raise ChannelClosedError(
                    f"result of call {call_id!r} not delivered: the session closed"
                )
            if self.protocol.waiting(call_id):
                if self._gave_up:
                    self.protocol.discard_result(call_id)
                    raise ProviderError(
                        f"result of call {call_id!r} not delivered: the connection to the "
                        "Live server was lost and could not be re-established",
                        code="connection_failed",
                        recoverable=False,
                    )
                await self._changed.wait()
                continue
            try:
                await self._flush()
            except ProviderError as exc:
                logger.debug("result of %r: send interrupted (%s)", call_id, exc)
                if self.protocol.waiting(call_id):
                    continue  # it goes to the next connection
            if came_on is not None and came_on != self.protocol.connection:
                return "delivered as context after reconnect"
            return None

    async def inject_context(self, text: str) -> None:
        self._check_open("inject_context")
        self.protocol.inject_context(text)
        await self._flush_if_ready()

    async def say(self, text: str) -> None:
        self._check_open("say")
        self.protocol.say(text)
        await self._flush_if_ready()

    async def _flush_if_ready(self) -> None:
        if self._ws is not None:
            try:
                await self._flush()
            except ProviderError as exc:
                logger.debug("send interrupted (%s); the turn waits for the next connection", exc)

    async def interrupt(self) -> None:
        """No message: the Live API has no client-side cancel; the server's own voice
        activity detection interrupts the model when the caller speaks.

        Cancellation: safe.
        """
        self._check_open("interrupt")
        logger.debug("interrupt(): the Live API stops on caller speech (server VAD)")

    # -- the reader --------------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> int:
        received = 0
        try:
            taps = self.provider.wire_taps
            async for message in ws:
                received += 1
                if taps:
                    taps.emit(self.config.session_id, self.connections, "in", message)
                self.protocol.receive(message)
                self._drain_events()
                try:
                    await self._flush()
                except ProviderError as exc:
                    logger.debug("send from the reader failed: %s", exc)
                if self.protocol.going_away is not None:
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
                    planned = self.protocol.going_away is not None
                    error = _close_error(ws, "the connection to the Live server was lost")
                    self._lose(ws, str(error))
                    if planned:
                        failures = 0
                        logger.info("the Live server sent goAway; resuming on a new connection")
                    else:
                        failures = 0 if received else failures + 1
                        if not error.recoverable:
                            self._emit_error(str(error), error.code, recoverable=False)
                            return
                        self._emit_error(f"{error}; reconnecting", error.code, recoverable=True)
                if not await self._reconnect(failures, immediate=planned):
                    return
        except Exception as exc:  # a bug: say so, and end the session rather than hang
            logger.exception("Gemini Live reader failed")
            self._emit_error(f"the Live reader failed: {exc!r}", "internal", recoverable=False)
        finally:
            self._gave_up = True
            self._notify()
            self._queue.put_nowait(_End())

    async def _reconnect(self, first_attempt: int, *, immediate: bool) -> bool:
        policy = self.provider.reconnect
        last = "no attempts allowed"
        for attempt in range(first_attempt, policy.max_attempts):
            if not (immediate and attempt == first_attempt):
                await asyncio.sleep(policy.delay(attempt))
            try:
                await self._establish()
            except ProviderError as exc:
                last = str(exc)
                logger.warning("reconnect attempt %d failed: %s", attempt + 1, exc)
                if self.protocol.handle is not None and not exc.recoverable:
                    logger.info("resuming failed; starting a fresh server session")
                    self.protocol.handle = None
                    continue
                if not exc.recoverable:
                    break
                continue
            logger.info("reconnected to the Live server (connection %d)", self.connections)
            return True
        self._emit_error(
            f"gave up reconnecting to the Live server: {last}",
            "connection_failed",
            recoverable=False,
        )
        return False

    async def aclose(self) -> None:
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        runner, self._runner = self._runner, None
        ws, self._ws = self._ws, None
        self._notify()
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
