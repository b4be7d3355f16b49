"""``WebSocketProvider``: endpoint, handshake headers, reconnect policy and wire taps.

A provider holds configuration only; :meth:`WebSocketProvider._dial` opens one socket and
translates every way the handshake can fail into a :class:`ProviderError` (``unauthorized``,
``handshake_failed``, ``connection_failed``) whose ``recoverable`` says whether retrying may
help. Sessions call it to connect and to reconnect.
"""

from __future__ import annotations

from collections.abc import Mapping

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

from providers.base import RealtimeProvider, WireTaps
from voice_hitl import ProviderError

from ._reconnect import ReconnectPolicy

__all__ = ["WebSocketProvider"]


class WebSocketProvider(RealtimeProvider):
    """The configuration shared by websocket realtime providers.

    Args:
        url: The WebSocket endpoint.
        headers: The handshake headers (authentication included).
        reconnect: How lost connections are retried (``None``: the defaults).

    A subclass sets ``capabilities`` and implements ``connect`` by building its session and
    awaiting ``session._open()``. ``server_name`` names the server in error messages.
    """

    server_name = "the realtime server"

    def __init__(
        self, *, url: str, headers: Mapping[str, str], reconnect: ReconnectPolicy | None
    ) -> None:
        self.url = url
        self._headers = dict(headers)
        self.reconnect = reconnect or ReconnectPolicy()
        self.wire_taps: WireTaps = WireTaps()
        """Every frame of every session, both ways (``add`` a tap; see ``WireTaps``)."""

    @staticmethod
    def auth_headers(
        name: str, value: str | None, extra: Mapping[str, str] | None
    ) -> dict[str, str]:
        """``{name: value}`` when ``value`` is given, then ``extra`` (which wins)."""
        headers = {name: value} if value else {}
        headers.update(extra or {})
        return headers

    def _where(self) -> str:
        """How handshake errors name the server (a subclass may add the URL)."""
        return self.server_name

    async def _dial(self) -> ClientConnection:
        """Open one socket (bounded by ``reconnect.open_timeout``).

        Raises:
            ProviderError: ``unauthorized`` (HTTP 401/403, not recoverable),
                ``handshake_failed`` (another status; recoverable for 429 and 5xx) or
                ``connection_failed`` (unreachable, timed out; recoverable).

        Cancellation: safe; nothing is left open.
        """
        where = self._where()
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
                f"{where} refused the handshake (HTTP {status})",
                code="unauthorized" if status in (401, 403) else "handshake_failed",
                recoverable=status == 429 or status >= 500,
            ) from exc
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise ProviderError(
                f"could not connect to {where}: {exc}",
                code="connection_failed",
                recoverable=True,
            ) from exc
