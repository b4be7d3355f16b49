"""The websocket adapter: pumps :class:`RealtimeProtocol` messages over ``websockets``.

It owns one reader task per session (started by ``connect``, cancelled and awaited by
``aclose``); on connection loss it reconnects with backoff and sends the session configuration
again. Nothing is lost on the way: a call still open when its connection dropped stays
answerable, and its result reaches the new conversation as context the model reads; a result
the server had not taken yet is sent again that way. ``submit_tool_result`` returns only once
the server has taken the result (or says how it went). A fatal server error (bad key, no quota)
ends the session instead of reconnecting.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from voice_hitl._exceptions import ChannelClosedError, ProviderError
from voice_hitl.voice._provider import (
    ProviderCapabilities,
    ProviderSession,
    RealtimeProvider,
    SessionConfig,
)
from voice_hitl.voice._provider_events import PCM16, ProviderErrorEvent, ProviderEvent
from voice_hitl.voice._transport import check_pcm16
from voice_hitl.voice._wire_taps import WireTaps

from ._deliveries import Delivery
from ._options import RealtimeOptions, ReconnectPolicy
from ._protocol import RealtimeProtocol

__all__ = ["DEFAULT_URL", "OpenAIRealtimeProvider", "OpenAIRealtimeSession", "realtime_url"]

logger = logging.getLogger("voice_hitl.providers.openai")

DEFAULT_URL = "wss://api.openai.com/v1/realtime"

RESULT_ACK_TIMEOUT = 10.0
"""Seconds ``submit_tool_result`` waits for the server to take a result it sent."""


def realtime_url(url: str, model: str | None) -> str:
    """``url`` with ``model=`` appended, unless it already names a model or deployment."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if model and not any(key in ("model", "deployment") for key, _ in query):
        query.append(("model", model))
    return urlunsplit(parts._replace(query=urlencode(query)))


class _State(enum.Enum):
    UNOPENED = "unopened"
    OPEN = "open"
    CLOSED = "closed"


class _End:
    """Marks the end of a session's events."""


class OpenAIRealtimeProvider(RealtimeProvider):
    """The OpenAI Realtime API (GA protocol) over a WebSocket.

    Serves OpenAI, Azure OpenAI (GA ``/openai/v1/realtime`` endpoints) and compatible servers.

    Args:
        api_key: Sent as ``Authorization: Bearer``; leave it out when ``extra_headers``
            authenticate (Azure: ``{"api-key": ...}``).
        model: Added to the URL as ``?model=`` unless the URL names a model or deployment.
        url: The WebSocket endpoint.
        extra_headers: More handshake headers (they win over ``Authorization``).
        options: Voice, transcription, turn detection and related session settings.
        reconnect: How lost connections are retried.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = "gpt-realtime",
        url: str = DEFAULT_URL,
        extra_headers: Mapping[str, str] | None = None,
        options: RealtimeOptions | None = None,
        reconnect: ReconnectPolicy | None = None,
    ) -> None:
        self.model = model
        self.url = realtime_url(url, model)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        headers.update(extra_headers or {})
        self._headers = headers
        self.options = options or RealtimeOptions()
        self.reconnect = reconnect or ReconnectPolicy()
        self.wire_taps: WireTaps = WireTaps()
        """Every frame of every session, both ways (``add`` a tap; see ``WireTaps``)."""
        self.capabilities = ProviderCapabilities(
            can_say=True,
            speaker_attribution=False,
            tool_call_cancellation=True,
            user_transcription=self.options.transcription_model is not None,
        )

    def __repr__(self) -> str:
        return f"OpenAIRealtimeProvider(url={self.url!r})"

    async def connect(self, config: SessionConfig) -> OpenAIRealtimeSession:
        """Open a session and send its configuration.

        Raises:
            ProviderError: The server could not be reached or refused the handshake.

        Cancellation: safe; nothing is left open.
        """
        session = OpenAIRealtimeSession(self, config)
        await session._open()
        return session

    async def _dial(self) -> ClientConnection:
        try:
            return await connect(
                self.url,
                additional_headers=self._headers,
                open_timeout=self.reconnect.open_timeout,
                close_timeout=2.0,
                max_size=None,
                compression=None,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise ProviderError(
                f"the realtime server at {self.url} refused the handshake (HTTP {status})",
                code="unauthorized" if status in (401, 403) else "handshake_failed",
                recoverable=status == 429 or status >= 500,
            ) from exc
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise ProviderError(
                f"could not connect to the realtime server at {self.url}: {exc}",
                code="connection_failed",
                recoverable=True,
            ) from exc


class OpenAIRealtimeSession(ProviderSession):
    """One conversation over one WebSocket at a time (it reconnects when the socket drops)."""

    def __init__(self, provider: OpenAIRealtimeProvider, config: SessionConfig) -> None:
        self.provider = provider
        self.config = config
        self.protocol = RealtimeProtocol(config, provider.options)
        self.connections = 0
        self.dropped_audio_frames = 0
        self._state = _State.UNOPENED
        self._ws: ClientConnection | None = None
        self._runner: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[ProviderEvent | _End] = asyncio.Queue()
        self._ended = False
        self._outbox: collections.deque[str] = collections.deque()
        self._send_lock = asyncio.Lock()
        self._tick = asyncio.Event()  # set (and replaced) whenever the session's state moves
        self._gave_up: ProviderError | None = None

    def __repr__(self) -> str:
        return f"OpenAIRealtimeSession({self.config.session_id!r}, {self._state.value})"

    async def _open(self) -> None:
        if self._state is not _State.UNOPENED:
            raise RuntimeError("an OpenAI realtime session opens once")
        self._ws = await self.provider._dial()
        self._state = _State.OPEN
        self.connections = 1
        self.protocol.connection_made()
        self._runner = asyncio.create_task(self._run(), name=f"openai-{self.config.session_id}")
        try:
            await self._flush()
        except BaseException:
            await self.aclose()
            raise

    def _check_open(self, what: str) -> None:
        if self._state is not _State.OPEN:
            raise ChannelClosedError(f"OpenAI realtime session is {self._state.value} ({what})")

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

    async def _flush(self) -> None:
        async with self._send_lock:
            self._outbox.extend(self.protocol.outgoing())
            while self._outbox:
                message = self._outbox.popleft()
                ws = self._ws
                if ws is None:
                    self._outbox.clear()
                    raise ProviderError(
                        "not connected to the realtime server",
                        code="not_connected",
                        recoverable=True,
                    )
                taps = self.provider.wire_taps
                if taps:
                    taps.emit(self.config.session_id, self.connections, "out", message)
                try:
                    await ws.send(message)
                except ConnectionClosed as exc:
                    self._outbox.clear()
                    raise ProviderError(
                        f"the connection to the realtime server was lost ({exc})",
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
            logger.debug(
                "caller audio dropped while reconnecting (%d so far)", self.dropped_audio_frames
            )
            return
        try:
            await self._flush()
        except ProviderError as exc:
            self.dropped_audio_frames += 1
            logger.debug("caller audio not sent: %s", exc)

    def _notify(self) -> None:
        tick, self._tick = self._tick, asyncio.Event()
        tick.set()

    async def _until(self, ready: Callable[[], bool]) -> None:
        """Wait until ``ready()``; raise if the session closes or stops reconnecting first."""
        while not ready():
            if self._state is not _State.OPEN:
                raise ChannelClosedError("OpenAI realtime session closed")
            if self._gave_up is not None:
                raise self._gave_up
            await self._tick.wait()

    async def submit_tool_result(
        self, call_id: str, output: str, *, is_error: bool
    ) -> str | None:
        """Send a call's result and a ``response.create``; return once the server took it.

        While the connection is down this waits for the reconnect. A call whose connection
        was lost is answered on the new one as context the model reads (with the call it
        answers), and so is a result the server had not taken when the connection dropped.

        Returns:
            None when the server took it as the call's output; a note when it went as context
            after a reconnect, or when the server did not acknowledge it in time.

        Raises:
            ProviderError: The call is unknown or already answered, the server refused the
                result, or the session stopped reconnecting before it could be delivered.
            ChannelClosedError: The session is closed.

        Cancellation: safe; a result already queued is still delivered.
        """
        self._check_open("submit_tool_result")
        await self._until(lambda: self.protocol.connected)
        self.protocol.submit_tool_result(call_id, output, is_error=is_error)
        try:
            await self._flush()
        except ProviderError as exc:  # dropped meanwhile: it goes again on the next connection
            logger.info("result of call %r in flight at a drop: %s", call_id, exc)
        deliveries = self.protocol.deliveries
        try:
            async with asyncio.timeout(RESULT_ACK_TIMEOUT):
                await self._until(lambda: deliveries.state(call_id) is not Delivery.IN_FLIGHT)
        except TimeoutError:
            return f"sent; the server did not acknowledge it within {RESULT_ACK_TIMEOUT:g}s"
        state = deliveries.state(call_id)
        why = deliveries.why_refused(call_id)
        deliveries.forget(call_id)
        if state is Delivery.TAKEN_AS_CONTEXT:
            return "delivered as context after reconnect"
        if state is Delivery.REFUSED:
            raise ProviderError(
                f"the realtime server refused the result of call {call_id!r}: {why}",
                code="result_refused",
                recoverable=True,
            )
        return None

    async def inject_context(self, text: str) -> None:
        self._check_open("inject_context")
        self.protocol.inject_context(text)
        await self._flush()

    async def say(self, text: str) -> None:
        self._check_open("say")
        self.protocol.say(text)
        await self._flush()

    async def interrupt(self) -> None:
        self._check_open("interrupt")
        if self.protocol.interrupt():
            await self._flush()

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
                self._notify()
                if self.protocol.failed is not None:
                    return received
                try:
                    await self._flush()  # e.g. a response.create retried after response.done
                except ProviderError as exc:
                    logger.debug("send from the reader failed: %s", exc)
        except ConnectionClosed:
            pass
        return received

    async def _run(self) -> None:
        failures = 0
        try:
            while True:
                ws = self._ws
                assert ws is not None
                received = await self._read(ws)
                if self.protocol.failed is not None:
                    # A fatal error (bad key, no quota): reconnecting cannot help.
                    self._gave_up = self.protocol.failed
                    self._ws = None
                    self._notify()
                    await ws.close()
                    return
                code, why = ws.close_code, ws.close_reason
                reason = f"closed with code {code}" + (f": {why}" if why else "")
                # No await from here to connection_lost: no frame slips onto the dead socket.
                self._ws = None
                self._outbox.clear()
                self.protocol.connection_lost(reason)
                self._drain_events()
                self._notify()
                failures = 0 if received else failures + 1
                self._emit_error(
                    f"the connection to the realtime server was lost ({reason}); reconnecting",
                    "connection_lost",
                    recoverable=True,
                )
                if not await self._reconnect(failures):
                    return
        except Exception as exc:  # a bug: say so, and end the session rather than hang
            logger.exception("OpenAI realtime reader failed")
            self._emit_error(f"the realtime reader failed: {exc!r}", "internal", recoverable=False)
        finally:
            self._queue.put_nowait(_End())

    async def _reconnect(self, first_attempt: int) -> bool:
        policy = self.provider.reconnect
        last = "no attempts allowed"
        for attempt in range(first_attempt, policy.max_attempts):
            await asyncio.sleep(policy.delay(attempt))
            try:
                ws = await self.provider._dial()
            except ProviderError as exc:
                last = str(exc)
                logger.warning("reconnect attempt %d failed: %s", attempt + 1, exc)
                if not exc.recoverable:
                    break
                continue
            self._ws = ws
            self.connections += 1
            self.protocol.connection_made()
            try:
                await self._flush()
            except ProviderError as exc:
                logger.warning("reconnected but could not configure the session: %s", exc)
            logger.info("reconnected to the realtime server (connection %d)", self.connections)
            self._notify()
            return True
        message = f"gave up reconnecting to the realtime server: {last}"
        self._gave_up = ProviderError(message, code="connection_failed", recoverable=False)
        self._notify()
        self._emit_error(message, "connection_failed", recoverable=False)
        return False

    async def aclose(self) -> None:
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
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
