"""A loopback server that speaks the OpenAI Realtime protocol (GA) for tests.

:class:`RealtimeTestServer` listens on 127.0.0.1 (a free port by default), answers the
handshake with ``session.created`` and validates every client event against the GA shapes
(an invalid one is recorded and answered with an ``error`` event, as the real server does).
A test drives each accepted :class:`ServerConnection`: emit a function call, expect its output,
speak a transcript, drop the connection, send an error, or play a script of such steps.

It mimics the server's bookkeeping a client depends on: ``session.updated`` after
``session.update``, ``conversation.item.added``/``done`` after ``conversation.item.create``,
one active response at a time (``conversation_already_has_active_response``), and
``response.cancel`` ending the active response as ``cancelled``. It generates no speech.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, serve
from websockets.asyncio.server import ServerConnection as _WsConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from ._client_events import ClientEventError, validate_client_event

__all__ = ["InvalidClientEvent", "RealtimeTestServer", "ServerConnection"]

EventPredicate = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class InvalidClientEvent:
    """A client message the server rejected: the raw text, the error code and message."""

    raw: str
    code: str
    message: str


class ServerConnection:
    """One client connection to the test server, driven by a test.

    ``received`` holds the valid client events in arrival order and ``received_at`` the
    ``time.perf_counter()`` at which each frame arrived (before validation).
    """

    def __init__(self, server: RealtimeTestServer, ws: _WsConnection, number: int) -> None:
        self.server = server
        self.number = number
        self.path = ws.request.path if ws.request is not None else ""
        self.headers = dict(ws.request.headers.raw_items()) if ws.request is not None else {}
        self.session: dict[str, Any] = {"type": "realtime", "model": "gpt-realtime", "tools": []}
        self.received: list[dict[str, Any]] = []
        self.received_at: list[float] = []
        self.invalid: list[InvalidClientEvent] = []
        self.orphan_outputs: list[str] = []
        self.active_response: str | None = None
        self.closed = asyncio.Event()
        self._ws = ws
        self._ids = itertools.count(1)
        self._consumed: set[int] = set()
        self._changed = asyncio.Condition()
        self._calls: set[str] = set()
        self._announced = False
        self._response_metadata: dict[str, str] | None = None

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{self.number}_{next(self._ids)}"

    # -- sending -----------------------------------------------------------------------------

    async def send(self, event: dict[str, Any]) -> None:
        """Send one server event (an ``event_id`` is added when missing).

        Cancellation: safe; the event is sent whole or not at all.
        """
        event = {"event_id": self._id("event"), **event}
        await self._ws.send(json.dumps(event))

    async def send_raw(self, text: str) -> None:
        """Send a text frame as is (e.g. malformed JSON).

        Cancellation: safe.
        """
        await self._ws.send(text)

    async def error(
        self,
        message: str,
        *,
        code: str | None = None,
        type: str = "invalid_request_error",
        event_id: str | None = None,
    ) -> None:
        """Send an ``error`` event; ``event_id`` names the client event that caused it.

        Cancellation: safe.
        """
        detail = {"type": type, "code": code, "message": message, "param": None}
        await self.send({"type": "error", "error": {**detail, "event_id": event_id}})

    async def drop(self) -> None:
        """Drop the connection abruptly (no closing handshake), as a network failure would.

        Cancellation: safe.
        """
        self._ws.transport.abort()
        await self.closed.wait()

    # -- responses ---------------------------------------------------------------------------

    async def begin_response(self, *, announce: bool = True) -> str:
        """Start a response (as server VAD would). With ``announce=False`` the response is
        active but ``response.created`` is held back until :meth:`end_response`, so a client's
        ``response.create`` meets ``conversation_already_has_active_response``.

        Cancellation: safe.
        """
        if self.active_response is not None:
            raise RuntimeError(f"response {self.active_response} is still active")
        self.active_response = self._id("resp")
        self._announced = False
        if announce:
            await self._announce()
        return self.active_response

    async def _announce(self) -> None:
        if self._announced or self.active_response is None:
            return
        self._announced = True
        response: dict[str, Any] = {"id": self.active_response, "object": "realtime.response"}
        response |= {"status": "in_progress", "output": [], "metadata": self._response_metadata}
        await self.send({"type": "response.created", "response": response})

    async def end_response(
        self,
        output: list[dict[str, Any]] | None = None,
        *,
        status: str = "completed",
        reason: str | None = None,
    ) -> None:
        """Finish the active response with ``response.done``.

        Cancellation: safe.
        """
        if self.active_response is None:
            raise RuntimeError("no active response")
        await self._announce()
        details = None if reason is None else {"type": status, "reason": reason}
        response: dict[str, Any] = {"id": self.active_response, "status": status}
        response |= {"object": "realtime.response", "status_details": details}
        response |= {"output": output or [], "usage": None}
        response |= {"metadata": self._response_metadata}
        self.active_response = None
        self._response_metadata = None
        await self.send({"type": "response.done", "response": response})

    async def function_call(
        self,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        call_id: str | None = None,
        finish: bool = True,
    ) -> str:
        """Play a response in which the model calls ``name``; returns the call id.

        Sends the GA sequence: ``response.created``, ``response.output_item.added``,
        ``response.function_call_arguments.delta``/``.done``, ``response.output_item.done``
        and (with ``finish``) ``response.done``.

        Cancellation: the response may be left half sent.
        """
        call_id = call_id or self._id("call")
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        if self.active_response is None:
            await self.begin_response()
        await self._announce()
        rid, item_id = self.active_response, self._id("item")
        self._calls.add(call_id)
        item = {"id": item_id, "object": "realtime.item", "type": "function_call"}
        item |= {"status": "in_progress", "call_id": call_id, "name": name, "arguments": ""}
        where = {"response_id": rid, "output_index": 0}
        await self.send({"type": "response.output_item.added", **where, "item": item})
        ids = {**where, "item_id": item_id, "call_id": call_id}
        await self.send({"type": "response.function_call_arguments.delta", **ids, "delta": args})
        done = {"type": "response.function_call_arguments.done", **ids, "name": name}
        await self.send({**done, "arguments": args})
        item = {**item, "status": "completed", "arguments": args}
        await self.send({"type": "response.output_item.done", **where, "item": item})
        if finish:
            await self.end_response([item])
        return call_id

    async def speak(self, text: str, *, samples: int = 480, finish: bool = True) -> None:
        """Play a spoken response: audio deltas of silence and the transcript ``text``.

        Cancellation: the response may be left half sent.
        """
        if self.active_response is None:
            await self.begin_response()
        await self._announce()
        ids: dict[str, Any] = {"response_id": self.active_response, "item_id": self._id("item")}
        ids |= {"output_index": 0, "content_index": 0}
        audio = base64.b64encode(bytes(2 * samples)).decode("ascii")
        await self.send({"type": "response.output_audio.delta", **ids, "delta": audio})
        half = len(text) // 2
        for delta in (text[:half], text[half:]):
            await self.send(
                {"type": "response.output_audio_transcript.delta", **ids, "delta": delta}
            )
        await self.send({"type": "response.output_audio.done", **ids})
        await self.send(
            {"type": "response.output_audio_transcript.done", **ids, "transcript": text}
        )
        if finish:
            await self.end_response()

    async def transcribe_user(self, text: str) -> None:
        """Send ``conversation.item.input_audio_transcription.completed`` for ``text``.

        Cancellation: safe.
        """
        event: dict[str, Any] = {"type": "conversation.item.input_audio_transcription.completed"}
        event |= {"item_id": self._id("item"), "content_index": 0, "transcript": text}
        await self.send({**event, "usage": {"type": "duration", "seconds": 1.0}})

    # -- expecting ---------------------------------------------------------------------------

    def _find(self, type: str, predicate: EventPredicate | None) -> int | None:
        for index, event in enumerate(self.received):
            if index in self._consumed or event.get("type") != type:
                continue
            if predicate is None or predicate(event):
                return index
        return None

    async def expect(self, type: str, predicate: EventPredicate | None = None) -> dict[str, Any]:
        """Wait for the next client event of ``type`` (matching ``predicate``) not yet
        returned by an earlier ``expect``.

        Cancellation: safe.
        """
        async with self._changed:
            await self._changed.wait_for(lambda: self._find(type, predicate) is not None)
            index = self._find(type, predicate)
            assert index is not None
            self._consumed.add(index)
            return self.received[index]

    async def expect_function_call_output(self, call_id: str) -> str:
        """Wait for the ``function_call_output`` of ``call_id``; returns its ``output`` text.

        Cancellation: safe.
        """

        def matches(event: dict[str, Any]) -> bool:
            item = event.get("item", {})
            return bool(
                item.get("type") == "function_call_output" and item.get("call_id") == call_id
            )

        event = await self.expect("conversation.item.create", matches)
        return str(event["item"]["output"])

    def count(self, type: str) -> int:
        """How many valid client events of ``type`` arrived."""
        return sum(1 for event in self.received if event.get("type") == type)

    # -- serving -----------------------------------------------------------------------------

    async def _serve(self) -> None:
        try:
            session = {"id": self._id("sess"), "object": "realtime.session", **self.session}
            await self.send({"type": "session.created", "session": session})
            async for message in self._ws:
                text = message if isinstance(message, str) else message.decode("utf-8", "replace")
                await self._handle(text)
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()

    async def _handle(self, text: str) -> None:
        arrived = time.perf_counter()
        try:
            data = json.loads(text)
            validate_client_event(data)
        except (ValueError, ClientEventError) as exc:
            code = exc.code if isinstance(exc, ClientEventError) else "invalid_json"
            bad = InvalidClientEvent(text, code, str(exc))
            self.invalid.append(bad)
            self.server.invalid.append(bad)
            known = isinstance(exc, ClientEventError) and isinstance(data, dict)
            origin = data.get("event_id") if known else None
            await self.error(str(exc), code=code, event_id=origin)
            return
        async with self._changed:
            self.received.append(data)
            self.received_at.append(arrived)
            self._changed.notify_all()
        await self._react(data)

    async def _react(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "session.update":
            self.session |= event["session"]
            await self.send({"type": "session.updated", "session": self.session})
        elif kind == "conversation.item.create":
            item = {"id": self._id("item"), "object": "realtime.item", **event["item"]}
            if item["type"] == "function_call_output" and item["call_id"] not in self._calls:
                self.orphan_outputs.append(item["call_id"])
            if self.server.acknowledge_items:
                for stage in ("conversation.item.added", "conversation.item.done"):
                    await self.send({"type": stage, "previous_item_id": None, "item": item})
        elif kind == "response.create":
            if self.active_response is not None:
                await self.error(
                    "Conversation already has an active response in progress: "
                    f"{self.active_response}. Wait until the response is finished before "
                    "creating a new one.",
                    code="conversation_already_has_active_response",
                    event_id=event.get("event_id"),
                )
            elif self.server.auto_respond:
                self._response_metadata = (event.get("response") or {}).get("metadata")
                await self.begin_response()
                await self.end_response()
        elif kind == "response.cancel":
            if self.active_response is None:
                await self.error(
                    "Cancellation failed: no active response found",
                    code="response_cancel_not_active",
                    event_id=event.get("event_id"),
                )
            else:
                await self.end_response(status="cancelled", reason="client_cancelled")


class RealtimeTestServer:
    """A Realtime protocol server on 127.0.0.1 for tests; use it with ``async with``.

    Args:
        api_key: When given, the handshake must carry ``Authorization: Bearer <api_key>``
            or ``api-key: <api_key>`` (otherwise HTTP 401).
        auto_respond: Answer a ``response.create`` with an empty completed response.
        port: The port to listen on (0: a free one).
    """

    def __init__(
        self, *, api_key: str | None = None, auto_respond: bool = True, port: int = 0
    ) -> None:
        self.api_key = api_key
        self.auto_respond = auto_respond
        self.acknowledge_items = True
        """Answer ``conversation.item.create`` with ``conversation.item.added``/``done``; a
        test sets it False to hold a result in flight (e.g. to drop the connection then)."""
        self.connections: list[ServerConnection] = []
        self.invalid: list[InvalidClientEvent] = []
        self.rejected_handshakes = 0
        self._port = port
        self._server: Server | None = None
        self._accepted: asyncio.Queue[ServerConnection] = asyncio.Queue()

    @property
    def url(self) -> str:
        """The server's ``ws://`` URL (the path a client would use for OpenAI)."""
        if self._server is None:
            raise RuntimeError("the test server is not started")
        port = self._server.sockets[0].getsockname()[1]
        return f"ws://127.0.0.1:{port}/v1/realtime"

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
            process_request=self._check_auth,
            compression=None,
            max_size=None,
        )

    def _check_auth(self, ws: _WsConnection, request: Request) -> Response | None:
        if self.api_key is None:
            return None
        headers = request.headers
        if headers.get("Authorization") == f"Bearer {self.api_key}":
            return None
        if headers.get("api-key") == self.api_key:
            return None
        self.rejected_handshakes += 1
        return ws.respond(HTTPStatus.UNAUTHORIZED, "invalid API key\n")

    async def _handler(self, ws: _WsConnection) -> None:
        connection = ServerConnection(self, ws, len(self.connections) + 1)
        self.connections.append(connection)
        self._accepted.put_nowait(connection)
        await connection._serve()

    async def next_connection(self) -> ServerConnection:
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

    async def __aenter__(self) -> RealtimeTestServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
