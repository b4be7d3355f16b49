"""The websocket adapter: pumps :class:`LiveProtocol` messages over ``websockets``.

The connection lifecycle is :class:`~providers.realtime_ws.WebSocketSession`'s; this module
says what is Gemini's. A session is usable once the server answers ``setup`` with
``setupComplete``. On ``goAway`` it closes the socket and reconnects at once with the latest
resumption handle; on a dropped connection it reconnects with backoff, unless the close says
retrying cannot help (a bad key, an invalid request, quota). Calls open at the loss stay
open: their results are delivered to the next connection (see :class:`LiveProtocol`), and
``submit_tool_result`` returns only once the result is written — or raises if the session
gave up reconnecting.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from websockets.asyncio.client import ClientConnection

from providers.base import SessionConfig
from providers.realtime_ws import SessionState, WebSocketSession
from voice_hitl import ChannelClosedError, ProviderError

from ._protocol import LiveProtocol
from ._wire import classify_close

if TYPE_CHECKING:
    from ._provider import GeminiLiveProvider

__all__ = ["GeminiLiveSession"]

logger = logging.getLogger("voice_hitl.providers.gemini")


class GeminiLiveSession(WebSocketSession[LiveProtocol]):
    """One conversation, over one WebSocket at a time (it reconnects and resumes)."""

    label = "Gemini Live session"
    logger = logger

    def __init__(self, provider: GeminiLiveProvider, config: SessionConfig) -> None:
        super().__init__(provider, config, LiveProtocol(config, provider.model, provider.options))
        self.provider: GeminiLiveProvider = provider

    # -- the lifecycle's Gemini hooks ----------------------------------------------------------

    def _ready(self) -> bool:
        return self.protocol.ready

    def _planned_close(self) -> bool:
        return self.protocol.going_away is not None

    def _close_error(self, ws: ClientConnection, what: str) -> ProviderError:
        code, reason = ws.close_code, ws.close_reason or ""
        kind, fatal = classify_close(code, reason)
        detail = f"closed with code {code}" + (f": {reason}" if reason else "")
        return ProviderError(f"{what} ({detail})", code=kind, recoverable=not fatal)

    def _retry_unrecoverable(self, error: ProviderError) -> bool:
        if self.protocol.handle is None:
            return False
        logger.info("resuming failed; starting a fresh server session")
        self.protocol.handle = None
        return True

    # -- intents -------------------------------------------------------------------------------

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
            if self._state is not SessionState.OPEN:
                self.protocol.discard_result(call_id)
                raise ChannelClosedError(
                    f"result of call {call_id!r} not delivered: the session closed"
                )
            if self.protocol.waiting(call_id):
                if self._gave_up is not None:
                    self.protocol.discard_result(call_id)
                    raise ProviderError(
                        f"result of call {call_id!r} not delivered: the connection to the "
                        "Live server was lost and could not be re-established",
                        code="connection_failed",
                        recoverable=False,
                    )
                await self._tick.wait()
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

    async def _send_intent(self) -> None:
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
