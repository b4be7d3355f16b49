"""A third websocket provider built on ``providers.realtime_ws`` alone, against its own
loopback server (real sockets, no mocks): the base stands without OpenAI or Gemini.

The "toy" protocol is JSON objects with a ``type``. The client opens with ``hello`` and may
speak once the server answers ``welcome``; the server calls tools (``call``) and
acknowledges each result (``taken``); ``bye`` announces the end of a connection. A result
whose call came on a connection since lost goes to the next one as a ``note``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from http import HTTPStatus
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection as WsConnection
from websockets.http11 import Request, Response

import providers.realtime_ws as base
from providers.base import (
    PCM16,
    ProviderCapabilities,
    ProviderErrorEvent,
    ProviderEvent,
    SessionConfig,
    ToolCallEvent,
    TranscriptionEvent,
)
from providers.realtime_ws import (
    CallLedger,
    Drop,
    FunctionCall,
    InFlight,
    LoopbackConnection,
    LoopbackServer,
    OpenCall,
    ProtocolQueues,
    ReconnectPolicy,
    UserSays,
    WebSocketProvider,
    WebSocketSession,
    encode_pcm16,
    parse_object,
    play,
)
from voice_hitl import ChannelClosedError, ProviderError

FAST = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0, open_timeout=5.0)
CONFIG = SessionConfig(instructions="Be brief.", session_id="toy-1")


# -- the provider: a sans-I/O protocol, a provider and a session ---------------------------


class ToyProtocol(ProtocolQueues):
    def __init__(self, config: SessionConfig) -> None:
        super().__init__()
        self.config = config
        self.connection = 0
        self.ready = False
        self.going = False
        self.taken: set[str] = set()
        self._calls = CallLedger()
        self._in_flight: InFlight[tuple[OpenCall, str]] = InFlight()
        self._later: list[tuple[OpenCall, str] | dict[str, Any]] = []

    def connection_made(self) -> None:
        self.connection += 1
        self.ready = self.going = False
        self._write_json({"type": "hello", "instructions": self.config.instructions})

    def connection_lost(self, reason: str, unsent: Sequence[str] = ()) -> None:
        self.ready = False
        self._outbox.clear()
        self._later[:0] = self._in_flight.lost()

    def receive(self, data: str | bytes) -> None:
        message = parse_object(data, "the toy server")
        if isinstance(message, str):
            error = ProviderError(message, code="malformed_server_event", recoverable=True)
            self._events.append(ProviderErrorEvent(error))
            return
        kind = message.get("type")
        if kind == "welcome":
            self.ready = True
            later, self._later = self._later, []
            for item in later:
                self._deliver(item)
        elif kind == "call":
            arguments = json.dumps(message.get("arguments", {}))
            call_id, name = str(message["call_id"]), str(message["name"])
            if self._calls.opened(call_id, name, arguments, self.connection):
                self._events.append(ToolCallEvent(call_id, name, arguments))
        elif kind == "taken" and self._in_flight.take(message["call_id"]) is not None:
            self.taken.add(str(message["call_id"]))
        elif kind == "transcript":
            self._events.append(TranscriptionEvent(message["role"], message["text"], final=True))
        elif kind == "bye":
            self.going = True

    def _deliver(self, item: tuple[OpenCall, str] | dict[str, Any]) -> None:
        if isinstance(item, dict):
            self._write_json(item)
            return
        call, output = item
        if call.connection == self.connection:
            self._write_json({"type": "result", "call_id": call.call_id, "output": output})
        else:
            text = f"[{call.name}({call.arguments}) returned] {output}"
            self._write_json({"type": "note", "call_id": call.call_id, "text": text})
        self._in_flight.wrote(call.call_id, item)

    def _queue(self, item: tuple[OpenCall, str] | dict[str, Any]) -> None:
        if self.ready:
            self._deliver(item)
        else:
            self._later.append(item)

    def submit_tool_result(self, call_id: str, output: str) -> None:
        self._queue((self._calls.take(call_id), output))

    def append_audio(self, frame: PCM16) -> bool:
        audio = encode_pcm16(frame, self.config.input_format.sample_rate, 16_000)
        if self.ready:
            self._write_json({"type": "audio", "pcm": audio})
        return self.ready

    def inject_context(self, text: str) -> None:
        self._queue({"type": "context", "text": text})

    def say(self, text: str) -> None:
        self._queue({"type": "say", "text": text})


class ToySession(WebSocketSession[ToyProtocol]):
    label = "toy session"

    def _ready(self) -> bool:
        return self.protocol.ready

    def _planned_close(self) -> bool:
        return self.protocol.going

    async def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> None:
        self._check_open("submit_tool_result")
        self.protocol.submit_tool_result(call_id, output)
        with contextlib.suppress(ProviderError):  # in flight: it goes again after a reconnect
            await self._flush()
        await self._until(lambda: call_id in self.protocol.taken)

    async def interrupt(self) -> None:
        self._check_open("interrupt")


class ToyProvider(WebSocketProvider):
    server_name = "the toy server"

    def __init__(self, url: str) -> None:
        headers = self.auth_headers("Authorization", "Bearer toy", None)
        super().__init__(url=url, headers=headers, reconnect=FAST)
        self.capabilities = ProviderCapabilities(tool_call_cancellation=False)

    async def connect(self, config: SessionConfig) -> ToySession:
        session = ToySession(self, config, ToyProtocol(config))
        await session._open()
        return session


# -- its loopback server -------------------------------------------------------------------


class ToyConnection(LoopbackConnection[str]):
    server: ToyServer

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await self._ws.send(json.dumps(message))

    async def _handle(self, text: str, arrived: float) -> bool:
        message = parse_object(text, "the toy client")
        if isinstance(message, str):
            self._reject(text)
            await self._ws.close(1007, "not a JSON object")
            return False
        await self._record(message, arrived)
        if message["type"] == "hello":
            await self.send({"type": "welcome"})
        elif message["type"] in ("result", "note") and self.server.acknowledge:
            await self.send({"type": "taken", "call_id": message["call_id"]})
        return True

    async def function_call(
        self, name: str, arguments: dict[str, Any] | str, *, call_id: str | None = None
    ) -> str:
        call_id = call_id or self._id("call")
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
        await self.send({"type": "call", "call_id": call_id, "name": name, "arguments": args})
        return call_id

    async def transcribe_user(self, text: str) -> None:
        await self.send({"type": "transcript", "role": "user", "text": text})

    async def expect(self, kind: str) -> dict[str, Any]:
        return await self._expect(lambda message: message.get("type") == kind)


class ToyServer(LoopbackServer[ToyConnection, str]):
    def __init__(self) -> None:
        super().__init__()
        self.acknowledge = True
        self.refuse = False

    def _connection(self, ws: WsConnection, number: int) -> ToyConnection:
        return ToyConnection(self, ws, number)

    def _process_request(self, ws: WsConnection, request: Request) -> Response | None:
        return ws.respond(HTTPStatus.UNAUTHORIZED, "no\n") if self.refuse else None


# -- the tests -----------------------------------------------------------------------------


class Rig:
    """A session, its server connection, and its events in a queue (the pump task is owned:
    it ends with the session's events and is awaited by ``close``)."""

    def __init__(self, server: ToyServer) -> None:
        self.server = server
        self.provider = ToyProvider(f"{server.address}/toy")
        self.events: asyncio.Queue[ProviderEvent | None] = asyncio.Queue()

    async def start(self) -> tuple[ToySession, ToyConnection]:
        self.session = await self.provider.connect(CONFIG)
        self.pump = asyncio.create_task(self._pump())
        return self.session, await self.server.next_connection()

    async def _pump(self) -> None:
        async for event in self.session.events():
            self.events.put_nowait(event)
        self.events.put_nowait(None)

    async def next(self, kind: type[Any]) -> Any:
        while True:
            event = await self.events.get()
            assert event is not None, f"the events ended before a {kind.__name__}"
            if isinstance(event, kind):
                return event

    async def close(self) -> None:
        await self.session.aclose()
        await self.pump


@pytest.fixture
async def server() -> AsyncIterator[ToyServer]:
    async with ToyServer() as srv:
        yield srv
    assert srv.invalid == []


async def test_a_third_provider_opens_calls_answers_and_closes(server: ToyServer) -> None:
    rig = Rig(server)
    frames: list[str] = []
    rig.provider.wire_taps.add(lambda frame: frames.append(frame.direction))
    session, conn = await rig.start()
    assert (await conn.expect("hello"))["instructions"] == "Be brief."
    assert conn.headers["Authorization"] == "Bearer toy"
    call_id, _ = await play(conn, [FunctionCall("lookup", {"q": "42"}), UserSays("hi there")])
    call = await rig.next(ToolCallEvent)
    assert (call.call_id, call.name, json.loads(call.arguments)) == (call_id, "lookup", {"q": "42"})
    assert (await rig.next(TranscriptionEvent)).text == "hi there"
    await session.submit_tool_result(call_id, "found", is_error=False)
    assert (await conn.expect("result"))["output"] == "found"
    with pytest.raises(ProviderError, match="already answered") as info:
        await session.submit_tool_result(call_id, "again", is_error=False)
    assert info.value.code == "unknown_call"
    await session.send_audio(np.zeros(160, dtype=np.int16))
    await session.say("Bye now.")
    await session.inject_context("[note] 7")
    assert (await conn.expect("audio"))["pcm"]
    assert (await conn.expect("say"))["text"] == "Bye now."
    assert (await conn.expect("context"))["text"] == "[note] 7"
    await conn.send_raw("{not json")
    assert (await rig.next(ProviderErrorEvent)).error.code == "malformed_server_event"
    assert frames[:2] == ["out", "in"]  # hello, welcome: the opening exchange
    await rig.close()
    await session.aclose()  # idempotent
    assert repr(session) == "ToySession('toy-1', closed)"
    with pytest.raises(ChannelClosedError, match="toy session is closed"):
        await session.say("too late")


async def test_a_result_in_flight_at_a_drop_reaches_the_next_connection(
    server: ToyServer,
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    server.acknowledge = False
    (call_id,) = await play(conn, [FunctionCall("lookup", '{"q": "7"}')])
    await rig.next(ToolCallEvent)
    submitting = asyncio.create_task(session.submit_tool_result(call_id, "late", is_error=False))
    await conn.expect("result")  # written, never acknowledged
    server.acknowledge = True
    await play(conn, [Drop()])
    lost = await rig.next(ProviderErrorEvent)
    assert lost.error.code == "connection_lost" and lost.error.recoverable
    again = await server.next_connection()
    note = await again.expect("note")
    assert note["text"] == '[lookup({"q": "7"}) returned] late'
    await submitting
    assert session.connections == 2
    await rig.close()


async def test_a_planned_close_reconnects_at_once_and_a_refusal_ends_the_session(
    server: ToyServer,
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.send({"type": "bye"})
    await conn.closed.wait()  # the client closed it
    again = await server.next_connection()
    await again.expect("hello")
    (call_id,) = await play(again, [FunctionCall("lookup")])
    await rig.next(ToolCallEvent)
    server.refuse = True
    await again.drop()
    await rig.next(ProviderErrorEvent)  # lost; reconnecting
    final = await rig.next(ProviderErrorEvent)
    assert final.error.code == "connection_failed" and not final.error.recoverable
    assert "the toy server refused the handshake (HTTP 401)" in str(final.error)
    assert await rig.events.get() is None  # the events end
    await rig.pump
    with pytest.raises(ProviderError, match="gave up reconnecting") as info:
        await session.submit_tool_result(call_id, "no one to tell", is_error=False)
    assert info.value.code == "connection_failed"
    await session.aclose()


def test_the_exports_show_the_public_module_and_websockets_loads_on_demand() -> None:
    for name in base.__all__:
        obj = getattr(base, name)
        if isinstance(obj, type) or callable(obj):
            assert obj.__module__ == "providers.realtime_ws", name
    probe = "import sys, providers.realtime_ws; print('websockets' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"
