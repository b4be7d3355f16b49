"""``AIChannel.close()`` during a stalled model request: how soon does the turn end?

For each text provider (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions through
their SDK clients against the loopback servers, which take the request and never answer; and
``MockAIProvider`` with a step that never returns), ``-n`` times: a turn is started, the
request reaches the server (or the mock's step starts), then ``close()`` is called. Timed from
just before ``close()``:

- ``turn ends``: until the turn's task is done (it raises ``ChannelClosedError``);
- ``close() returns``: until ``close()`` itself returns (it waits for the request to settle);
- ``server saw the drop``: until the loopback server is seen to have read the connection's
  end, looked at once the turn has ended (an upper bound; SDK providers only).

Before this change the turn kept waiting for the SDK's own timeout (600 s). A fresh channel
per run, one provider (and client) per vendor. Printed: p50, p99 and max per figure.

Run: ``nice -n 10 python bench/bench_ai_close.py [-n 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

from providers.anthropic import AnthropicAIProvider, AnthropicTestServer
from providers.mock_text import MockAIProvider
from providers.openai_text import (
    ChatTestServer,
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    ResponsesTestServer,
)
from voice_hitl import AIChannel, AIContext, AIResponse, ChannelClosedError


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"p50 {statistics.median(ordered) * 1e3:7.2f} ms  p99 {p99 * 1e3:7.2f} ms  "
        f"max {ordered[-1] * 1e3:7.2f} ms"
    )


async def _one(
    ai: AIChannel, arrived: Callable[[], Any], dropped: Callable[[], Any] | None = None
) -> tuple[float, float, float]:
    """One run: (turn ends, close() returns, server sees the drop), each from before close()."""
    ended: list[float] = []

    async def turn() -> None:
        try:
            await ai.respond("hello")
        except ChannelClosedError:
            ended.append(time.perf_counter())  # the turn's caller has its error

    task = asyncio.create_task(turn())
    await arrived()
    start = time.perf_counter()
    await ai.close()
    returned = time.perf_counter()
    await task
    if not ended:  # pragma: no cover - the figure would be meaningless
        raise AssertionError("the turn ended without ChannelClosedError")
    if dropped is not None:
        await dropped()
    return ended[0] - start, returned - start, time.perf_counter() - start


async def _vendor(name: str, server_type: Any, provider_type: Any, runs: int) -> None:
    turn_ends: list[float] = []
    close_returns: list[float] = []
    drops: list[float] = []
    async with server_type(reply_timeout=600) as server:
        provider = provider_type("m", api_key="bench", base_url=server.url, max_retries=0)
        for index in range(runs):
            ai = AIChannel(f"bench-{index}", provider=provider)
            ended, returned, drop = await _one(
                ai, server.next_request, functools.partial(server.wait_dropped, index + 1)
            )
            drops.append(drop)
            turn_ends.append(ended)
            close_returns.append(returned)
        await provider.aclose()
    print(f"{name:<22} turn ends          {_ms(turn_ends)}")
    print(f"{'':<22} close() returns    {_ms(close_returns)}")
    print(f"{'':<22} server saw drop    {_ms(drops)}  (upper bound)")


async def _mock(runs: int) -> None:
    turn_ends: list[float] = []
    close_returns: list[float] = []
    for index in range(runs):
        started = asyncio.Event()

        async def never(context: AIContext, started: asyncio.Event = started) -> AIResponse:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        ai = AIChannel(f"bench-{index}", provider=MockAIProvider([never]))
        ended, returned, _ = await _one(ai, started.wait)
        turn_ends.append(ended)
        close_returns.append(returned)
    print(f"{'MockAIProvider':<22} turn ends          {_ms(turn_ends)}")
    print(f"{'':<22} close() returns    {_ms(close_returns)}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="runs per provider")
    args = parser.parse_args()
    print(f"close() during a stalled model request, {args.n} runs each")
    await _mock(args.n)
    await _vendor("Anthropic Messages", AnthropicTestServer, AnthropicAIProvider, args.n)
    await _vendor("OpenAI Responses", ResponsesTestServer, OpenAIResponsesProvider, args.n)
    await _vendor("OpenAI Chat", ChatTestServer, OpenAIChatProvider, args.n)


if __name__ == "__main__":
    asyncio.run(main())
