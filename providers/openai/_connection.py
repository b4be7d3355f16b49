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
import logging
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from providers.base import ProviderCapabilities, SessionConfig
from providers.realtime_ws import WebSocketProvider, WebSocketSession
from voice_hitl import ProviderError

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


class OpenAIRealtimeProvider(WebSocketProvider):
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
        headers = self.auth_headers("Authorization", api_key and f"Bearer {api_key}", extra_headers)
        super().__init__(url=realtime_url(url, model), headers=headers, reconnect=reconnect)
        self.model = model
        self.options = options or RealtimeOptions()
        # It speaks, cancels calls on barge-in, and names no speakers (the defaults).
        transcribes = self.options.transcription_model is not None
        self.capabilities = ProviderCapabilities(user_transcription=transcribes)

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

    def _where(self) -> str:
        return f"the realtime server at {self.url}"


class OpenAIRealtimeSession(WebSocketSession[RealtimeProtocol]):
    """One conversation over one WebSocket at a time (it reconnects when the socket drops)."""

    label = "OpenAI realtime session"
    logger = logger

    def __init__(self, provider: OpenAIRealtimeProvider, config: SessionConfig) -> None:
        super().__init__(provider, config, RealtimeProtocol(config, provider.options))
        self.provider: OpenAIRealtimeProvider = provider

    def _fatal(self) -> ProviderError | None:
        return self.protocol.failed

    async def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> str | None:
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

    async def interrupt(self) -> None:
        self._check_open("interrupt")
        if self.protocol.interrupt():
            await self._flush()
