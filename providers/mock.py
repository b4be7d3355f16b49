"""``MockRealtimeProvider``: a scripted provider for tests and examples.

It implements the same interface as a real provider, so a channel drives it through the same
code path; instead of a model it records what it is sent and lets a test drive its events.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from voice_hitl import ChannelClosedError
from voice_hitl.voice._transport import check_pcm16

from .base import (
    PCM16,
    AudioOutEvent,
    ProviderCapabilities,
    ProviderEvent,
    ProviderSession,
    RealtimeProvider,
    SessionConfig,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)

__all__ = ["MockProviderSession", "MockRealtimeProvider", "ToolResultRecord"]


class _End:
    """Marks the end of a session's events."""


_END = _End()


@dataclass(frozen=True, slots=True)
class ToolResultRecord:
    """A tool result the channel submitted to the mock."""

    session_id: str
    call_id: str
    output: str
    is_error: bool


class MockProviderSession(ProviderSession):
    """A mock session: a queue of scripted events and a record of what it was sent."""

    def __init__(self, provider: MockRealtimeProvider, config: SessionConfig) -> None:
        self.provider = provider
        self.config = config
        self.session_id = config.session_id or f"mock-{secrets.token_hex(4)}"
        self.closed = False
        self.audio_in: list[PCM16] = []
        self._queue: asyncio.Queue[ProviderEvent | _End] = asyncio.Queue()

    def _check_open(self, what: str) -> None:
        if self.closed:
            raise ChannelClosedError(f"mock session {self.session_id!r} is closed ({what})")

    def emit(self, event: ProviderEvent) -> None:
        """Queue an event for the channel."""
        self._check_open("emit")
        self._queue.put_nowait(event)

    async def events(self) -> AsyncIterator[ProviderEvent]:
        while True:
            item = await self._queue.get()
            if isinstance(item, _End):
                return
            yield item

    async def send_audio(self, frame: PCM16) -> None:
        self._check_open("send_audio")
        self.audio_in.append(check_pcm16(frame))
        self.provider._record("send_audio", self.session_id, None)

    async def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> None:
        self._check_open("submit_tool_result")
        record = ToolResultRecord(self.session_id, call_id, output, is_error)
        self.provider._record("submit_tool_result", self.session_id, record)

    async def inject_context(self, text: str) -> None:
        self._check_open("inject_context")
        self.provider._record("inject_context", self.session_id, text)

    async def say(self, text: str) -> None:
        self._check_open("say")
        self.provider._record("say", self.session_id, text)

    async def interrupt(self) -> None:
        self._check_open("interrupt")
        self.provider._record("interrupt", self.session_id, None)

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._queue.put_nowait(_END)
        self.provider._record("disconnect", self.session_id, None)


class MockRealtimeProvider(RealtimeProvider):
    """Records what channels send (``calls``, ``tool_results``, ``injected_texts``, ``said``)
    and drives events with the ``simulate_*`` methods.

    Args:
        capabilities: The flags to advertise (all on by default).
    """

    def __init__(self, capabilities: ProviderCapabilities | None = None) -> None:
        self.capabilities = capabilities or ProviderCapabilities()
        self.sessions: list[MockProviderSession] = []
        self.calls: list[tuple[str, str]] = []
        self.tool_results: list[ToolResultRecord] = []
        self.injected_texts: list[str] = []
        self.said: list[str] = []
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self._call_ids = itertools.count(1)

    async def connect(self, config: SessionConfig) -> MockProviderSession:
        session = MockProviderSession(self, config)
        self.sessions.append(session)
        self._record("connect", session.session_id, None)
        return session

    def _record(self, method: str, session_id: str, payload: Any) -> None:
        self.calls.append((method, session_id))
        if isinstance(payload, ToolResultRecord):
            self.tool_results.append(payload)
        elif method == "inject_context":
            self.injected_texts.append(payload)
        elif method == "say":
            self.said.append(payload)
        for predicate, future in list(self._waiters):
            if not future.done() and predicate():
                future.set_result(None)

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds; it is checked after everything the mock records.

        Cancellation: safe.
        """
        if predicate():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            await future
        finally:
            self._waiters.remove(entry)

    # -- driving events --------------------------------------------------------------------

    @staticmethod
    def _session(session: Any) -> MockProviderSession:
        inner = getattr(session, "provider_session", session)
        if not isinstance(inner, MockProviderSession):
            raise TypeError(f"not a mock provider session: {session!r}")
        return inner

    def simulate_tool_call(
        self, session: Any, name: str, arguments: dict[str, Any] | str, call_id: str | None = None
    ) -> str:
        """Make the model call ``name``; returns the call id.

        ``arguments`` may be a dict (sent as JSON) or raw text (sent as is, even if malformed).
        """
        call_id = call_id or f"call_{next(self._call_ids)}"
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        self._session(session).emit(ToolCallEvent(call_id, name, text))
        return call_id

    def simulate_tool_call_cancelled(self, session: Any, call_id: str) -> None:
        """Make the model drop a call, as on barge-in."""
        self._session(session).emit(
            ToolCallCancelledEvent(call_id, "the caller barged in; the model dropped the call")
        )

    def simulate_transcription(
        self,
        session: Any,
        text: str,
        role: Literal["user", "assistant"] = "assistant",
        final: bool = True,
        speaker_id: str | None = None,
        **reading: Any,
    ) -> None:
        """Emit a transcription of the model's or the caller's speech; ``reading`` sets how
        a local recogniser read it (``confidence``, ``quality``, ``interpretation``,
        ``verbatim``)."""
        self._session(session).emit(TranscriptionEvent(role, text, final, speaker_id, **reading))

    def simulate_audio(self, session: Any, frames: Sequence[PCM16]) -> None:
        """Emit model audio frames."""
        target = self._session(session)
        for frame in frames:
            target.emit(AudioOutEvent(frame))

    def simulate_speech(self, session: Any, *, started: bool) -> None:
        """Emit caller speech started/stopped."""
        self._session(session).emit(SpeechStartedEvent() if started else SpeechStoppedEvent())

    # -- waiting for what the channel sent ---------------------------------------------------

    async def wait_for_tool_result(self, call_id: str) -> ToolResultRecord:
        """Wait until the channel submits the result for ``call_id``.

        Cancellation: safe.
        """
        await self.wait_until(lambda: any(r.call_id == call_id for r in self.tool_results))
        return next(r for r in self.tool_results if r.call_id == call_id)

    async def wait_for(self, method: str, count: int = 1) -> None:
        """Wait until ``method`` (e.g. ``"inject_context"``) was called ``count`` times.

        Cancellation: safe.
        """
        await self.wait_until(lambda: sum(1 for m, _ in self.calls if m == method) >= count)
