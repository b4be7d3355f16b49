"""On the realtime side too, a call the provider ran itself (an OpenAI Realtime MCP call, a
Gemini Live server-side code execution) is reported as served and never run or answered."""

from __future__ import annotations

from typing import Any

import pytest
from doors import LOOKUP, Observed

pytest.importorskip("openai")

from providers.openai_realtime import OpenAIRealtimeProvider, ReconnectPolicy
from providers.openai_realtime_testing import RealtimeTestServer
from voice_hitl import RealtimeVoiceChannel, VoiceKit

FAST = ReconnectPolicy(max_attempts=1, initial_delay=0.0, max_delay=0.0, open_timeout=5.0)


async def test_realtime_mcp_call_is_reported_served_and_never_run() -> None:
    ran: list[str] = []

    async def host(name: str, arguments: dict[str, Any]) -> str:
        ran.append(name)
        return "ran here"

    async with RealtimeTestServer(api_key="sk-test") as server:
        kit = VoiceKit()
        observed = Observed.on(kit)
        provider = OpenAIRealtimeProvider(api_key="sk-test", url=server.url, reconnect=FAST)
        voice = RealtimeVoiceChannel("voice", provider=provider, tools=[LOOKUP], tool_handler=host)
        kit.register_channel(voice)
        await voice.start_session("room-1", participant_id="caller-7")
        conn = await server.next_connection()
        await conn.expect("session.update")
        response_id = await conn.begin_response()
        for item in (
            {"output": "42"},
            {"error": {"type": "tool_execution_error", "message": "CRM down"}},
        ):
            await conn.send(
                {
                    "type": "response.output_item.done",
                    "event_id": f"evt_{len(item)}_{next(iter(item))}",
                    "response_id": response_id,
                    "output_index": 0,
                    "item": {
                        "type": "mcp_call",
                        "id": f"mcp_{next(iter(item))}",
                        "server_label": "crm",
                        "name": "lookup",
                        "arguments": '{"key": "k"}',
                        **item,
                    },
                }
            )
        first = await observed.reports.get()
        second = await observed.reports.get()
        await conn.end_response()
        await kit.aclose()
    assert server.invalid == []
    assert (first.served, first.outcome, first.result, first.actor_id) == (
        True,
        "ok",
        "42",
        "caller-7",
    )
    assert (second.served, second.outcome, second.error_detail) == (True, "failed", "CRM down")
    assert ran == []
    assert conn.count("conversation.item.create") == 0  # nothing answered for either call


async def test_gemini_code_execution_is_reported_served_and_never_answered() -> None:
    pytest.importorskip("google.genai")
    from providers.gemini_live import GeminiLiveProvider
    from providers.gemini_live_testing import LiveTestServer, validate_server_message

    ran: list[str] = []

    async def host(name: str, arguments: dict[str, Any]) -> str:
        ran.append(name)
        return "ran here"

    async with LiveTestServer(api_key="g-test") as server:
        kit = VoiceKit()
        observed = Observed.on(kit)
        provider = GeminiLiveProvider(api_key="g-test", url=server.url)
        voice = RealtimeVoiceChannel("voice", provider=provider, tools=[LOOKUP], tool_handler=host)
        kit.register_channel(voice)
        await voice.start_session("room-1", participant_id="caller-7")
        conn = await server.next_connection()
        ok = [
            {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
        ]
        failed = [
            {"executableCode": {"language": "PYTHON", "code": "1/0"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError"}},
        ]
        messages = [
            {"serverContent": {"modelTurn": {"parts": ok}}},
            {"serverContent": {"modelTurn": {"parts": failed}, "turnComplete": True}},
        ]
        for message in messages:
            validate_server_message(message, strict=True)
            await conn.send(message)
        first = await observed.reports.get()
        second = await observed.reports.get()
        await kit.aclose()
    assert (first.served, first.tool_name, first.outcome, first.result) == (
        True,
        "code_execution",
        "ok",
        "42\n",
    )
    assert first.arguments == {"language": "PYTHON", "code": "print(6 * 7)"}
    assert (second.served, second.outcome, second.error_detail) == (
        True,
        "failed",
        "ZeroDivisionError",
    )
    assert ran == [] and conn.count("toolResponse") == 0
