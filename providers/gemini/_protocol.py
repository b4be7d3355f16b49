"""The Gemini Live API protocol, sans I/O.

:class:`LiveProtocol` turns a session's intents (send audio, submit a tool result, add context,
say) into client JSON and server JSON into voice-hitl events. It does no I/O and imports
neither asyncio nor websockets: tell it about the connection with :meth:`connection_made` /
:meth:`connection_lost`, feed it what the server sent with :meth:`receive`, then drain
:meth:`events` (for the channel) and :meth:`outgoing` (to write, in order, to the socket).

Nothing but the ``setup`` message is written before the server's ``setupComplete``; what the
session asks meanwhile waits. A call that was open when a connection was lost stays open: its
result goes to the next connection as a turn the model reads (the call, its arguments and the
result), since the new server session cannot take a ``toolResponse`` for it.

Results and turns are delivered at least once. The Live API acknowledges nothing, so what was
written on a connection counts as received only once the server has moved past it (a new
resumption handle, or the end of a model turn); if the connection is lost before that, it is
written again on the next connection (a result as a turn). A frame written into a socket that
was already dying is therefore not lost, at the price of a possible repeat.

A bad server message never raises: it becomes a recoverable :class:`ProviderErrorEvent`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from providers.realtime_ws import CallLedger, InFlight, OpenCall, ProtocolQueues, parse_object
from voice_hitl._exceptions import ProviderError
from voice_hitl.text._ai_types import ServedCall
from voice_hitl.voice._provider import SessionConfig
from voice_hitl.voice._provider_events import (
    PCM16,
    AudioOutEvent,
    ProviderErrorEvent,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)

from . import _client_messages as cm
from . import _server_messages as sm
from ._options import LiveOptions
from ._wire import INPUT_RATE, decode_audio, rate_of

__all__ = ["LiveProtocol"]

logger = logging.getLogger("voice_hitl.providers.gemini")


@dataclass(frozen=True, slots=True)
class _Result:
    call: OpenCall
    output: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class _Turn:
    text: str
    turn_complete: bool


_Pending = _Result | _Turn


class LiveProtocol(ProtocolQueues):
    """Maps a voice-hitl session to the Live API's JSON messages and back.

    Args:
        config: The session's instructions, tools and audio formats.
        model: The model resource name, e.g. ``models/gemini-2.5-flash-native-audio-...``.
        options: Voice, transcription, resumption and related settings.
    """

    def __init__(
        self, config: SessionConfig, model: str, options: LiveOptions | None = None
    ) -> None:
        super().__init__()
        self.config = config
        self.model = model if model.startswith(("models/", "projects/")) else f"models/{model}"
        self.options = options or LiveOptions()
        self.connection = 0
        self.connected = False
        self.ready = False
        self.handle: str | None = None
        self.going_away: str | None = None
        self._waiting: list[_Pending] = []
        self._written: InFlight[_Pending] = InFlight()  # handed out, not passed by the server
        self._calls = CallLedger()
        self._code: sm.ExecutableCode | None = None  # awaiting its server-side result
        self._code_runs = 0
        self._user = ""
        self._assistant = ""

    @property
    def open_calls(self) -> list[str]:
        """Ids of the function calls emitted and not yet answered (on any connection)."""
        return self._calls.open_ids()

    def waiting(self, call_id: str) -> bool:
        """Whether the result of ``call_id`` waits for a ready connection."""
        return any(isinstance(p, _Result) and p.call.call_id == call_id for p in self._waiting)

    def discard_result(self, call_id: str) -> bool:
        """Forget the waiting result of ``call_id`` (it will not be sent); False if none."""
        kept = [
            p for p in self._waiting if not (isinstance(p, _Result) and p.call.call_id == call_id)
        ]
        found = len(kept) != len(self._waiting)
        self._waiting = kept
        return found

    # -- client messages -----------------------------------------------------------------

    def _send(self, message: dict[str, Any], intent: _Pending | None = None) -> None:
        text = self._write_json(message)
        if intent is not None:
            self._written.wrote(text, intent)

    def setup_message(self) -> dict[str, Any]:
        """The ``setup`` message that opens a (possibly resumed) server session."""
        return cm.setup_message(self.config, self.model, self.options, self.handle)

    def _turn(self, turn: _Turn) -> dict[str, Any]:
        role = self.options.context_role
        return cm.turn_message(turn.text, turn_complete=turn.turn_complete, role=role)

    def _deliver(self, pending: _Pending) -> None:
        if isinstance(pending, _Turn):
            self._send(self._turn(pending), pending)
            return
        call = pending.call
        if call.connection == self.connection:
            message = cm.tool_response_message(
                call.call_id, call.name, pending.output, is_error=pending.is_error
            )
            self._send(message, pending)
            return
        text = cm.late_result_text(
            call.name, call.arguments, pending.output, is_error=pending.is_error
        )
        self._send(self._turn(_Turn(text, turn_complete=True)), pending)

    def _queue(self, pending: _Pending) -> None:
        if self.ready:
            self._deliver(pending)
        else:
            self._waiting.append(pending)

    # -- connection ----------------------------------------------------------------------

    def connection_made(self) -> None:
        """A (new) connection is open: send ``setup`` (with the resumption handle, if any)."""
        self.connection += 1
        self.connected = True
        self.ready = False
        self.going_away = None
        self._written.take_all()
        self._send(self.setup_message())

    def _setup_complete(self) -> None:
        self.ready = True
        for call in self._calls.earlier(self.connection):
            note = cm.pending_note_text(call.name, call.arguments)
            self._send(self._turn(_Turn(note, turn_complete=False)))
        waiting, self._waiting = self._waiting, []
        for pending in waiting:
            self._deliver(pending)

    def connection_lost(self, reason: str, unsent: Sequence[str] = ()) -> None:
        """The connection is gone. The results and turns handed out on it that the server had
        not yet moved past (``unsent`` ones, which were never written, included) wait for the
        next connection; audio is dropped. Calls still open stay open; their results will go
        to the next connection as turns.
        """
        logger.info("Live connection %d lost: %s", self.connection, reason)
        self.connected = False
        self.ready = False
        lost = self._written.lost()
        if lost:
            logger.info("%d result(s)/turn(s) not acknowledged; resending them", len(lost))
        self._outbox.clear()
        self._waiting[:0] = lost
        self._user = self._assistant = ""

    # -- intents -------------------------------------------------------------------------

    def append_audio(self, frame: PCM16) -> bool:
        """Queue caller audio (at the configured input rate); False when not ready.

        Raises:
            ValueError: ``frame`` is not 1-D int16.
        """
        rate = self.config.input_format.sample_rate
        return self._append_audio(frame, rate, INPUT_RATE, self.ready, cm.audio_message)

    def call_connection(self, call_id: str) -> int | None:
        """The number of the connection an open call came on (None when not open)."""
        call = self._calls.get(call_id)
        return None if call is None else call.connection

    def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> None:
        """Queue the result of ``call_id``: a ``toolResponse`` on the connection the call came
        from, else a turn with the call and its result (waiting for a ready connection).

        Raises:
            ProviderError: The call is not open: unknown, already answered, or withdrawn by
                the server (``toolCallCancellation``); nothing is queued.
        """
        call = self._calls.take(call_id)
        self._queue(_Result(call, output, is_error))

    def inject_context(self, text: str) -> None:
        """Queue a turn the model reads without answering (``turnComplete: false``)."""
        self._queue(_Turn(text, turn_complete=False))

    def say(self, text: str) -> None:
        """Queue a turn that asks the model to speak ``text`` verbatim."""
        ask = f"Say exactly this, word for word, and nothing else:\n{text}"
        self._queue(_Turn(ask, turn_complete=True))

    # -- server messages -----------------------------------------------------------------

    def _error(self, message: str, code: str) -> None:
        self._events.append(ProviderErrorEvent(ProviderError(message, code=code, recoverable=True)))

    def receive(self, data: str | bytes) -> None:
        """Feed one server message (text or binary frame); never raises for bad input."""
        value = parse_object(data, "the Live server")
        if isinstance(value, str):
            self._error(value, "malformed_server_event")
            return
        try:
            message = sm.parse_server_message(value)
        except ValueError as exc:
            self._error(str(exc), "invalid_server_event")
            return
        known = set(sm.ServerMessage.model_fields)
        unknown = [k for k in value if k not in sm.KNOWN_IGNORED and _snake(k) not in known]
        if unknown:
            logger.debug("unknown Live server message field(s) %s ignored", unknown)
        self._dispatch(message)

    def _dispatch(self, message: sm.ServerMessage) -> None:
        if message.setup_complete is not None:
            self._setup_complete()
        if message.session_resumption_update is not None:
            update = message.session_resumption_update
            if update.resumable and update.new_handle:
                self.handle = update.new_handle
                self._written.take_all()  # the resumable state includes what was written
        if message.tool_call is not None:
            self._final("user")
            for call in message.tool_call.function_calls:
                self._function_call(call)
        if message.tool_call_cancellation is not None:
            for call_id in message.tool_call_cancellation.ids:
                self._withdraw(call_id, "the model withdrew the call (the caller interrupted it)")
        if message.server_content is not None:
            self._content(message.server_content)
        if message.voice_activity is not None:
            kind = message.voice_activity.voice_activity_type
            if kind == "ACTIVITY_START":
                self._events.append(SpeechStartedEvent())
            elif kind == "ACTIVITY_END":
                self._events.append(SpeechStoppedEvent())
        if message.go_away is not None:
            self.going_away = message.go_away.time_left or ""
            logger.info("the Live server will close the connection (time left %s)", self.going_away)

    def _function_call(self, call: sm.FunctionCall) -> None:
        if not call.id or not call.name:
            self._error("a toolCall function call has no id or name", "invalid_server_event")
            return
        arguments = json.dumps(call.args or {})
        if not self._calls.opened(call.id, call.name, arguments, self.connection):
            return
        self._events.append(ToolCallEvent(call.id, call.name, arguments))

    def _code_ran(self, result: sm.CodeExecutionResult) -> None:
        """The server ran the model's code (its code-execution tool): a served call, reported
        and never answered."""
        code, self._code = self._code, None
        self._code_runs += 1
        call_id = result.id or (code.id if code else None) or f"code_execution_{self._code_runs}"
        if not self._calls.served(call_id):
            return
        arguments = json.dumps(
            {"language": code.language, "code": code.code} if code is not None else {}
        )
        failed = result.outcome not in (None, "OUTCOME_OK")
        output = result.output or (result.outcome or "" if failed else "")
        served = ServedCall(output, failed)
        self._events.append(ToolCallEvent(call_id, "code_execution", arguments, served))

    def _withdraw(self, call_id: str, why: str) -> None:
        if not self._calls.withdraw(call_id, why):
            logger.debug("toolCallCancellation for a call that is not open: %r", call_id)
            return
        self._events.append(ToolCallCancelledEvent(call_id, why))

    def _content(self, content: sm.ServerContent) -> None:
        heard = content.input_transcription
        if heard is not None and heard.text:
            self._partial("user", heard.text)
        if heard is not None and heard.finished:
            self._final("user")
        for part in content.model_turn.parts if content.model_turn else []:
            if part.executable_code is not None:
                self._code = part.executable_code
            elif part.code_execution_result is not None:
                self._code_ran(part.code_execution_result)
            elif part.inline_data is not None and (part.inline_data.mime_type or "").startswith(
                "audio/"
            ):
                self._final("user")
                self._audio(part.inline_data)
            elif part.text and not part.thought and self.options.response_modality == "TEXT":
                self._final("user")
                self._partial("assistant", part.text)
        spoken = content.output_transcription
        if spoken is not None and spoken.text:
            self._final("user")
            self._partial("assistant", spoken.text)
        if content.interrupted:
            self._final("assistant")
            self._events.append(SpeechStartedEvent())
        if content.generation_complete or content.turn_complete:
            self._final("assistant")
        if content.turn_complete:
            self._final("user")
            self._written.take_all()  # the model finished a turn after reading what was written

    def _audio(self, blob: sm.Blob) -> None:
        try:
            frame = decode_audio(
                blob.data, rate_of(blob.mime_type), self.config.output_format.sample_rate
            )
        except ValueError as exc:
            self._error(f"serverContent audio: {exc}", "invalid_server_event")
        else:
            self._events.append(AudioOutEvent(frame))

    def _partial(self, role: Literal["user", "assistant"], chunk: str) -> None:
        text = (self._user if role == "user" else self._assistant) + chunk
        if role == "user":
            self._user = text
        else:
            self._assistant = text
        self._events.append(TranscriptionEvent(role, text.strip(), final=False))

    def _final(self, role: Literal["user", "assistant"]) -> None:
        text = (self._user if role == "user" else self._assistant).strip()
        if role == "user":
            self._user = ""
        else:
            self._assistant = ""
        if text:
            self._events.append(TranscriptionEvent(role, text, final=True))


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
