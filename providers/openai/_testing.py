"""A loopback server that speaks the OpenAI Realtime protocol (GA) for tests.

:class:`RealtimeTestServer` listens on 127.0.0.1 (a free port by default) and answers the
handshake with ``session.created``. Both directions are checked against the ``openai`` SDK's
own types: every client event must validate (an invalid one is recorded and answered with an
``error`` event, as the real server does), and every event the server sends is validated
before it goes out (a test that builds a bad one gets :class:`ServerEventError`).

A test drives each accepted :class:`ServerConnection`: the model calls a function, speaks,
transcribes the caller, keys a SIP digit, the connection drops, an error is sent, or a script
of such steps plays. Client events are answered the way the real server answers them (see
``_server_reactions``): the conversation's items can be created, retrieved, truncated and
deleted, the input audio buffer committed and cleared, and one response is active at a time.
"""

from __future__ import annotations

from http import HTTPStatus

from websockets.asyncio.server import ServerConnection as _WsConnection
from websockets.http11 import Request, Response

from providers.realtime_ws import LoopbackServer

from ._server_connection import InvalidClientEvent, ServerConnection

__all__ = ["InvalidClientEvent", "RealtimeTestServer", "ServerConnection"]


class RealtimeTestServer(LoopbackServer[ServerConnection, InvalidClientEvent]):
    """A Realtime protocol server on 127.0.0.1 for tests; use it with ``async with``.

    Args:
        api_key: When given, the handshake must carry ``Authorization: Bearer <api_key>``
            or ``api-key: <api_key>`` (otherwise HTTP 401).
        auto_respond: Answer a ``response.create`` with a response of its own (empty, or
            speaking ``auto_reply``).
        port: The port to listen on (0: a free one).
    """

    def __init__(
        self, *, api_key: str | None = None, auto_respond: bool = True, port: int = 0
    ) -> None:
        super().__init__(port=port)
        self.api_key = api_key
        self.auto_respond = auto_respond
        self.auto_reply: str | None = None
        """What the model says in the responses ``auto_respond`` plays (``None``: nothing)."""
        self.acknowledge_items = True
        """Answer ``conversation.item.create``; a test sets it False to hold a result in
        flight (e.g. to drop the connection then)."""
        self.check_sent = True
        """Validate every event sent against the SDK's types (see :meth:`ServerConnection.send`)."""
        self.rejected_handshakes = 0

    @property
    def url(self) -> str:
        """The server's ``ws://`` URL (the path a client would use for OpenAI)."""
        return f"{self.base_url}/realtime"

    @property
    def base_url(self) -> str:
        """``ws://127.0.0.1:<port>/v1``: a base URL for clients that add ``/realtime``
        themselves (the ``openai`` SDK's ``websocket_base_url``, LiveKit's ``base_url``)."""
        return f"{self.address}/v1"

    def _process_request(self, ws: _WsConnection, request: Request) -> Response | None:
        if self.api_key is None:
            return None
        headers = request.headers
        if headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        if headers.get("api-key") == self.api_key:
            return None
        self.rejected_handshakes += 1
        return ws.respond(HTTPStatus.UNAUTHORIZED, "invalid API key\n")

    def _connection(self, ws: _WsConnection, number: int) -> ServerConnection:
        return ServerConnection(self, ws, number)
