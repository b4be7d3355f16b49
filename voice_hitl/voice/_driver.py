"""``SessionDriver``: runs one provider session's doors through a channel's gate.

The driver reads the session's events and serves each tool call in a task of its own (so a
pending question never blocks another call): provider calls are answered with
``submit_tool_result``; calls recovered from the model's speech are answered with silent
context; a reasoning backend takes the agent's turns and calls tools through the same gate.
Every task belongs to the driver, and :meth:`SessionDriver.settle` cancels and awaits them, so
open human-input requests are withdrawn and reported ``cancelled``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from .._exceptions import ChannelClosedError, ProviderError
from ..tools._calls import Door, ToolCall, ToolResult
from ..tools._gate import ToolGate
from ._loop_slices import all_done, cancel_in_slices
from ._provider import ProviderSession
from ._provider_events import (
    AudioOutEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SpeechStartedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)
from ._reasoning import ReasoningBackend, ReasoningReply, ReasoningTurn, TranscriptEntry
from ._recovery import RecoveredCall, recover_tool_call

__all__ = ["EventListener", "SessionDriver"]

logger = logging.getLogger("voice_hitl.driver")

EventListener = Callable[[ProviderEvent], None]
"""Called for every event the session emits (must not block; schedule work instead)."""

_RECOVERED_LABEL = {"ok": "completed", "refused": "denied", "failed": "failed"}

CONTEXT_LINES = 6
"""How many of the call's last transcript lines a tool call carries as its ``transcript``."""


class SessionDriver:
    """Serves one provider session's tool calls through ``gate``.

    Args:
        provider_session: The connected session.
        gate: The channel's gate (every door goes through it).
        session_id: Names the session in logs and call ids.
        room_id: The room the calls belong to.
        door: The door of the provider's own calls (``PROVIDER`` or ``CONFERENCE``).
        actor: Returns the ``actor_id`` of the current turn.
        tool_recovery: Recover calls spoken as ``call:NAME{...}``.
        reasoning_backend: Takes the agent's turns after each final user utterance.
        play_audio: Where agent audio goes (the transport).
        stop_playback: Called when the caller starts speaking (barge-in).
        on_ended: Called once, with the reason, when the provider's event stream ends or
            fails on its own (not after :meth:`stop_reading`); the calls it had open are
            already withdrawn with that reason. Must not block.
    """

    def __init__(
        self,
        provider_session: ProviderSession,
        gate: ToolGate,
        *,
        session_id: str,
        room_id: str,
        door: Door,
        actor: Callable[[], str | None],
        tool_recovery: bool = True,
        reasoning_backend: ReasoningBackend | None = None,
        play_audio: Callable[[AudioOutEvent], Awaitable[None]] | None = None,
        stop_playback: Callable[[], Awaitable[None]] | None = None,
        on_ended: Callable[[str], None] | None = None,
    ) -> None:
        self.provider_session = provider_session
        self.gate = gate
        self.session_id = session_id
        self.room_id = room_id
        self.door = door
        self._actor = actor
        self._tool_recovery = tool_recovery
        self._reasoning = reasoning_backend
        self._play_audio = play_audio
        self._stop_playback = stop_playback
        self._on_ended = on_ended
        self.transcript: list[TranscriptEntry] = []
        self._reasoned_upto = 0
        self._listeners: list[EventListener] = []
        self._calls: dict[str, asyncio.Task[Any]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._reasoning_task: asyncio.Task[None] | None = None
        self._reasoning_wakeup = asyncio.Event()
        self._settled = False
        self._failure: ProviderError | None = None
        self._stopped_reading = False

    def add_listener(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` for every event; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @property
    def open_calls(self) -> list[str]:
        """Ids of the calls still being served."""
        return list(self._calls)

    def start(self) -> None:
        """Start reading events (and the reasoning loop, when there is a backend)."""
        if self._reader is not None:
            raise RuntimeError(f"driver of session {self.session_id!r} already started")
        self._reader = asyncio.create_task(self._read(), name=f"read-{self.session_id}")
        if self._reasoning is not None:
            self._reasoning_task = asyncio.create_task(
                self._reason(), name=f"reason-{self.session_id}"
            )

    # -- reading ---------------------------------------------------------------------------

    async def _read(self) -> None:
        reason = "the provider session ended"
        try:
            async for event in self.provider_session.events():
                try:
                    await self._dispatch(event)
                except (ChannelClosedError, ProviderError, ValueError) as exc:
                    logger.warning(
                        "session %r: could not handle %s: %s", self.session_id, event.type, exc
                    )
                except Exception:
                    logger.exception("session %r: handling %s failed", self.session_id, event.type)
        except ProviderError as exc:
            reason = f"the provider session failed ({exc.code}: {exc})"
            logger.error("session %r: provider failed: %s", self.session_id, exc)
        except Exception as exc:
            reason = f"the provider session failed ({type(exc).__name__}: {exc})"
            logger.error(
                "session %r: the provider's event stream raised", self.session_id, exc_info=exc
            )
        finally:
            if self._failure is not None and reason == "the provider session ended":
                failure = self._failure
                reason = f"the provider session failed ({failure.code}: {failure})"
            if not self._settled and not self._stopped_reading:
                # The provider ended the session on its own: nothing may wait forever.
                self._cancel_calls(reason)
                if self._on_ended is not None:
                    try:
                        self._on_ended(reason)
                    except Exception:
                        logger.exception("session %r: on_ended failed", self.session_id)

    async def _dispatch(self, event: ProviderEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("session %r: event listener failed", self.session_id)
        if isinstance(event, ToolCallEvent):
            if event.served is not None:
                await self._report_served(event)
            else:
                self._serve_provider_call(event)
        elif isinstance(event, ToolCallCancelledEvent):
            task = self._calls.get(event.call_id)
            if task is None:
                logger.debug("session %r: cancel for unknown call %r", self.session_id, event)
            else:
                task.cancel(event.reason)
        elif isinstance(event, TranscriptionEvent):
            self._on_transcription(event)
        elif isinstance(event, AudioOutEvent):
            if self._play_audio is not None:
                await self._play_audio(event)
        elif isinstance(event, SpeechStartedEvent):
            if self._stop_playback is not None:
                await self._stop_playback()
        elif isinstance(event, ProviderErrorEvent):
            log = logger.warning if event.error.recoverable else logger.error
            log("session %r: provider error %s: %s", self.session_id, event.error.code, event.error)
            if not event.error.recoverable and self._failure is None:
                self._failure = event.error  # the session cannot go on: its end says why

    def _on_transcription(self, event: TranscriptionEvent) -> None:
        if not event.final:
            return
        text = event.text
        if event.role == "assistant" and self._tool_recovery:
            recovered = recover_tool_call(text, self.gate.toolset)
            if recovered is not None:
                text = recovered.spoken_text
                self._spawn(self._recovered_call(recovered), self._serve_recovered)
        if text:
            self.transcript.append(TranscriptEntry(event.role, text, event.speaker_id))
        if event.role == "user" and self._reasoning is not None:
            self._reasoning_wakeup.set()

    # -- doors -------------------------------------------------------------------------------

    def _details(self) -> dict[str, Any]:
        """What a call carries about the conversation that led to it (its request keeps it)."""
        lines = self.transcript[-CONTEXT_LINES:]
        return {
            "transcript": tuple(
                {"role": line.role, "text": line.text, "speaker_id": line.speaker_id}
                for line in lines
            )
        }

    def _spawn(self, call: ToolCall, serve: Callable[[ToolCall], Awaitable[None]]) -> None:
        call_id = call.call_id
        started = False

        async def run() -> None:
            nonlocal started
            started = True
            await serve(call)

        task: asyncio.Task[None] = asyncio.ensure_future(run())
        task.set_name(f"call-{call_id}")
        self._calls[call_id] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._calls.get(call_id) is done:
                del self._calls[call_id]
            if not started and done.cancelled():
                # Withdrawn before its task ran: the gate never saw it, but it is reported.
                try:
                    done.result()
                except asyncio.CancelledError as cancelled:
                    reason = str(cancelled.args[0]) if cancelled.args else ""
                self.gate.report_withdrawn(call, reason or "the call was cancelled")

        task.add_done_callback(forget)
        task.add_done_callback(self._log_failure)

    def _log_failure(self, task: asyncio.Task[None]) -> None:
        """Last resort: a call task that raised is logged here, never left unretrieved."""
        if not task.cancelled() and (exc := task.exception()) is not None:
            logger.error("session %r: %s raised", self.session_id, task.get_name(), exc_info=exc)

    async def _report_served(self, event: ToolCallEvent) -> None:
        """A call the provider ran itself: reported, never run or answered."""
        assert event.served is not None
        call = ToolCall(
            event.name, event.arguments, event.call_id, self.room_id, self._actor(), self.door
        )
        await self.gate.report_served(call, event.served.result, event.served.is_error)

    def _serve_provider_call(self, event: ToolCallEvent) -> None:
        if event.call_id in self._calls:
            logger.warning(
                "session %r: duplicate tool call id %r ignored", self.session_id, event.call_id
            )
            return
        if self._settled:
            logger.warning(
                "session %r: tool call %r after the session settled; not served",
                self.session_id,
                event.call_id,
            )
            return
        call = ToolCall(
            event.name,
            event.arguments,
            event.call_id,
            self.room_id,
            self._actor(),
            self.door,
            self._details(),
        )
        self._spawn(call, self._answer_provider_call)

    async def _answer_provider_call(self, call: ToolCall) -> None:
        async def deliver(result: ToolResult) -> str | None:
            return await self.provider_session.submit_tool_result(
                call.call_id, result.text, is_error=result.is_error
            )

        await self.gate.call(call, deliver)

    def _recovered_call(self, recovered: RecoveredCall) -> ToolCall:
        return ToolCall(
            recovered.name,
            recovered.arguments,
            recovered.call_id,
            self.room_id,
            self._actor(),
            Door.RECOVERED,
            self._details(),
        )

    async def _serve_recovered(self, call: ToolCall) -> None:
        async def deliver(result: ToolResult) -> None:
            label = _RECOVERED_LABEL.get(result.outcome, result.outcome)
            await self.provider_session.inject_context(f"[Tool {call.name} {label}] {result.text}")

        await self.gate.call(call, deliver)

    async def _deliver(self, what: str, sending: Awaitable[None]) -> None:
        try:
            await sending
        except (ChannelClosedError, ProviderError) as exc:
            logger.warning("session %r: %s not delivered: %s", self.session_id, what, exc)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """A reasoning backend's tool call, through the gate (the backend's ``call_tool``).

        Cancellation: the call is withdrawn and reported ``cancelled``.
        """
        call = ToolCall(
            name,
            arguments,
            f"reasoning-{secrets.token_hex(6)}",
            self.room_id,
            self._actor(),
            Door.REASONING,
            self._details(),
        )
        # A task of its own, so the call can be withdrawn alone (see :meth:`withdraw`)
        # without ending the reasoning turn that made it.
        serving = asyncio.ensure_future(self.gate.call(call))
        serving.set_name(f"call-{call.call_id}")
        self._calls[call.call_id] = serving
        try:
            return await serving
        except asyncio.CancelledError as cancelled:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            hint = str(cancelled.args[0]) if cancelled.args else "the call was cancelled"
            return ToolResult.error("cancelled", hint, hint)
        finally:
            if self._calls.get(call.call_id) is serving:
                del self._calls[call.call_id]

    async def _reason(self) -> None:
        backend = self._reasoning
        assert backend is not None
        while True:
            await self._reasoning_wakeup.wait()
            self._reasoning_wakeup.clear()
            entries = tuple(self.transcript[self._reasoned_upto :])
            self._reasoned_upto = len(self.transcript)
            turn = ReasoningTurn(self.session_id, self.room_id, entries)
            try:
                reply = await backend.respond(turn, self.call_tool)
            except Exception:
                logger.exception("session %r: reasoning backend failed", self.session_id)
                continue
            # What the caller said while the turn ran answered its questions: it is not a
            # new turn.
            self._reasoned_upto = len(self.transcript)
            self._reasoning_wakeup.clear()
            if reply is not None:
                await self._send_reply(reply)

    async def _send_reply(self, reply: ReasoningReply) -> None:
        session = self.provider_session
        sending = session.say(reply.text) if reply.speak else session.inject_context(reply.text)
        await self._deliver("reasoning-reply", sending)
        if reply.speak:
            self.transcript.append(TranscriptEntry("assistant", reply.text))
            self._reasoned_upto = len(self.transcript)

    # -- settling ----------------------------------------------------------------------------

    def _cancel_calls(self, reason: str) -> list[asyncio.Task[Any]]:
        """Cancel the reasoning loop and the open calls with ``reason``: one slice now, the
        next ones on later loop turns (``_loop_slices.CANCEL_SLICE``). Returns every task
        cancelled or to be cancelled."""
        tasks = list(self._calls.values())
        if self._reasoning_task is not None:
            tasks.insert(0, self._reasoning_task)
        cancel_in_slices(tasks, reason)
        return tasks

    async def withdraw(self, call_id: str, reason: str) -> bool:
        """Withdraw one open call with its own ``reason`` (its request is withdrawn and the
        call reported ``cancelled``; nothing is sent to the provider for it). Meant for a
        session that is ending, where each call may have its own story.

        Returns:
            False when no call with that id is open.

        Cancellation: the call is cancelled first; cancelling stops only the wait for it.
        """
        task = self._calls.get(call_id)
        if task is None:
            return False
        task.cancel(reason)
        await asyncio.gather(task, return_exceptions=True)
        return True

    async def settle(self, reason: str) -> None:
        """Withdraw every open call (reported ``cancelled`` with ``reason``); nothing is sent
        to the provider for them. Idempotent.

        The calls are cancelled a slice per loop turn (``_loop_slices.CANCEL_SLICE``), so
        closing thousands never holds the loop; a call answered before its turn came is
        delivered and reported as such (an answer that was taken is never dropped).

        Cancellation: the calls are cancelled first; cancelling stops only the wait for them.
        """
        self._settled = True
        await all_done(self._cancel_calls(reason))

    async def stop_reading(self) -> None:
        """Stop reading events (cancel and await the reader). Idempotent.

        Open calls stay open: the owner settles them with :meth:`settle` and its own reason.

        Cancellation: safe.
        """
        self._stopped_reading = True
        reader = self._reader
        if reader is not None and not reader.done():
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    async def aclose(self, reason: str) -> None:
        """Settle open calls, stop reading and disconnect the provider session. Idempotent.

        Cancellation: don't cancel; the session may stay connected.
        """
        await self.settle(reason)
        await self.stop_reading()
        await self.provider_session.aclose()

