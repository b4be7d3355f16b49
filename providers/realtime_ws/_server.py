"""The scaffolding of loopback test servers for websocket realtime protocols.

:class:`LoopbackServer` listens on 127.0.0.1 (a free port by default), accepts connections in
order and hands each to a :class:`LoopbackConnection` subclass built by ``_connection``. A
connection reads frames until the socket closes; each one goes to ``_handle`` (the protocol's
part: decode, validate, record with ``_record``, answer). It keeps what a test checks:
``received`` (valid client messages in arrival order), ``received_at`` (the
``time.perf_counter()`` of each frame's arrival, before validation), ``sent``, ``invalid``;
and what a test does: ``_expect`` a message, ``send_raw``, ``drop`` or ``close`` the socket.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar

from websockets.asyncio.server import Server, serve
from websockets.asyncio.server import ServerConnection as _WsConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

__all__ = ["LoopbackConnection", "LoopbackServer"]

Message = dict[str, Any]
R = TypeVar("R")  # what the server records about a rejected frame


class LoopbackConnection(Generic[R]):
    """One client connection to a loopback server, driven by a test.

    Args:
        server: The server that accepted it.
        ws: The socket.
        number: Its number on the server (1, 2...).
    """

    def __init__(self, server: LoopbackServer[Any, R], ws: _WsConnection, number: int) -> None:
        self.server = server
        self.number = number
        request = ws.request
        self.path = request.path if request is not None else ""
        self.headers = dict(request.headers.raw_items()) if request is not None else {}
        self.received: list[Message] = []
        self.received_at: list[float] = []
        self.sent: list[Message] = []
        self.invalid: list[R] = []
        self.closed = asyncio.Event()
        self._ws = ws
        self._ids = itertools.count(1)
        self._consumed: set[int] = set()
        self._changed = asyncio.Condition()

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{self.number}_{next(self._ids)}"

    # -- what the protocol part provides ---------------------------------------------------

    async def _opened(self) -> None:
        """Called once the connection is accepted, before any frame is read."""

    async def _handle(self, text: str, arrived: float) -> bool:
        """Take one client frame (decoded as text); False closes the connection."""
        raise NotImplementedError

    # -- recording and expecting -----------------------------------------------------------

    async def _record(self, message: Message, arrived: float) -> None:
        """Add a valid client message and wake the tests waiting on ``_expect``."""
        async with self._changed:
            self.received.append(message)
            self.received_at.append(arrived)
            self._changed.notify_all()

    def _reject(self, bad: R) -> None:
        """Record a rejected frame here and on the server."""
        self.invalid.append(bad)
        self.server.invalid.append(bad)

    def _find(self, match: Callable[[Message], bool]) -> int | None:
        for index, message in enumerate(self.received):
            if index not in self._consumed and match(message):
                return index
        return None

    async def _expect(self, match: Callable[[Message], bool]) -> Message:
        """Wait for the first client message that ``match`` accepts and no earlier
        ``_expect`` returned.

        Cancellation: safe.
        """
        async with self._changed:
            await self._changed.wait_for(lambda: self._find(match) is not None)
            index = self._find(match)
            assert index is not None
            self._consumed.add(index)
            return self.received[index]

    def _count(self, match: Callable[[Message], bool]) -> int:
        return sum(1 for message in self.received if match(message))

    # -- the socket ------------------------------------------------------------------------

    async def send_raw(self, data: str | bytes) -> None:
        """Send a frame as is (e.g. malformed JSON); it is not checked or recorded.

        Cancellation: safe.
        """
        await self._ws.send(data)

    async def drop(self) -> None:
        """Drop the connection abruptly (no closing handshake), as a network failure would.

        Cancellation: safe.
        """
        self._ws.transport.abort()
        await self.closed.wait()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection with ``code`` and ``reason``.

        Cancellation: safe.
        """
        await self._ws.close(code, reason)
        await self.closed.wait()

    async def _serve(self) -> None:
        try:
            await self._opened()
            async for frame in self._ws:
                arrived = time.perf_counter()
                text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
                if not await self._handle(text, arrived):
                    break
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()


C = TypeVar("C", bound=LoopbackConnection[Any])


class LoopbackServer(Generic[C, R]):
    """A protocol server on 127.0.0.1 for tests; use it with ``async with``.

    Args:
        port: The port to listen on (0: a free one).

    A subclass builds its connections in ``_connection`` and may refuse a handshake in
    ``_process_request`` (return an HTTP response to refuse it).
    """

    def __init__(self, *, port: int = 0) -> None:
        self.connections: list[C] = []
        self.invalid: list[R] = []
        self._port = port
        self._server: Server | None = None
        self._accepted: asyncio.Queue[C] = asyncio.Queue()

    def _connection(self, ws: _WsConnection, number: int) -> C:
        raise NotImplementedError

    def _process_request(self, ws: _WsConnection, request: Request) -> Response | None:
        return None

    @property
    def address(self) -> str:
        """``ws://127.0.0.1:<port>``.

        Raises:
            RuntimeError: The server is not started.
        """
        if self._server is None:
            raise RuntimeError("the test server is not started")
        port = self._server.sockets[0].getsockname()[1]
        return f"ws://127.0.0.1:{port}"

    async def start(self) -> None:
        """Start listening.

        Cancellation: safe; nothing is left listening.
        """
        if self._server is not None:
            raise RuntimeError("the test server is already started")
        self._server = await serve(
            self._handler,
            "127.0.0.1",
            self._port,
            process_request=self._process_request,
            compression=None,
            max_size=None,
        )

    async def _handler(self, ws: _WsConnection) -> None:
        connection = self._connection(ws, len(self.connections) + 1)
        self.connections.append(connection)
        self._accepted.put_nowait(connection)
        await connection._serve()

    async def next_connection(self) -> C:
        """The next accepted connection, in the order they arrived.

        Cancellation: safe; no connection is lost.
        """
        return await self._accepted.get()

    async def aclose(self) -> None:
        """Close every connection and stop listening; idempotent.

        Cancellation: don't cancel; the server may keep listening.
        """
        server, self._server = self._server, None
        if server is not None:
            server.close()
            await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
