"""The OpenAI Realtime protocol (GA), sans I/O.

:class:`RealtimeProtocol` turns a session's intents (send audio, submit a tool result, say,
interrupt, ...) into client JSON and server JSON into voice-hitl events. It does no I/O and
imports neither asyncio nor websockets: feed it what the server sent with :meth:`receive`, tell
it about the connection with :meth:`connection_made` / :meth:`connection_lost`, then drain
:meth:`events` (for the channel) and :meth:`outgoing` (to write, in order, to the socket).

A bad server message never raises: it becomes a recoverable :class:`ProviderErrorEvent`.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Sequence
from typing import Any

from providers.realtime_ws import CallLedger, OpenCall, ProtocolQueues, parse_object
from voice_hitl._exceptions import ProviderError
from voice_hitl.speech.dtmf import KEYS
from voice_hitl.text._ai_types import ServedCall
from voice_hitl.voice._provider import SessionConfig
from voice_hitl.voice._provider_events import (
    PCM16,
    AudioOutEvent,
    KeypadEvent,
    ProviderErrorEvent,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)

from . import _server_events as ev
from ._audio import WIRE_RATE, decode_pcm16
from ._deliveries import PendingResult, ResultDeliveries, context_text
from ._errors import is_fatal
from ._options import RealtimeOptions, session_config

__all__ = ["ACTIVE_RESPONSE", "RealtimeProtocol"]

logger = logging.getLogger("voice_hitl.providers.openai")

ACTIVE_RESPONSE = "conversation_already_has_active_response"
_ITEM_ADDED = frozenset(
    {"conversation.item.added", "conversation.item.created", "conversation.item.done"}
)


def _is_error_payload(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


class RealtimeProtocol(ProtocolQueues):
    """Maps a voice-hitl session to the Realtime API's JSON events and back.

    Args:
        config: The session's instructions, tools and audio formats.
        options: Voice, transcription, turn detection and related settings.
    """

    def __init__(self, config: SessionConfig, options: RealtimeOptions | None = None) -> None:
        super().__init__()
        self.config = config
        self.options = options or RealtimeOptions()
        self.connected = False
        self._deferred: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._connection = 0  # the number of the current (or last) connection
        self._calls = CallLedger()
        self._active_response: str | None = None
        self._requested: dict[str, dict[str, Any]] = {}  # event id -> response.create body
        self._retry: list[dict[str, Any]] = []  # response.create bodies for after response.done
        self._partial: dict[str, str] = {}  # item id -> transcript so far
        self.deliveries = ResultDeliveries()
        self._resend: list[PendingResult] = []  # results the lost connection never took
        self.failed: ProviderError | None = None
        """Set by a fatal server error (bad key, no quota): the session cannot go on."""

    @property
    def open_calls(self) -> list[str]:
        """Ids of the function calls emitted on this connection and not yet answered."""
        return self._calls.open_ids(self._connection) if self.connected else []

    def _orphaned(self, call: OpenCall) -> bool:
        """Whether ``call`` was open when its connection was lost (it is answered as
        context on a later one)."""
        return not self.connected or call.connection != self._connection

    @property
    def active_response(self) -> str | None:
        """The id of the response in progress, if any."""
        return self._active_response

    # -- connection ----------------------------------------------------------------------

    def _send(self, event: dict[str, Any]) -> None:
        self._write_json(event)

    def _event_id(self) -> str:
        return f"vh_{next(self._ids)}"

    def session_update(self) -> dict[str, Any]:
        """The ``session.update`` event that configures the session."""
        session = session_config(self.config, self.options)
        return {"type": "session.update", "event_id": self._event_id(), "session": session}

    def connection_made(self) -> None:
        """A (new) connection is open: configure the session, then send what waited."""
        self.connected = True
        self._connection += 1
        self._send(self.session_update())
        deferred, self._deferred = self._deferred, []
        for event in deferred:
            if event["type"] == "response.create":
                self._request_response(event.get("response"))
            else:
                self._send(event)
        resend, self._resend = self._resend, []
        for result in resend:
            self._send_as_context(result.call_id, result.name, result.arguments, result.output)
        if resend:
            self._request_response(None)

    def connection_lost(self, reason: str, unsent: Sequence[str] = ()) -> None:
        """The connection is gone: unsent messages (``unsent`` among them) are dropped. Calls
        still open stay answerable (their results go to the next connection as context), and
        results the server had not taken yet are sent again there, as context."""
        self.connected = False
        self._outbox.clear()
        self._active_response = None
        self._requested.clear()
        self._retry.clear()
        self._partial.clear()
        self._resend.extend(self.deliveries.lost())
        orphaned = self._calls.open_ids()
        if orphaned or self._resend:
            logger.info(
                "connection lost (%s): %d open calls and %d results in flight go to the next "
                "connection",
                reason,
                len(orphaned),
                len(self._resend),
            )

    def _send_as_context(self, call_id: str, name: str, arguments: str, output: str) -> None:
        event_id = self._event_id()
        item = {
            "type": "message",
            "role": self.options.context_role,
            "content": [
                {"type": "input_text", "text": context_text(name, arguments, call_id, output)}
            ],
        }
        self._send({"type": "conversation.item.create", "event_id": event_id, "item": item})
        self.deliveries.sent(call_id, name, arguments, output, event_id, as_context=True)

    def _withdraw(self, call_id: str, why: str) -> None:
        self._calls.withdraw(call_id, why)
        self._events.append(ToolCallCancelledEvent(call_id, why))

    # -- intents -------------------------------------------------------------------------

    def append_audio(self, frame: PCM16) -> bool:
        """Queue caller audio (at the configured input rate); False when not connected.

        Raises:
            ValueError: ``frame`` is not 1-D int16.
        """
        return self._append_audio(
            frame,
            self.config.input_format.sample_rate,
            WIRE_RATE,
            self.connected,
            lambda audio: {"type": "input_audio_buffer.append", "audio": audio},
        )

    def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> None:
        """Queue a ``function_call_output`` and the ``response.create`` that makes the model
        read it. An error becomes ``{"error": ...}`` text (the output has no error flag).

        Raises:
            ProviderError: The call is not open: unknown, already answered, or withdrawn
                (e.g. it was pending on a connection that was lost); nothing is queued.
        """
        call = self._calls.get(call_id)
        if call is not None and self._orphaned(call):
            if not self.connected:
                raise ProviderError(
                    f"result of call {call_id!r} not sent: not connected to the realtime server",
                    code="not_connected",
                    recoverable=True,
                )
            self._calls.take(call_id)
            if is_error and not _is_error_payload(output):
                output = json.dumps({"error": output})
            self._send_as_context(call_id, call.name, call.arguments, output)
            self._request_response(None)
            return
        call = self._calls.take(call_id)  # raises unless the call is open
        if is_error and not _is_error_payload(output):
            output = json.dumps({"error": output})
        item = {"type": "function_call_output", "call_id": call_id, "output": output}
        event_id = self._event_id()
        self._send({"type": "conversation.item.create", "event_id": event_id, "item": item})
        self.deliveries.sent(call_id, call.name, call.arguments, output, event_id, as_context=False)
        self._request_response(None)

    def inject_context(self, text: str) -> None:
        """Queue a message the model reads without answering (sent after a reconnect if the
        connection is down)."""
        item = {
            "type": "message",
            "role": self.options.context_role,
            "content": [{"type": "input_text", "text": text}],
        }
        event = {"type": "conversation.item.create", "event_id": self._event_id(), "item": item}
        if self.connected:
            self._send(event)
        else:
            self._deferred.append(event)

    def say(self, text: str) -> None:
        """Queue a response whose instructions are to speak ``text`` verbatim."""
        lead = f"{self.config.instructions}\n\n" if self.config.instructions else ""
        body = {
            "instructions": f"{lead}Say exactly this, word for word, and nothing else:\n{text}",
            "tool_choice": "none",
        }
        if self.connected:
            self._request_response(body)
        else:
            self._deferred.append({"type": "response.create", "response": body})

    def interrupt(self) -> bool:
        """Queue ``response.cancel`` for the response in progress; False when there is none."""
        if not self.connected or self._active_response is None:
            return False
        cancel = {"type": "response.cancel", "response_id": self._active_response or None}
        self._send({k: v for k, v in cancel.items() if v is not None})
        return True

    def _request_response(self, body: dict[str, Any] | None) -> None:
        if self._active_response is not None:
            self._queue_retry(body)
            return
        event_id = self._event_id()
        params = dict(body or {})
        params["metadata"] = {"client_event_id": event_id}
        self._requested[event_id] = body or {}
        self._send({"type": "response.create", "event_id": event_id, "response": params})

    def _queue_retry(self, body: dict[str, Any] | None) -> None:
        body = body or {}
        if not body and {} in self._retry:
            return  # one plain response reads every tool output added meanwhile
        self._retry.append(body)

    # -- server events -------------------------------------------------------------------

    def _error(self, message: str, code: str, *, fatal: bool = False) -> None:
        error = ProviderError(message, code=code, recoverable=not fatal)
        if fatal and self.failed is None:
            self.failed = error
        self._events.append(ProviderErrorEvent(error))

    def receive(self, text: str | bytes) -> None:
        """Feed one server message; never raises for bad input (it becomes an error event)."""
        data = parse_object(text, "the realtime server")
        if isinstance(data, str):
            self._error(data, "malformed_server_event")
            return
        if data.get("type") in _ITEM_ADDED:
            self.deliveries.item_added(data.get("item"))
        try:
            event = ev.parse_server_event(data)
        except ValueError as exc:
            self._error(str(exc), "invalid_server_event")
            return
        if event is None:
            known = data["type"] in ev.KNOWN_IGNORED
            logger.debug(
                "%s server event %r ignored", "known" if known else "unknown", data["type"]
            )
            return
        self._dispatch(event)

    def _dispatch(self, event: ev.ServerEvent) -> None:
        if isinstance(event, ev.FunctionCallArgumentsDone):
            self._function_call(event.call_id, event.name, event.arguments, event.response_id)
        elif isinstance(event, ev.OutputItemDone):
            item = event.item
            if item.type == "function_call" and item.status in (None, "completed"):
                if item.call_id is None or item.name is None:
                    self._error(
                        "a function_call output item has no call_id or name", "invalid_server_event"
                    )
                else:
                    self._function_call(
                        item.call_id, item.name, item.arguments or "", event.response_id
                    )
            elif item.type == "mcp_call" and item.id and item.name:
                self._served_call(item)
        elif isinstance(event, ev.OutputAudioDelta):
            try:
                frame = decode_pcm16(event.delta, self.config.output_format.sample_rate)
            except ValueError as exc:
                self._error(f"response.output_audio.delta: {exc}", "invalid_server_event")
            else:
                self._events.append(AudioOutEvent(frame))
        elif isinstance(event, ev.OutputAudioTranscriptDelta | ev.OutputTextDelta):
            self._delta("assistant", event.item_id, event.delta)
        elif isinstance(event, ev.OutputAudioTranscriptDone):
            self._final("assistant", event.item_id, event.transcript)
        elif isinstance(event, ev.OutputTextDone):
            self._final("assistant", event.item_id, event.text)
        elif isinstance(event, ev.InputTranscriptionDelta):
            self._delta("user", event.item_id, event.delta or "")
        elif isinstance(event, ev.InputTranscriptionCompleted):
            self._final("user", event.item_id, event.transcript)
        elif isinstance(event, ev.SpeechStarted):
            self._events.append(SpeechStartedEvent())
        elif isinstance(event, ev.SpeechStopped):
            self._events.append(SpeechStoppedEvent())
        elif isinstance(event, ev.DtmfReceived):
            if len(event.event) == 1 and event.event.upper() in KEYS:
                self._events.append(KeypadEvent(event.event.upper()))
            else:
                what = f"a SIP keypad event names no key: {event.event!r}"
                self._error(what, "invalid_server_event")
        elif isinstance(event, ev.ResponseCreated):
            self._active_response = event.response.id or ""  # "": active, id not given
            client_id = (event.response.metadata or {}).get("client_event_id")
            if client_id is not None:
                self._requested.pop(client_id, None)
        elif isinstance(event, ev.ResponseDone):
            self._response_done(event.response)
        elif isinstance(event, ev.ErrorEvent):
            self._server_error(event.error)
        elif isinstance(event, ev.InputTranscriptionFailed):
            self._error(
                f"input transcription failed: {event.error.message}", "transcription_failed"
            )
        else:
            logger.debug("server event %r", event.type)

    def _function_call(self, call_id: str, name: str, arguments: str, response: str | None) -> None:
        if not self._calls.opened(call_id, name, arguments, self._connection):
            return
        self._events.append(ToolCallEvent(call_id, name, arguments))

    def _served_call(self, item: ev.OutputItem) -> None:
        """A remote MCP tool the server ran itself: reported, never answered."""
        assert item.id is not None and item.name is not None
        if not self._calls.served(item.id):
            return
        failed = item.error is not None
        result = str((item.error or {}).get("message", "")) if failed else item.output or ""
        served = ServedCall(result, failed)
        self._events.append(ToolCallEvent(item.id, item.name, item.arguments or "", served))

    def _delta(self, role: Any, item_id: str, delta: str) -> None:
        text = self._partial.get(item_id, "") + delta
        self._partial[item_id] = text
        self._events.append(TranscriptionEvent(role, text, final=False))

    def _final(self, role: Any, item_id: str | None, text: str) -> None:
        if item_id is not None:
            self._partial.pop(item_id, None)
        if text:
            self._events.append(TranscriptionEvent(role, text, final=True))

    def _response_done(self, response: ev.ResponseInfo) -> None:
        if response.id is None or self._active_response == response.id:
            self._active_response = None  # one response at a time: an unnamed one is it
        if response.status == "failed":
            self._response_failed(response.status_details or {})
        if response.status not in (None, "completed"):
            reason = (response.status_details or {}).get("reason") or response.status
            for item in response.output or []:
                call_id = item.get("call_id")
                if (
                    item.get("type") == "function_call"
                    and item.get("status") == "incomplete"
                    and call_id in self.open_calls
                ):
                    self._withdraw(
                        call_id, f"the model's response was {response.status} ({reason})"
                    )
        if self._retry and self._active_response is None:
            self._request_response(self._retry.pop(0) or None)

    def _server_error(self, error: ev.ErrorDetail) -> None:
        origin = error.event_id
        body = self._requested.pop(origin, None) if origin is not None else None
        if error.code == ACTIVE_RESPONSE and body is not None:
            logger.info("response.create %s hit an active response; retrying after it ends", origin)
            self._queue_retry(body)
            return
        if error.code == "response_cancel_not_active" or error.message.startswith(
            "Cancellation failed"
        ):
            logger.debug("response.cancel with nothing to cancel: %s", error.message)
            return
        code = error.code or error.type
        message = f"realtime server error ({code}): {error.message}"
        if self.deliveries.refused(origin, error.message):
            message = f"a tool result was refused: {message}"
        self._error(message, code, fatal=is_fatal(error.code, error.type))

    def _response_failed(self, details: dict[str, Any]) -> None:
        error = details.get("error") if isinstance(details.get("error"), dict) else {}
        assert isinstance(error, dict)
        code = error.get("code") or error.get("type") or "response_failed"
        message = error.get("message") or details.get("reason") or "no reason given"
        self._error(
            f"the model's response failed ({code}): {message}",
            str(code),
            fatal=is_fatal(error.get("code"), error.get("type")),
        )
