"""The text providers' loopback HTTP server counts every client that hangs up before its reply:
on a waiting request, and before a whole request arrived."""

from __future__ import annotations

import asyncio

from providers._http_loopback import HTTPReply, HTTPRequest, LoopbackHTTPServer


async def _never(request: HTTPRequest) -> HTTPReply:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def _hang_up(server: LoopbackHTTPServer, data: bytes) -> None:
    _, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(data)
    await writer.drain()
    writer.close()
    await writer.wait_closed()


async def test_a_client_gone_before_its_request_arrived_is_a_hangup_not_a_dropped_request() -> None:
    async with LoopbackHTTPServer(_never) as server:
        await _hang_up(server, b"")  # connected, then gave up
        await _hang_up(server, b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-len")  # cut
        assert await server.wait_hangups(2) == 2
        assert server.dropped == []


async def test_a_client_gone_while_its_request_waits_is_both() -> None:
    async with LoopbackHTTPServer(_never) as server:
        head = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n"
        await _hang_up(server, head + b"{}")
        (dropped,) = await server.wait_dropped(1)
        assert (dropped.method, dropped.path, dropped.body) == ("POST", "/v1/messages", b"{}")
        assert server.hangups == 1
