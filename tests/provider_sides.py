"""Test helpers: the model's side of a session, the same way for every provider.

A side plays the model for a channel's session — calls a tool, withdraws a call, speaks,
transcribes the caller — and reads what the channel sent back. ``MockSide`` drives the mock
provider; ``OpenAISide`` and ``GeminiSide`` drive the loopback test servers, so the door
scenarios run through each real provider's wire protocol.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

from providers.base import RealtimeProvider
from providers.mock import MockRealtimeProvider
from voice_hitl import VoiceSession

PROVIDERS = ["mock", "openai", "gemini"]


def _is_error_text(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


class ModelSide(Protocol):
    """The model's side of a provider's sessions."""

    provider: RealtimeProvider
    cancel_reason: str
    """Words the reason of a withdrawn call contains."""

    async def tool_call(
        self,
        session: VoiceSession,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        interruptible: bool = False,
    ) -> str: ...

    async def cancel(self, session: VoiceSession, call_id: str) -> None: ...

    async def assistant_says(self, session: VoiceSession, text: str) -> None: ...

    async def user_says(self, session: VoiceSession, text: str) -> None: ...

    async def tool_result(self, session: VoiceSession, call_id: str) -> tuple[str, bool]: ...

    async def context(self, session: VoiceSession, prefix: str) -> str: ...

    def delivered(self, session: VoiceSession) -> int: ...


class MockSide:
    """The mock provider's side (events emitted directly, results recorded)."""

    cancel_reason = "barged in"

    def __init__(self, provider: MockRealtimeProvider | None = None) -> None:
        self.mock = provider or MockRealtimeProvider()
        self.provider: RealtimeProvider = self.mock
        self._seen: dict[str, int] = {}

    async def tool_call(
        self,
        session: VoiceSession,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        interruptible: bool = False,
    ) -> str:
        return self.mock.simulate_tool_call(session, name, arguments)

    async def cancel(self, session: VoiceSession, call_id: str) -> None:
        self.mock.simulate_tool_call_cancelled(session, call_id)

    async def assistant_says(self, session: VoiceSession, text: str) -> None:
        self._seen.setdefault(session.session_id, len(self.mock.injected_texts))
        self.mock.simulate_transcription(session, text, role="assistant")

    async def user_says(self, session: VoiceSession, text: str) -> None:
        self.mock.simulate_transcription(session, text, role="user")

    async def tool_result(self, session: VoiceSession, call_id: str) -> tuple[str, bool]:
        record = await self.mock.wait_for_tool_result(call_id)
        return record.output, record.is_error

    async def context(self, session: VoiceSession, prefix: str) -> str:
        seen = self._seen.pop(session.session_id, 0)

        def mine() -> list[str]:
            return [t for t in self.mock.injected_texts[seen:] if t.startswith(prefix)]

        await self.mock.wait_until(lambda: bool(mine()))
        return mine()[0]

    def delivered(self, session: VoiceSession) -> int:
        return len(self.mock.tool_results) + len(self.mock.injected_texts)


class _ServerSide:
    """Maps each session to its server connection (sessions connect in the order started)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._connections: dict[str, Any] = {}

    async def conn(self, session: VoiceSession) -> Any:
        found = self._connections.get(session.session_id)
        if found is None:
            found = await self.server.next_connection()
            self._connections[session.session_id] = found
        return found


class OpenAISide(_ServerSide):
    """The OpenAI Realtime test server's side."""

    cancel_reason = "turn_detected"

    def __init__(self, server: Any) -> None:
        from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy

        super().__init__(server)
        fast = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0)
        self.provider = OpenAIRealtimeProvider(api_key="sk", url=server.url, reconnect=fast)

    async def tool_call(
        self,
        session: VoiceSession,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        interruptible: bool = False,
    ) -> str:
        conn = await self.conn(session)
        return str(await conn.function_call(name, arguments, finish=not interruptible))

    async def cancel(self, session: VoiceSession, call_id: str) -> None:
        conn = await self.conn(session)
        await conn.end_response(status="cancelled", reason="turn_detected", incomplete=[call_id])

    async def assistant_says(self, session: VoiceSession, text: str) -> None:
        await (await self.conn(session)).speak(text)

    async def user_says(self, session: VoiceSession, text: str) -> None:
        await (await self.conn(session)).transcribe_user(text)

    async def tool_result(self, session: VoiceSession, call_id: str) -> tuple[str, bool]:
        text = str(await (await self.conn(session)).expect_function_call_output(call_id))
        return text, _is_error_text(text)

    async def context(self, session: VoiceSession, prefix: str) -> str:
        def matches(event: dict[str, Any]) -> bool:
            item = event.get("item", {})
            content = item.get("content") or [{}]
            return item.get("type") == "message" and str(content[0].get("text", "")).startswith(
                prefix
            )

        event = await (await self.conn(session)).expect("conversation.item.create", matches)
        return str(event["item"]["content"][0]["text"])

    def delivered(self, session: VoiceSession) -> int:
        conn = self._connections.get(session.session_id)
        return 0 if conn is None else int(conn.count("conversation.item.create"))


class GeminiSide(_ServerSide):
    """The Gemini Live test server's side."""

    cancel_reason = "interrupted"

    def __init__(self, server: Any) -> None:
        from providers.gemini_live import GeminiLiveProvider, ReconnectPolicy

        super().__init__(server)
        fast = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0)
        self.provider = GeminiLiveProvider(api_key="g", url=server.url, reconnect=fast)

    async def tool_call(
        self,
        session: VoiceSession,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        interruptible: bool = False,
    ) -> str:
        if isinstance(arguments, str):
            raise TypeError("the Live API's function calls carry an object, not text")
        return str(await (await self.conn(session)).function_call(name, arguments))

    async def cancel(self, session: VoiceSession, call_id: str) -> None:
        conn = await self.conn(session)
        await conn.interrupt()
        await conn.cancel(call_id)

    async def assistant_says(self, session: VoiceSession, text: str) -> None:
        await (await self.conn(session)).speak(text)

    async def user_says(self, session: VoiceSession, text: str) -> None:
        await (await self.conn(session)).transcribe_user(text)

    async def tool_result(self, session: VoiceSession, call_id: str) -> tuple[str, bool]:
        response = await (await self.conn(session)).expect_tool_response(call_id)
        return response.text, response.is_error

    async def context(self, session: VoiceSession, prefix: str) -> str:
        text, _ = await (await self.conn(session)).expect_turn(prefix)
        return str(text)

    def delivered(self, session: VoiceSession) -> int:
        conn = self._connections.get(session.session_id)
        if conn is None:
            return 0
        return int(conn.count("toolResponse") + conn.count("clientContent"))


@contextlib.asynccontextmanager
async def open_side(kind: str) -> AsyncIterator[ModelSide]:
    """A side of ``kind`` (``mock``, ``openai`` or ``gemini``), with its server running; on
    exit, fails if the server rejected anything the provider sent."""
    if kind == "mock":
        yield MockSide()
        return
    if kind == "openai":
        from providers.openai_realtime_testing import RealtimeTestServer

        async with RealtimeTestServer(api_key="sk") as openai_server:
            yield OpenAISide(openai_server)
        assert openai_server.invalid == [], "the OpenAI server rejected client events"
        return
    import pytest

    pytest.importorskip("google.genai", reason="the gemini extra (google-genai) is not installed")
    from providers.gemini_live_testing import (
        LiveTestServer,
        validate_client_message,
        validate_server_message,
    )

    async with LiveTestServer(api_key="g") as gemini_server:
        yield GeminiSide(gemini_server)
    assert gemini_server.invalid == [], "the Live server rejected client messages"
    for conn in gemini_server.connections:  # both ways, in the strict camelCase wire form
        for message in conn.received:
            validate_client_message(message, strict=True)
        for message in conn.sent:
            validate_server_message(message, strict=True)
