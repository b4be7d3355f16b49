"""Latency from ``resolve()`` to the tool result on the wire: Gemini Live vs OpenAI Realtime.

For each of N calls the loopback server emits a function call for a human-input tool; when the
request is announced, the bench resolves it and measures the time until the server has
received the frame carrying the result (timestamped on arrival, before validation): the
``toolResponse`` for Gemini, the ``conversation.item.create`` for OpenAI (the OpenAI half is
``bench_openai_realtime.py``'s own loop). Client and server share one event loop, as in the
tests. It also checks every message of the Gemini run, both ways, against the ``google-genai``
types in the strict camelCase wire form, and prints the counts.

Run: ``python bench/bench_gemini_live.py [N]`` (extras ``gemini`` and ``openai``).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_openai_realtime import ASK
from bench_openai_realtime import main as openai_main

from providers.gemini_live import GeminiLiveProvider
from providers.gemini_live_testing import (
    LiveTestServer,
    validate_client_message,
    validate_server_message,
)
from voice_hitl import HumanInputToolHandler, RealtimeVoiceChannel
from voice_hitl.testing import RequestQueue


async def gemini_main(calls: int) -> tuple[list[float], int, int]:
    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    requests = RequestQueue(human.handler, "voice")
    latencies: list[float] = []
    async with LiveTestServer() as server:
        provider = GeminiLiveProvider(api_key="bench", url=server.url)
        voice = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human)
        session = await voice.start_session("room")
        conn = await server.next_connection()
        await conn.expect("setup")
        for i in range(calls):
            call_id = await conn.function_call("AskUserQuestion", {"question": f"q{i}"})
            event = await requests.next()
            start = time.perf_counter()
            human.handler.resolve(event.pending_id, "yes")
            await conn.expect_tool_response(call_id)
            index = max(
                n
                for n, message in enumerate(conn.received)
                if any(
                    entry.get("id") == call_id
                    for entry in message.get("toolResponse", {}).get("functionResponses", [])
                )
            )
            latencies.append(conn.received_at[index] - start)
            if i % 10 == 9:
                await conn.finish_turn()  # the server moves past what was written
        await voice.end_session(session)
        await voice.close()
    assert server.invalid == [], server.invalid
    for message in conn.received:
        validate_client_message(message, strict=True)
    for message in conn.sent:
        validate_server_message(message, strict=True)
    return latencies, len(conn.received), len(conn.sent)


def figures(latencies: list[float]) -> tuple[float, float, float]:
    ms = sorted(x * 1000 for x in latencies)
    p99 = ms[min(len(ms) - 1, round(0.99 * len(ms)) - 1)]
    return statistics.median(ms), p99, ms[-1]


async def run(calls: int) -> None:
    gemini, client_messages, server_messages = await gemini_main(calls)
    openai = await openai_main(calls)
    print(f"resolve() -> tool result frame at the loopback server, {calls} calls each")
    for name, latencies in (("Gemini Live", gemini), ("OpenAI Realtime", openai)):
        p50, p99, top = figures(latencies)
        print(f"  {name:16} p50 {p50:.3f} ms   p99 {p99:.3f} ms   max {top:.3f} ms")
    print(
        f"Gemini run checked against google-genai types (strict camelCase): "
        f"{client_messages} client messages, {server_messages} server messages"
    )


if __name__ == "__main__":
    asyncio.run(run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
