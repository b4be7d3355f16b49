"""``GeminiLiveProvider``: the Live API's endpoint, key and settings; it opens sessions."""

from __future__ import annotations

from collections.abc import Mapping

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

from providers.openai._options import ReconnectPolicy
from voice_hitl._exceptions import ProviderError
from voice_hitl.voice._provider import ProviderCapabilities, RealtimeProvider, SessionConfig
from voice_hitl.voice._wire_taps import WireTaps

from ._options import LiveOptions
from ._session import GeminiLiveSession

__all__ = ["DEFAULT_MODEL", "DEFAULT_URL", "GeminiLiveProvider"]

DEFAULT_URL = (
    "wss://generativelanguage.googleapis.com/ws/"
    "google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
)
DEFAULT_MODEL = "gemini-2.5-flash-native-audio-preview-12-2025"


class GeminiLiveProvider(RealtimeProvider):
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
        self.model = model
        self.url = url
        headers = {"x-goog-api-key": api_key} if api_key else {}
        headers.update(extra_headers or {})
        self._headers = headers
        self.options = options or LiveOptions()
        self.reconnect = reconnect or ReconnectPolicy()
        self.wire_taps: WireTaps = WireTaps()
        """Every frame of every session, both ways (``add`` a tap; see ``WireTaps``)."""
        self.capabilities = ProviderCapabilities(
            can_say=True,
            speaker_attribution=False,
            tool_call_cancellation=True,
            user_transcription=self.options.input_transcription,
        )

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
                f"the Live server refused the handshake (HTTP {status})",
                code="unauthorized" if status in (401, 403) else "handshake_failed",
                recoverable=status == 429 or status >= 500,
            ) from exc
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise ProviderError(
                f"could not connect to the Live server: {exc}",
                code="connection_failed",
                recoverable=True,
            ) from exc
