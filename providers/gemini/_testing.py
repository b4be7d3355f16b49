"""A loopback server that speaks the Gemini Live protocol for tests.

:class:`LiveTestServer` listens on 127.0.0.1 (a free port by default). Each connection must
open with ``setup``; the server answers ``setupComplete`` (and a resumption handle when asked).
Every client message is checked against the ``google-genai`` SDK's ``LiveClientMessage``; an
invalid one is recorded and the socket is closed with code 1007, as the real server does with
an invalid request; a wrong API key closes it with 1008 after ``setup``. A test drives each
accepted :class:`LiveServerConnection`: emit a tool call, expect its response, cancel it, speak,
transcribe the caller, interrupt, send ``goAway``, drop or close the connection. With
``auto_respond`` the server ends a model turn after each ``toolResponse`` and each turn the
client completes, as the model's reply would (it generates no speech).

Messages go out as binary frames of JSON by default, as the real server sends them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection as _WsConnection

from providers.realtime_ws import LoopbackConnection, LoopbackServer

from ._sdk_types import MessageError, validate_client_message
from ._wire import response_text

__all__ = ["InvalidClientMessage", "LiveServerConnection", "LiveTestServer", "ToolResponse"]

PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

MessagePredicate = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class InvalidClientMessage:
    """A client message the server rejected: the raw text and why."""

    raw: str
    message: str


@dataclass(frozen=True, slots=True)
class ToolResponse:
    """One ``functionResponses`` entry as the model reads it."""

    call_id: str
    name: str
    text: str
    is_error: bool


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def _camel_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {_camel(key): value for key, value in data.items()}


class LiveServerConnection(LoopbackConnection[InvalidClientMessage]):
    """One client connection to the test server, driven by a test.

    ``received`` holds the valid client messages (top-level keys in camelCase) in arrival
    order, ``received_at`` the ``time.perf_counter()`` of each frame's arrival, and ``sent``
    every server message written.
    """

    def __init__(self, server: LiveTestServer, ws: _WsConnection, number: int) -> None:
        super().__init__(server, ws, number)
        self.server: LiveTestServer = server
        self.setup: dict[str, Any] = {}
        self.resumed_handle: str | None = None
        self._calls: dict[str, str] = {}
        self._resumable = False

    # -- sending -----------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Send one server message (a binary frame of JSON unless the server says text).

        Cancellation: safe; the message is sent whole or not at all.
        """
        self.sent.append(message)
        text = json.dumps(message)
        await self._ws.send(text.encode() if self.server.binary else text)

    async def function_call(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        call_id: str | None = None,
    ) -> str:
        """The model calls ``name`` (one ``toolCall``) with ``arguments`` (an object, or its
        JSON text); returns the call id.

        Cancellation: safe.
        """
        call_id = call_id or self._id("fc")
        self._calls[call_id] = name
        args = json.loads(arguments) if isinstance(arguments, str) else arguments or {}
        call = {"id": call_id, "name": name, "args": args}
        await self.send({"toolCall": {"functionCalls": [call]}})
        return call_id

    async def cancel(self, *call_ids: str) -> None:
        """Withdraw calls (``toolCallCancellation``), as when the caller interrupts.

        Cancellation: safe.
        """
        await self.send({"toolCallCancellation": {"ids": list(call_ids)}})

    async def speak(self, text: str, *, samples: int = 480, finish: bool = True) -> None:
        """The model speaks: a 24 kHz audio chunk of silence, the transcript of ``text`` in
        two chunks, then (with ``finish``) ``generationComplete`` and ``turnComplete``.

        Cancellation: the turn may be left half sent.
        """
        audio = {
            "data": base64.b64encode(bytes(2 * samples)).decode(),
            "mimeType": "audio/pcm;rate=24000",
        }
        await self.send({"serverContent": {"modelTurn": {"parts": [{"inlineData": audio}]}}})
        half = len(text) // 2
        for chunk in (text[:half], text[half:]):
            await self.send({"serverContent": {"outputTranscription": {"text": chunk}}})
        if finish:
            await self.finish_turn()

    async def finish_turn(self) -> None:
        """End the model's turn (``generationComplete``, ``turnComplete``, a new handle).

        Cancellation: safe.
        """
        await self.send({"serverContent": {"generationComplete": True}})
        await self.send({"serverContent": {"turnComplete": True}})
        await self._resumption_update()

    async def transcribe_user(self, text: str) -> None:
        """The caller said ``text`` (a finished ``inputTranscription``).

        Cancellation: safe.
        """
        await self.send({"serverContent": {"inputTranscription": {"text": text, "finished": True}}})

    async def interrupt(self) -> None:
        """The caller spoke over the model (``interrupted``).

        Cancellation: safe.
        """
        await self.send({"serverContent": {"interrupted": True}})

    async def go_away(self, time_left: str = "10s") -> None:
        """Tell the client the connection will end (``goAway``).

        Cancellation: safe.
        """
        await self.send({"goAway": {"timeLeft": time_left}})

    async def _resumption_update(self) -> None:
        if self._resumable:
            handle = self._id("handle")
            self.server.handles.add(handle)
            await self.send({"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}})

    # -- expecting ---------------------------------------------------------------------------

    async def expect(self, kind: str, predicate: MessagePredicate | None = None) -> dict[str, Any]:
        """Wait for the next client message of ``kind`` (e.g. ``"clientContent"``) whose body
        matches ``predicate``, not yet returned by an earlier ``expect``; returns the body.

        Cancellation: safe.
        """
        message = await self._expect(
            lambda m: kind in m and (predicate is None or predicate(m[kind]))
        )
        body: dict[str, Any] = message[kind]
        return body

    async def expect_tool_response(self, call_id: str) -> ToolResponse:
        """Wait for the ``toolResponse`` that answers ``call_id``.

        Cancellation: safe.
        """

        def answers(body: dict[str, Any]) -> bool:
            entries = body.get("functionResponses") or body.get("function_responses") or []
            return any(entry.get("id") == call_id for entry in entries)

        body = await self.expect("toolResponse", answers)
        entries = body.get("functionResponses") or body.get("function_responses") or []
        entry = next(e for e in entries if e.get("id") == call_id)
        text, is_error = response_text(entry.get("response") or {})
        return ToolResponse(call_id, str(entry.get("name")), text, is_error)

    async def expect_turn(self, startswith: str = "") -> tuple[str, bool]:
        """Wait for a ``clientContent`` whose first text starts with ``startswith``; returns
        (its text, ``turnComplete``).

        Cancellation: safe.
        """

        def text_of(body: dict[str, Any]) -> str:
            turns = body.get("turns") or []
            parts = turns[0].get("parts") if turns else []
            return str(parts[0].get("text", "")) if parts else ""

        body = await self.expect("clientContent", lambda b: text_of(b).startswith(startswith))
        complete = body.get("turnComplete", body.get("turn_complete", False))
        return text_of(body), bool(complete)

    def count(self, kind: str) -> int:
        """How many valid client messages of ``kind`` arrived."""
        return self._count(lambda message: kind in message)

    # -- serving -----------------------------------------------------------------------------

    async def _refuse(self, text: str, why: str) -> bool:
        self._reject(InvalidClientMessage(text, why))
        await self._ws.close(1007, why[:120])
        return False

    async def _handle(self, text: str, arrived: float) -> bool:
        try:
            data = json.loads(text)
            kind = validate_client_message(data)
        except (ValueError, MessageError) as exc:
            return await self._refuse(text, f"Request contains an invalid argument: {exc}")
        if not self.received and kind != "setup":
            return await self._refuse(text, "the first message must be setup")
        if self.received and kind == "setup":
            return await self._refuse(text, "setup was already sent")
        # setup is answered before it is recorded: once a test sees it, setupComplete (and
        # the first resumption handle) are on the wire ahead of anything the test sends.
        accepted = await self._on_setup(_camel_keys(data["setup"])) if kind == "setup" else True
        await self._record(_camel_keys(data), arrived)
        if kind == "setup":
            return accepted
        if self.server.auto_respond and self._asks_reply(kind, next(iter(data.values()))):
            await self.finish_turn()
        return True

    @staticmethod
    def _asks_reply(kind: str, body: dict[str, Any]) -> bool:
        if kind == "toolResponse":
            return True
        return kind == "clientContent" and bool(body.get("turnComplete", body.get("turn_complete")))

    async def _on_setup(self, setup: dict[str, Any]) -> bool:
        self.setup = setup
        if not self.server._authorised(self.path, self.headers):
            self.server.rejected_keys += 1
            await self._ws.close(1008, "API key not valid. Please pass a valid API key.")
            return False
        resumption = setup.get("sessionResumption")
        if resumption is not None:
            self._resumable = True
            handle = resumption.get("handle")
            if handle is not None:
                if not self.server.accept_handles or handle not in self.server.handles:
                    await self._ws.close(1007, "Invalid session resumption handle")
                    return False
                self.resumed_handle = handle
        await self.send({"setupComplete": {}})
        await self._resumption_update()
        return True


class LiveTestServer(LoopbackServer[LiveServerConnection, InvalidClientMessage]):
    """A Live protocol server on 127.0.0.1 for tests; use it with ``async with``.

    Args:
        api_key: When given, ``setup`` is refused (close 1008) unless the handshake carried
            ``x-goog-api-key: <api_key>`` or ``?key=<api_key>``.
        binary: Send server messages as binary frames (the real server does); else text.
        auto_respond: End a model turn after each ``toolResponse`` and completed client turn.
        port: The port to listen on (0: a free one).

    Set ``accept_handles`` to False to make every resumption handle expired (close 1007).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        binary: bool = True,
        auto_respond: bool = False,
        port: int = 0,
    ) -> None:
        super().__init__(port=port)
        self.api_key = api_key
        self.binary = binary
        self.auto_respond = auto_respond
        self.handles: set[str] = set()
        self.accept_handles = True
        self.rejected_keys = 0

    @property
    def url(self) -> str:
        """The server's ``ws://`` URL (with the Gemini API's path)."""
        return f"{self.address}{PATH}"

    def _authorised(self, path: str, headers: dict[str, str]) -> bool:
        if self.api_key is None:
            return True
        lowered = {key.lower(): value for key, value in headers.items()}
        if lowered.get("x-goog-api-key") == self.api_key:
            return True
        return parse_qs(urlsplit(path).query).get("key") == [self.api_key]

    def _connection(self, ws: _WsConnection, number: int) -> LiveServerConnection:
        return LiveServerConnection(self, ws, number)
