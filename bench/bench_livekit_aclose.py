"""How long ``AgentSession.aclose()`` takes while a human-input tool waits for a person.

Before: a plain LiveKit ``function_tool`` that awaits ``HumanInputToolHandler.ask`` (what one
would write by hand). LiveKit never cancels a running tool, so ``aclose()`` waits for the
handler's own timeout. After: the tools from ``providers.livekit.human_input_tools``, which
withdraw the request when the session closes.

Offline: a real ``AgentSession`` (no room, no server, no network) on the fake realtime model
from ``tests/livekit_fakes.py``. Run::

    python bench/bench_livekit_aclose.py [--wait 3] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from livekit.agents import Agent, AgentSession, RunContext, function_tool, llm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from livekit_fakes import FakeRealtimeModel

from providers.livekit import human_input_tools
from providers.livekit._convert import raw_schema
from voice_hitl import (
    AITool,
    ChannelType,
    HumanInputToolHandler,
    ToolCallContext,
    tool_context,
)
from voice_hitl.testing import RequestQueue

ASK = AITool(
    name="AskUserQuestion",
    description="Ask the caller a question.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)
CHANNEL = "bench"


def plain_tools(human: HumanInputToolHandler) -> list[Any]:
    """The naive bridge: ask and wait, under the handler's timeout, nothing else."""

    async def ask(raw_arguments: dict[str, Any], context: RunContext[Any]) -> str:
        ctx = ToolCallContext(
            "", context.function_call.call_id, CHANNEL, ChannelType.REALTIME_VOICE, None
        )
        with tool_context(ctx):
            try:
                return await human.ask("AskUserQuestion", raw_arguments)
            except Exception as exc:
                raise llm.ToolError(str(exc)) from exc

    return [function_tool(ask, raw_schema=raw_schema(ASK))]


async def one_run(kind: str, wait: float, action: str) -> tuple[float, bool]:
    """Seconds ``action`` took, and whether a late answer was refused."""
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=wait, tool_definitions=[ASK])
    requests = RequestQueue(human.handler, CHANNEL)
    tools = plain_tools(human) if kind == "plain" else human_input_tools(human, channel_id=CHANNEL)
    model = FakeRealtimeModel()
    session: AgentSession[Any] = AgentSession(
        llm=model,
        vad=None,
        turn_handling={"turn_detection": "realtime_llm"},
        user_away_timeout=None,
    )
    await session.start(Agent(instructions="bench", tools=tools))
    model.sessions[-1].call_tool("AskUserQuestion", {"question": "refund?"}, f"call_{kind}")
    event = await requests.next()
    start = time.perf_counter()
    if action == "aclose":
        await session.aclose()
    else:
        await session.interrupt()
    elapsed = time.perf_counter() - start
    refused = not human.handler.resolve(event.pending_id, "late answer")
    await session.aclose()
    await human.handler.close()
    return elapsed, refused


def summary(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    return f"p50 {statistics.median(ms):.2f} ms, max {ms[-1]:.2f} ms over {len(ms)} runs"


async def main(wait: float, runs: int) -> None:
    print(
        f"livekit-agents AgentSession, fake realtime model, human never answers (wait {wait:g} s)"
    )
    plain, plain_refused = await one_run("plain", wait, "aclose")
    print(
        f"  before: plain function_tool      aclose {plain:7.3f} s "
        f"({plain / wait:.2f} x the wait; the request ran to its own timeout: {plain_refused})"
    )
    plain_interrupt, _ = await one_run("plain", wait, "interrupt")
    print(
        f"  before: plain function_tool   interrupt {plain_interrupt:7.3f} s "
        "(LiveKit gives up on the speech after 5 s, never cancels the tool)"
    )
    ours = [await one_run("voice-hitl", wait, "aclose") for _ in range(runs)]
    closes = [s for s, _ in ours]
    print(
        f"  after:  human_input_tools        aclose {summary(closes)}; "
        f"late answer refused in {sum(r for _, r in ours)}/{runs}"
    )
    interrupts = [await one_run("voice-hitl", wait, "interrupt") for _ in range(runs)]
    print(f"  after:  human_input_tools    interrupt {summary([s for s, _ in interrupts])}")
    print(f"  speed-up of aclose (before / after p50): {plain / statistics.median(closes):.0f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=3.0, help="the handler's timeout (s)")
    parser.add_argument("--runs", type=int, default=20, help="runs of the fast path")
    args = parser.parse_args()
    # LiveKit logs every withdrawn call as a ToolError warning; keep the figures readable.
    logging.basicConfig(level=logging.ERROR)
    asyncio.run(main(args.wait, args.runs))
