"""One client's connection to the Realtime test server, as a test drives it.

The model's side of the conversation (function calls, speech, the caller's transcripts and
SIP keys, errors, drops) is played through :class:`ServerConnection`; what the client sent
is awaited with :meth:`ServerConnection.expect`. Every event sent is checked against the
``openai`` SDK's types, every client event on arrival; ``_server_reactions`` answers them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import ServerConnection as _WsConnection

from providers.realtime_ws import LoopbackConnection

from ._conversation import Conversation
from ._sdk_types import (
    ClientEventError,
    server_event_models,
    validate_client_event,
    validate_server_event,
)
from ._server_responses import Response as ModelResponse

if TYPE_CHECKING:
    from ._testing import RealtimeTestServer

__all__ = ["InvalidClientEvent", "ServerConnection"]

EventPredicate = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True, slots=True)
class InvalidClientEvent:
    """A client message the server rejected: the raw text, the error code and message."""

    raw: str
    code: str
    message: str


class ServerConnection(LoopbackConnection[InvalidClientEvent]):
    """One client connection to the test server, driven by a test.

    ``received`` holds the valid client events in arrival order and ``received_at`` the
    ``time.perf_counter()`` at which each frame arrived (before validation); ``sent`` holds
    every event the server sent (``send_raw`` frames aside). ``sip`` is true when the client
    joined a SIP call (a ``call_id`` query parameter).
    """

    def __init__(self, server: RealtimeTestServer, ws: _WsConnection, number: int) -> None:
        super().__init__(server, ws, number)
        self.server: RealtimeTestServer = server
        self.sip = "call_id=" in self.path
        self.session: dict[str, Any] = {"type": "realtime", "model": "gpt-realtime", "tools": []}
        self.conversation = Conversation(self._id)
        self.response: ModelResponse | None = None
        self.last_response: str | None = None
        self.input_audio_bytes = 0
        """Bytes appended to the input audio buffer since it was last committed or cleared."""
        self.orphan_outputs: list[str] = []
        self.calls: set[str] = set()
        """Call ids of the function calls in this conversation (the model's or a client's)."""

    @property
    def active_response(self) -> str | None:
        """The id of the response in progress, if any."""
        return None if self.response is None else self.response.id

    # -- sending -----------------------------------------------------------------------------

    async def send(self, event: dict[str, Any], *, check: bool = True) -> None:
        """Send one server event; an ``event_id`` is added where the SDK's type has one.

        Raises:
            ServerEventError: ``check`` (and the server's ``check_sent``) is on and the event
                does not validate against the SDK's types; nothing is sent.

        Cancellation: safe; the event is sent whole or not at all.
        """
        model = server_event_models().get(str(event.get("type")))
        if "event_id" not in event and (model is None or "event_id" in model.model_fields):
            event = {"event_id": self._id("event"), **event}
        if check and self.server.check_sent:
            validate_server_event(event)
        self.sent.append(event)
        await self._ws.send(json.dumps(event))

    async def send_all(self, events: list[dict[str, Any]]) -> None:
        """Send events in order.

        Cancellation: the events before the cancellation are sent.
        """
        for event in events:
            await self.send(event)

    async def error(
        self,
        message: str,
        *,
        code: str | None = None,
        type: str = "invalid_request_error",
        event_id: str | None = None,
        param: str | None = None,
    ) -> None:
        """Send an ``error`` event; ``event_id`` names the client event that caused it.

        Cancellation: safe.
        """
        detail = {"type": type, "code": code, "message": message, "param": param}
        await self.send({"type": "error", "error": {**detail, "event_id": event_id}})

    # -- responses ---------------------------------------------------------------------------

    async def begin_response(
        self,
        *,
        announce: bool = True,
        metadata: dict[str, str] | None = None,
        out_of_band: bool = False,
        modality: str | None = None,
    ) -> str:
        """Start a response (as server VAD would). With ``announce=False`` the response is
        active but ``response.created`` is held back until its first output (or
        :meth:`end_response`), so a client's ``response.create`` meets
        ``conversation_already_has_active_response``.

        Cancellation: safe.
        """
        if self.response is not None:
            raise RuntimeError(f"response {self.response.id} is still active")
        modalities = self.session.get("output_modalities") or ["audio"]
        self.response = ModelResponse(
            self._id("resp"),
            None if out_of_band else self.conversation,
            self._id,
            modality=modality or modalities[0],
            metadata=metadata,
            voice=((self.session.get("audio") or {}).get("output") or {}).get("voice"),
        )
        if announce:
            await self._announce()
        return self.response.id

    async def _announce(self) -> ModelResponse:
        if self.response is None:
            await self.begin_response()
        assert self.response is not None
        if not self.response.announced:
            await self.send(self.response.created())
        return self.response

    async def end_response(
        self,
        output: list[dict[str, Any]] | None = None,
        *,
        status: str = "completed",
        reason: str | None = None,
        incomplete: Collection[str] = (),
    ) -> None:
        """Finish the active response with ``response.done``. Its output is the items it
        played (those still in progress, or named by id or call id in ``incomplete``, end
        ``incomplete``) unless ``output`` replaces them.

        Cancellation: safe.
        """
        if self.response is None:
            raise RuntimeError("no active response")
        response = await self._announce()
        self.response = None
        self.last_response = response.id
        await self.send(response.done(status, reason, output=output, incomplete=incomplete))

    async def function_call(
        self,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        call_id: str | None = None,
        finish: bool = True,
    ) -> str:
        """Play the model calling ``name`` (in the active response, or a new one); returns
        the call id. With ``finish`` the response then ends.

        Cancellation: the response may be left half sent.
        """
        response = await self._announce()
        call_id, events = response.function_call(name, arguments, call_id)
        self.calls.add(call_id)
        await self.send_all(events)
        if finish:
            await self.end_response()
        return call_id

    async def speak(self, text: str, *, samples: int = 480, finish: bool = True) -> str:
        """Play the model saying ``text`` (silent audio deltas and the transcript; text
        deltas when the session's output modality is text); returns the item id.

        Cancellation: the response may be left half sent.
        """
        response = await self._announce()
        item_id, events = response.message(text, samples)
        await self.send_all(events)
        if finish:
            await self.end_response()
        return item_id

    async def transcribe_user(self, text: str, *, speech: bool = False) -> str:
        """The caller said ``text``: a user audio item joins the conversation and its
        transcription arrives (delta, then ``completed``); returns the item id. With
        ``speech``, server VAD's ``speech_started``/``speech_stopped`` and
        ``input_audio_buffer.committed`` come first.

        Cancellation: the events before the cancellation are sent.
        """
        item = self.conversation.stored(
            {"type": "message", "role": "user", "content": [{"type": "input_audio"}]}
        )
        item_id = str(item["id"])
        events: list[dict[str, Any]] = []
        if speech:
            started = {"type": "input_audio_buffer.speech_started", "item_id": item_id}
            events.append({**started, "audio_start_ms": 0})
            stopped = {"type": "input_audio_buffer.speech_stopped", "item_id": item_id}
            events.append({**stopped, "audio_end_ms": 1000})
        previous = self.conversation.insert(item)
        if speech:
            committed = {"type": "input_audio_buffer.committed", "item_id": item_id}
            events.append({**committed, "previous_item_id": previous})
        where = {"previous_item_id": previous, "item": dict(item)}
        events += [{"type": "conversation.item.added", **where}]
        events += [{"type": "conversation.item.done", **where}]
        ids = {"item_id": item_id, "content_index": 0}
        delta = {"type": "conversation.item.input_audio_transcription.delta", **ids}
        events.append({**delta, "delta": text})
        completed = {"type": "conversation.item.input_audio_transcription.completed", **ids}
        usage = {"type": "duration", "seconds": 1.0}
        events.append({**completed, "transcript": text, "usage": usage})
        await self.send_all(events)
        return item_id

    async def dtmf(self, keys: str) -> None:
        """The caller on a SIP call pressed ``keys``: one
        ``input_audio_buffer.dtmf_event_received`` per key.

        Cancellation: the keys before the cancellation are sent.
        """
        for key in keys:
            event = {"type": "input_audio_buffer.dtmf_event_received", "event": key}
            await self.send({**event, "received_at": int(time.time())})

    # -- expecting ---------------------------------------------------------------------------

    async def expect(self, type: str, predicate: EventPredicate | None = None) -> dict[str, Any]:
        """Wait for the next client event of ``type`` (matching ``predicate``) not yet
        returned by an earlier ``expect``.

        Cancellation: safe.
        """
        return await self._expect(
            lambda event: event.get("type") == type and (predicate is None or predicate(event))
        )

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
        return self._count(lambda event: event.get("type") == type)

    # -- serving -----------------------------------------------------------------------------

    async def _opened(self) -> None:
        await self.send({"type": "session.created", "session": dict(self.session)})

    async def _handle(self, text: str, arrived: float) -> bool:
        from ._server_reactions import react

        data = await self._accept(text, arrived)
        if data is not None:
            await react(self, data)
        return True

    async def _accept(self, text: str, arrived: float) -> dict[str, Any] | None:
        try:
            data = json.loads(text)
            validate_client_event(data)
        except (ValueError, ClientEventError) as exc:
            code = exc.code if isinstance(exc, ClientEventError) else "invalid_json"
            param = exc.param if isinstance(exc, ClientEventError) else None
            self._reject(InvalidClientEvent(text, code, str(exc)))
            known = isinstance(exc, ClientEventError) and isinstance(data, dict)
            origin = data.get("event_id") if known else None
            await self.error(str(exc), code=code, event_id=origin, param=param)
            return None
        await self._record(data, arrived)
        return dict(data)
