"""What does ``AIChannel``'s tool loop cost, and how fast does an answer reach the model?

1. Overhead per round (mock provider, so the model costs nothing): a turn of ``--rounds``
   rounds, each round one model response with no call, one host tool call, or one
   human-input call answered as soon as its request opens (by a request observer, so no hook
   adds to the figure); with a kit (an ``ON_TOOL_CALL`` observer) and without. Printed: the
   median per-round time over ``--repeats`` turns.
2. ``resolve()`` -> the next model request at the loopback server, for the Anthropic Messages
   and OpenAI Responses providers (their SDK clients over HTTP on 127.0.0.1, every request and
   reply checked against the SDK's types in the server, as in the tests): the model asks
   ``AskUserQuestion``; the time runs from just before ``resolve()`` until the server has the
   next request with the answer in it (each answer in a fresh room, so every request carries
   the same three-message conversation). Printed: p50, p99 and max over ``-n`` answers.

Run: ``nice -n 10 python bench/bench_ai_channel.py [--rounds 200] [--repeats 5] [-n 300]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

from providers.mock_text import MockAIProvider, tool_call
from voice_hitl import (
    AIChannel,
    AIContext,
    AIResponse,
    AITool,
    HookTrigger,
    HumanInputToolHandler,
    RequestEvent,
    VoiceKit,
)

ASK = AITool(
    name="AskUserQuestion",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)
LOOKUP = AITool(name="lookup", parameters={"type": "object", "properties": {}})


async def _host(name: str, arguments: dict[str, Any]) -> str:
    return "ok"


def _answer_at_once(human: HumanInputToolHandler) -> None:
    def on_event(event: RequestEvent) -> None:
        if event.type == "opened":
            asyncio.get_running_loop().call_soon(human.handler.resolve, event.pending_id, "yes")

    human.handler.add_observer(on_event)


async def _per_round(kind: str, rounds: int, with_kit: bool) -> float:
    def step(context: AIContext) -> AIResponse:
        if len(context.messages) >= 2 * rounds:
            return AIResponse(text="end")
        if kind == "human":
            return AIResponse(tool_calls=[tool_call("AskUserQuestion", {"question": "Q?"})])
        return AIResponse(tool_calls=[tool_call("lookup")])

    human = HumanInputToolHandler({"AskUserQuestion"}, tool_definitions=[ASK])
    _answer_at_once(human)
    provider = MockAIProvider([step] * (rounds + 1))
    if kind == "none":  # a turn per round, no call: the loop's floor
        provider = MockAIProvider([AIResponse(text="x")] * rounds)
    ai = AIChannel(
        "bench",
        provider=provider,
        tool_handler=_host,
        human_input_handler=human,
        tools=[LOOKUP],
        max_rounds=rounds + 2,
    )
    kit = VoiceKit()
    if with_kit:

        @kit.hook(HookTrigger.ON_TOOL_CALL)
        async def observe(event: object, ctx: object) -> None:
            return None

        kit.register_channel(ai)
    start = time.perf_counter()
    if kind == "none":
        for _ in range(rounds):
            await ai.respond("hi")
    else:
        await ai.respond("hi")
    elapsed = time.perf_counter() - start
    await ai.close()
    await kit.aclose()
    return elapsed / rounds


async def overhead(rounds: int, repeats: int) -> None:
    print(f"tool-loop overhead per round (mock provider, {rounds} rounds, median of {repeats})")
    for with_kit in (False, True):
        for kind, label in (
            ("none", "no tool call"),
            ("host", "one host tool call"),
            ("human", "one human-input call, answered at once"),
        ):
            figures = [await _per_round(kind, rounds, with_kit) for _ in range(repeats)]
            kit_label = "kit + ON_TOOL_CALL observer" if with_kit else "no kit"
            print(f"  {label:40s} {kit_label:28s} {statistics.median(figures) * 1e6:8.1f} µs")


async def _latency(name: str, make: Callable[[], Any], answers: int) -> None:
    server_cls, provider_factory, queue_ask, queue_end = make()
    deltas: list[float] = []
    async with server_cls() as server:
        provider = provider_factory(server.url)
        human = HumanInputToolHandler({"AskUserQuestion"}, timeout=30, tool_definitions=[ASK])
        opened: asyncio.Queue[str] = asyncio.Queue()
        human.handler.add_observer(
            lambda event: opened.put_nowait(event.pending_id) if event.type == "opened" else None
        )
        ai = AIChannel("bench", provider=provider, human_input_handler=human)
        for n in range(answers):
            queue_ask(server)
            queue_end(server)
            # A room per answer: every request carries the same short conversation.
            turn = asyncio.create_task(ai.respond("go", room_id=f"bench-{n}"))
            await server.next_request()
            pending_id = await opened.get()
            await asyncio.sleep(0.001)  # let the round settle into its wait
            started = time.perf_counter()
            human.handler.resolve(pending_id, "yes")
            arrived = await server.next_request()
            deltas.append(arrived.arrived - started)
            await turn
        await ai.close()
        await provider.aclose()
    deltas.sort()
    p50 = deltas[len(deltas) // 2] * 1e3
    p99 = deltas[min(len(deltas) - 1, int(len(deltas) * 0.99))] * 1e3
    print(f"  {name:28s} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   max {deltas[-1] * 1e3:6.2f} ms")


def _anthropic() -> Any:
    from providers.anthropic import AnthropicAIProvider, AnthropicTestServer

    return (
        AnthropicTestServer,
        lambda url: AnthropicAIProvider("m", api_key="bench", base_url=url, max_retries=0),
        lambda server: server.reply_tool_use(("AskUserQuestion", {"question": "Q?"})),
        lambda server: server.reply_text("done"),
    )


def _responses() -> Any:
    from providers.openai_text import OpenAIResponsesProvider, ResponsesTestServer

    return (
        ResponsesTestServer,
        lambda url: OpenAIResponsesProvider("m", api_key="bench", base_url=url, max_retries=0),
        lambda server: server.reply_function_calls(("AskUserQuestion", '{"question": "Q?"}')),
        lambda server: server.reply_text("done"),
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("-n", type=int, default=300, help="answers per provider")
    args = parser.parse_args()
    await overhead(args.rounds, args.repeats)
    print(f"resolve() -> next model request at the loopback server ({args.n} answers)")
    await _latency("Anthropic Messages (SDK)", _anthropic, args.n)
    await _latency("OpenAI Responses (SDK)", _responses, args.n)


if __name__ == "__main__":
    asyncio.run(main())
