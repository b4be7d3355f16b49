"""``PhoneServer``: serves Twilio Media Streams, one voice session per phone call.

Each websocket Twilio opens (TwiML ``<Connect><Stream url="wss://...">``) must start with
``connected`` and ``start``; the call then becomes a session of the channel (room: the call
SID; participant: the ``caller`` custom parameter, else the call SID; session id: the stream
SID). When the caller hangs up (``stop``) or the socket drops, each open question is withdrawn
with what the caller heard of it, and the session ends, settling everything it had open. When
the session ends on our side, the socket is closed, and Twilio goes on with the TwiML.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from voice_hitl import RealtimeVoiceChannel, RequestOpened, RequestSettled, VoiceSession
from voice_hitl._checks import positive_seconds
from voice_hitl.human._lifecycle import RequestEvent
from voice_hitl.voice._provider_events import ProviderEvent, TranscriptionEvent

from ._call import PhoneCall, Question
from ._messages import StreamProtocolError
from ._transport import TwilioTransport

__all__ = ["CALLER_HUNG_UP", "SERVER_CLOSED", "STREAM_DROPPED", "PhoneServer", "withdrawal_reason"]

logger = logging.getLogger("voice_hitl.providers.twilio")

CALLER_HUNG_UP = "caller hung up"
"""Why a call's session ends when Twilio sends ``stop``."""
STREAM_DROPPED = "the call's media stream dropped"
"""Why it ends when the socket closes without ``stop``."""
SERVER_CLOSED = "the phone server closed"
"""Why it ends when :meth:`PhoneServer.aclose` closes the socket."""
MAX_MESSAGE_BYTES = 2**20
"""The largest Media Streams message taken (Twilio's are well under 1 KB): a larger one closes
the socket with 1009 (message too big), logged, and the call ends saying so."""


def withdrawal_reason(why: str, question: Question) -> str:
    """What an open question is withdrawn with when the call ends for ``why``."""
    return f"{why} without answering" if question.heard else f"{why} before hearing the question"


class PhoneServer:
    """A websocket server for Twilio Media Streams feeding ``channel`` (see the module doc).

    Args:
        channel: The voice channel; its ``transport`` must be a :class:`TwilioTransport`.
        host: The address to listen on.
        port: The port (0: any free port; see :attr:`url`).
        start_timeout: Seconds a new socket may take to send ``start``.
        caller_parameter: The ``<Parameter>`` naming the caller (the session's participant).
        on_call: Called with each call's session as soon as it starts (before any of its
            events; e.g. to add listeners). Must not block; what it raises is logged.

    Raises:
        ValueError: The channel's transport is not a ``TwilioTransport``; a bad timeout.
    """

    def __init__(
        self,
        channel: RealtimeVoiceChannel,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        start_timeout: float = 10.0,
        caller_parameter: str = "caller",
        on_call: Callable[[VoiceSession], None] | None = None,
    ) -> None:
        transport = channel.transport
        if not isinstance(transport, TwilioTransport):
            raise ValueError(
                f"PhoneServer needs a channel whose transport is a TwilioTransport, got "
                f"{type(transport).__name__}"
            )
        self.channel = channel
        self.transport = transport
        self.host = host
        self.port = port
        self.start_timeout = positive_seconds("start_timeout", start_timeout)
        self.caller_parameter = caller_parameter
        self.on_call = on_call
        self.calls: dict[str, PhoneCall] = {}
        """Calls in progress, by call SID."""
        self.rejected = 0
        """Sockets closed before becoming a call (no or bad ``start``)."""
        self._server: Server | None = None
        self._closing = False
        self._unobserve: Any = None

    @property
    def url(self) -> str:
        """The ``ws://`` URL the server listens on (put it behind ``wss://`` for Twilio).

        Raises:
            RuntimeError: The server is not started.
        """
        if self._server is None:
            raise RuntimeError("the phone server is not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"ws://{host}:{port}/"

    async def start(self) -> None:
        """Start listening.

        Raises:
            RuntimeError: Already started.
            OSError: The address cannot be bound.

        Cancellation: safe; nothing is left listening.
        """
        if self._server is not None:
            raise RuntimeError("the phone server is already started")
        self._closing = False
        human = self.channel.human_input_handler
        if human is not None:
            self._unobserve = human.handler.add_observer(self._on_request)
        self._server = await serve(
            self._handle, self.host, self.port, compression=None, max_size=MAX_MESSAGE_BYTES
        )

    async def serve_forever(self) -> None:
        """Serve until cancelled or closed.

        Cancellation: stops waiting; call :meth:`aclose` to end the calls.
        """
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.wait_closed()

    async def aclose(self) -> None:
        """Hang up every call (their sessions end with ``SERVER_CLOSED``) and stop listening;
        idempotent.

        Cancellation: don't cancel; the server may keep listening.
        """
        server, self._server = self._server, None
        self._closing = True
        if server is not None:
            server.close()
            await server.wait_closed()
        if self._unobserve is not None:
            self._unobserve()
            self._unobserve = None

    async def __aenter__(self) -> PhoneServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- requests asked on calls -------------------------------------------------------------

    def _on_request(self, event: RequestEvent) -> None:
        if isinstance(event, RequestOpened):
            source = event.source
            call = self.calls.get(source.room_id)
            if call is not None and source.channel_id == self.channel.channel_id:
                call.question_asked(source.pending_id, source.tool_call_id)
        elif isinstance(event, RequestSettled):
            for call in self.calls.values():
                call.question_settled(event.pending_id)

    def _heard(self, question: Question) -> None:
        human = self.channel.human_input_handler
        if human is not None:
            human.handler.note(question.pending_id, "question heard by the caller")

    # -- one call ------------------------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        async def send(text: str) -> None:
            with contextlib.suppress(ConnectionClosed):  # hung up: the rest is not heard
                await ws.send(text)

        call = PhoneCall(
            send,
            input_rate=self.channel.input_format.sample_rate,
            output_rate=self.channel.output_format.sample_rate,
            on_heard=self._heard,
        )
        if not await self._await_start(ws, call):
            return
        started = call.started
        assert started is not None
        session_id = started.stream_sid
        participant = started.custom_parameters.get(self.caller_parameter) or started.call_sid
        self.transport.attach(session_id, call)
        try:
            session = await self.channel.start_session(
                started.call_sid, participant, session_id=session_id
            )
        except Exception as exc:
            self.transport.detach(session_id)
            logger.exception("call %s: the voice session could not start", started.call_sid)
            reason = f"the voice session could not start: {exc}"
            await ws.close(1011, reason.encode()[:120].decode(errors="ignore"))
            return
        except BaseException:
            self.transport.detach(session_id)
            raise
        self.calls[started.call_sid] = call
        remove = session.add_listener(lambda event: _turn_end(call, event))
        if self.on_call is not None:
            try:
                self.on_call(session)
            except Exception:
                logger.exception("call %s: on_call failed", started.call_sid)
        try:
            async with asyncio.TaskGroup() as tasks:
                writer = tasks.create_task(call.write(), name=f"twilio-write-{session_id}")
                closer = tasks.create_task(
                    _close_when_ended(ws, call), name=f"twilio-end-{session_id}"
                )
                why = await self._read(ws, call)
                writer.cancel()
                closer.cancel()
            if not call.hang_up_requested.is_set():
                await self._end(session, call, why)
        finally:
            remove()
            self.calls.pop(started.call_sid, None)
            self.transport.detach(session_id)
            if not session.ended:  # cancelled or failed on the way: nothing may stay open
                await asyncio.shield(self.channel.end_session(session, reason=STREAM_DROPPED))
            await ws.close()

    async def _await_start(self, ws: ServerConnection, call: PhoneCall) -> bool:
        """Read until ``start``; False (the socket closed with the reason) when it never came."""
        try:
            async with asyncio.timeout(self.start_timeout):
                while call.started is None:
                    call.receive(await ws.recv())
            return True
        except StreamProtocolError as exc:
            reason = str(exc)
        except TimeoutError:
            reason = f"no 'start' message within {self.start_timeout:g}s"
        except ConnectionClosed as exc:
            self.rejected += 1
            if _too_big(exc):
                logger.error("rejected a Media Streams socket: %s", _too_big(exc))
            return False
        self.rejected += 1
        logger.warning("rejected a Media Streams socket: %s", reason)
        await ws.close(1008, reason.encode()[:120].decode(errors="ignore"))  # <= 123 bytes
        return False

    async def _read(self, ws: ServerConnection, call: PhoneCall) -> str:
        """Feed the call until ``stop`` or the socket closes; returns why the call ended."""
        sid = call.stream.call_sid
        try:
            async for message in ws:
                try:
                    call.receive(message)
                except StreamProtocolError as exc:
                    # One bad message must not end a call: drop it, say what was wrong.
                    logger.warning("call %s: dropped a Media Streams message: %s", sid, exc)
                if call.stream.stopped:
                    return CALLER_HUNG_UP
        except ConnectionClosed as exc:
            if too_big := _too_big(exc):
                logger.error("call %s: %s", sid, too_big)
                return f"{STREAM_DROPPED}: {too_big}"
        return SERVER_CLOSED if self._closing else STREAM_DROPPED

    async def _end(self, session: VoiceSession, call: PhoneCall, why: str) -> None:
        """Withdraw each open question with what the caller heard of it, end the session."""
        call.close_lanes()
        for question in call.open_questions:
            await session.withdraw_call(question.tool_call_id, withdrawal_reason(why, question))
        await self.channel.end_session(session, reason=why)


def _too_big(closed: ConnectionClosed) -> str:
    """Why the socket closed when we closed it over a message too big ("" otherwise)."""
    sent = closed.sent
    if sent is None or sent.code != CloseCode.MESSAGE_TOO_BIG:
        return ""
    return (
        f"a message over the {MAX_MESSAGE_BYTES:,}-byte limit arrived, so the socket was "
        f"closed with 1009 (message too big: {sent.reason})"
    )


def _turn_end(call: PhoneCall, event: ProviderEvent) -> None:
    if isinstance(event, TranscriptionEvent) and event.role == "assistant" and event.final:
        call.agent_turn_ended()


async def _close_when_ended(ws: ServerConnection, call: PhoneCall) -> None:
    """Close the socket once the session ended on our side (Twilio then moves on)."""
    await call.hang_up_requested.wait()
    with contextlib.suppress(ConnectionClosed):
        await ws.close(1000, "the call ended")
