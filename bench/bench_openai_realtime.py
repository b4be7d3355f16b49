"""Latency from ``resolve()`` to the ``function_call_output`` frame at a loopback server.

For each of N calls the loopback Realtime server emits a function call for a human-input
tool; when the request is announced, the bench resolves it and measures the time until the
server has received the ``conversation.item.create`` frame carrying the output (timestamped on
arrival, before the server validates it). Client and server share one event loop, as in the
tests. Run: ``python bench/bench_openai_realtime.py [N]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from providers.openai_realtime import OpenAIRealtimeProvider
from providers.openai_realtime_testing import RealtimeTestServer
from voice_hitl import AITool, HumanInputToolHandler, RealtimeVoiceChannel
from voice_hitl.testing import RequestQueue

ASK = AITool(
    name="AskUserQuestion",
    parameters={"type": "object", "properties": {"question": {"type": "string"}}},
)


async def main(calls: int) -> list[float]:
    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    requests = RequestQueue(human.handler, "voice")
    latencies: list[float] = []
    async with RealtimeTestServer() as server:
        provider = OpenAIRealtimeProvider(api_key="bench", url=server.url)
        voice = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human)
        session = await voice.start_session("room")
        conn = await server.next_connection()
        await conn.expect("session.update")
        for i in range(calls):
            call_id = await conn.function_call("AskUserQuestion", {"question": f"q{i}"})
            event = await requests.next()
            start = time.perf_counter()
            human.handler.resolve(event.pending_id, "yes")
            await conn.expect_function_call_output(call_id)
            index = max(
                n
                for n, sent in enumerate(conn.received)
                if sent.get("item", {}).get("call_id") == call_id
            )
            latencies.append(conn.received_at[index] - start)
        await voice.end_session(session)
        await voice.close()
    return latencies


def report(latencies: list[float]) -> None:
    ms = sorted(x * 1000 for x in latencies)
    p50 = statistics.median(ms)
    p99 = ms[min(len(ms) - 1, round(0.99 * len(ms)) - 1)]
    print(f"resolve() -> function_call_output at the loopback server, {len(ms)} calls")
    print(f"  p50 {p50:.3f} ms   p99 {p99:.3f} ms   max {ms[-1]:.3f} ms   (target p50 < 2 ms)")


if __name__ == "__main__":
    report(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)))
