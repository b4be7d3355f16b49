"""``GeminiLiveProvider``: the Live API's endpoint, key and settings; it opens sessions."""

from __future__ import annotations

from collections.abc import Mapping

from providers.base import ProviderCapabilities, SessionConfig
from providers.realtime_ws import ReconnectPolicy, WebSocketProvider

from ._options import LiveOptions
from ._session import GeminiLiveSession

__all__ = ["DEFAULT_MODEL", "DEFAULT_URL", "GeminiLiveProvider"]

DEFAULT_URL = (
    "wss://generativelanguage.googleapis.com/ws/"
    "google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
)
DEFAULT_MODEL = "gemini-2.5-flash-native-audio-preview-12-2025"


class GeminiLiveProvider(WebSocketProvider):
    """The Gemini Live API over a WebSocket.

    Args:
        api_key: Sent as the ``x-goog-api-key`` handshake header.
        model: The model (``models/`` is added when missing).
        url: The WebSocket endpoint (the Gemini API's ``BidiGenerateContent``).
        extra_headers: More handshake headers (they win over ``x-goog-api-key``).
        options: Voice, transcription, resumption and related session settings.
        reconnect: How lost connections are retried (``open_timeout`` also bounds the wait
            for ``setupComplete``).
    """

    server_name = "the Live server"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = DEFAULT_MODEL,
        url: str = DEFAULT_URL,
        extra_headers: Mapping[str, str] | None = None,
        options: LiveOptions | None = None,
        reconnect: ReconnectPolicy | None = None,
    ) -> None:
        headers = self.auth_headers("x-goog-api-key", api_key, extra_headers)
        super().__init__(url=url, headers=headers, reconnect=reconnect)
        self.model = model
        self.options = options or LiveOptions()
        # It speaks, cancels calls on barge-in, and names no speakers (the defaults).
        transcribes = self.options.input_transcription
        self.capabilities = ProviderCapabilities(user_transcription=transcribes)

    def __repr__(self) -> str:
        return f"GeminiLiveProvider(model={self.model!r})"

    async def connect(self, config: SessionConfig) -> GeminiLiveSession:
        """Open a session: send ``setup`` and wait for ``setupComplete``.

        Raises:
            ProviderError: The server could not be reached, refused the handshake or closed
                the connection in answer to ``setup`` (e.g. code ``unauthorized``).

        Cancellation: safe; nothing is left open.
        """
        session = GeminiLiveSession(self, config)
        await session._open()
        return session
