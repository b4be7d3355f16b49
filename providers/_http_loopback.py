"""A small HTTP/1.1 server on 127.0.0.1 for the text providers' loopback test servers.

It speaks HTTP through ``h11`` (sans-I/O, already installed with ``httpx``, which both vendors'
SDKs use), keeps connections alive as the SDK clients expect, and hands each request to one
async handler that returns a status and a JSON body (or, to play a broken server, raw bytes of
any content type, or a body cut mid-way). While the handler runs the server watches the
connection: a client that hangs up cancels the handler and is counted in
:attr:`LoopbackHTTPServer.dropped`. Every connection task belongs to the server:
:meth:`LoopbackHTTPServer.aclose` cancels and awaits them.
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
    """A reply: status, body (sent as JSON), extra headers.

    ``raw`` sends those bytes instead, as ``content_type``; ``cut_after`` declares the whole
    body's length but sends only that many bytes, then closes the connection.
    """

    status: int
    body: Any = None
    headers: Mapping[str, str] | None = None
    raw: bytes | None = None
    content_type: str = "application/json"
    cut_after: int | None = None

    def encoded(self) -> bytes:
        """The body's bytes."""
        return self.raw if self.raw is not None else json.dumps(self.body).encode()


Handler = Callable[[HTTPRequest], Awaitable[HTTPReply]]


class LoopbackHTTPServer:
    """Serves ``handler`` on a free port of 127.0.0.1 (``async with`` starts and stops it)."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._hangups = asyncio.Condition()
        self.port = 0
        self.dropped: list[HTTPRequest] = []
        """Requests whose client hung up before their reply (their handler was cancelled)."""
        self.hangups = 0
        """Connections the client closed before its first reply: on a request (``dropped``)
        or before a whole request arrived (a client that gave up while connecting or sending)."""

    async def wait_dropped(self, count: int = 1) -> list[HTTPRequest]:
        """Wait until ``count`` clients have hung up on their request; returns them.

        Cancellation: safe.
        """
        async with self._hangups:
            await self._hangups.wait_for(lambda: len(self.dropped) >= count)
        return list(self.dropped)

    async def wait_hangups(self, count: int = 1) -> int:
        """Wait until ``count`` connections were closed by their client before their first
        reply (:attr:`hangups`); returns how many were.

        Cancellation: safe.
        """
        async with self._hangups:
            await self._hangups.wait_for(lambda: self.hangups >= count)
        return self.hangups

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
        replied = False
        try:
            while True:
                request = await self._read_request(conn, reader)
                if request is None:
                    if not replied:  # gone before a whole request arrived
                        await self._hung_up(None)
                    return
                reply = await self._answer(conn, reader, request)
                if reply is None:  # the client hung up: its handler was cancelled
                    await self._hung_up(request)
                    return
                replied = True
                body = reply.encoded()
                headers = [
                    ("content-type", reply.content_type),
                    ("content-length", str(len(body))),
                    *(reply.headers or {}).items(),
                ]
                head = conn.send(h11.Response(status_code=reply.status, headers=headers)) or b""
                if reply.cut_after is not None:  # a body cut mid-way: send part, hang up
                    writer.write(head + body[: reply.cut_after])
                    await writer.drain()
                    return
                parts = (head, conn.send(h11.Data(data=body)), conn.send(h11.EndOfMessage()))
                writer.write(b"".join(p for p in parts if p))  # one write: one segment
                await writer.drain()
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError) as exc:
            logger.debug("loopback connection ended: %s", exc)
            if not replied:  # reset, or cut inside a request: gone before its reply
                await self._hung_up(None)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def _hung_up(self, request: HTTPRequest | None) -> None:
        async with self._hangups:
            self.hangups += 1
            if request is not None:
                self.dropped.append(request)
            self._hangups.notify_all()

    async def _answer(
        self, conn: h11.Connection, reader: asyncio.StreamReader, request: HTTPRequest
    ) -> HTTPReply | None:
        """Run the handler while watching the connection; None when the client hung up."""
        handler: asyncio.Future[HTTPReply] = asyncio.ensure_future(self._handler(request))
        watch = asyncio.create_task(reader.read(65536), name="loopback-http-watch")
        try:
            await asyncio.wait((handler, watch), return_when=asyncio.FIRST_COMPLETED)
            if not handler.done():
                if watch.exception() is not None or not watch.result():
                    return None  # reset or end of stream: the client is gone
                await asyncio.wait((handler,))  # it sent its next request early: keep waiting
        finally:
            for task in (handler, watch):
                task.cancel()
            await asyncio.gather(handler, watch, return_exceptions=True)
            if watch.done() and not watch.cancelled() and watch.exception() is None:
                conn.receive_data(watch.result())  # what the client sent meanwhile, EOF too
        try:
            return handler.result()
        except Exception as exc:  # a bug in a test handler: answer 500, keep serving
            logger.exception("loopback handler failed: %s %s", request.method, request.path)
            return HTTPReply(500, {"error": {"message": repr(exc)}})

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
