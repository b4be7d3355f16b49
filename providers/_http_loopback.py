"""A small HTTP/1.1 server on 127.0.0.1 for the text providers' loopback test servers.

It speaks HTTP through ``h11`` (sans-I/O, already installed with ``httpx``, which both vendors'
SDKs use), keeps connections alive as the SDK clients expect, and hands each request to one
async handler that returns a status and a JSON body. Every connection task belongs to the
server: :meth:`LoopbackHTTPServer.aclose` cancels and awaits them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import h11

__all__ = ["HTTPReply", "HTTPRequest", "LoopbackHTTPServer"]

logger = logging.getLogger("providers.loopback")


@dataclass(frozen=True, slots=True)
class HTTPRequest:
    """One request as the server read it (header names lower-case)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON.

        Raises:
            ValueError: The body is not JSON.
        """
        return json.loads(self.body or b"null")


@dataclass(frozen=True, slots=True)
class HTTPReply:
    """A JSON reply: status, body, extra headers."""

    status: int
    body: Any
    headers: Mapping[str, str] | None = None


Handler = Callable[[HTTPRequest], Awaitable[HTTPReply]]


class LoopbackHTTPServer:
    """Serves ``handler`` on a free port of 127.0.0.1 (``async with`` starts and stops it)."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Listen on a free port.

        Cancellation: safe; nothing is left listening.
        """
        if self._server is not None:
            raise RuntimeError("the loopback server is already started")
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        """Stop listening and end every connection. Idempotent.

        Cancellation: the connections are cancelled first; cancelling stops only the wait.
        """
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def __aenter__(self) -> LoopbackHTTPServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.create_task(self._serve(reader, writer), name="loopback-http-connection")
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await self._read_request(conn, reader)
                if request is None:
                    return
                try:
                    reply = await self._handler(request)
                except Exception as exc:  # a bug in a test handler: answer 500, keep serving
                    logger.exception("loopback handler failed: %s %s", request.method, request.path)
                    reply = HTTPReply(500, {"error": {"message": repr(exc)}})
                body = json.dumps(reply.body).encode()
                headers = [
                    ("content-type", "application/json"),
                    ("content-length", str(len(body))),
                    *(reply.headers or {}).items(),
                ]
                parts = (
                    conn.send(h11.Response(status_code=reply.status, headers=headers)),
                    conn.send(h11.Data(data=body)),
                    conn.send(h11.EndOfMessage()),
                )
                writer.write(b"".join(p for p in parts if p))  # one write: one segment
                await writer.drain()
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError) as exc:
            logger.debug("loopback connection ended: %s", exc)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    @staticmethod
    async def _read_request(
        conn: h11.Connection, reader: asyncio.StreamReader
    ) -> HTTPRequest | None:
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(65536))
            elif isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                assert head is not None
                headers = {k.decode().lower(): v.decode() for k, v in head.headers}
                return HTTPRequest(head.method.decode(), head.target.decode(), headers, bytes(body))
            elif isinstance(event, h11.ConnectionClosed):
                return None
