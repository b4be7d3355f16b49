"""On the realtime side too, a call the provider ran itself (an OpenAI Realtime MCP call) is
reported as served and never run or answered."""

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
