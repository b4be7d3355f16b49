#!/usr/bin/env python3
"""How long a Pipecat pipeline takes to stop while a human-input call waits for a person.

Before: a plain Pipecat function handler that awaits ``HumanInputToolHandler`` (what one
would write by hand). After: the handlers from ``providers.pipecat.human_input_functions``.
For each, a real pipeline (offline: the fake LLM service from ``tests/pipecat_rig.py``) gets a
function call, then is cancelled (``worker.cancel()``, as on hang-up), ended (``EndFrame``)
or interrupted (``InterruptionFrame``). Printed: time from that moment to the pipeline's end
(to the request's withdrawal, for an interruption) and how the request ended. Run::

    python bench/bench_pipecat_cancel.py [--runs 20] [--wait 3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import providers.pipecat  # noqa: F401, I001  (quiets pipecat's audioop warning first)
from loguru import logger as pipecat_log
from pipecat.frames.frames import EndFrame, InterruptionFrame
from pipecat.services.llm_service import FunctionCallParams
from pipecat_rig import FakeLLM, Running

from providers.pipecat import human_input_functions
from voice_hitl import (
    ASK_USER_QUESTION,
    ChannelType,
    HumanInputToolHandler,
    RequestEvent,
    RequestSettled,
    ToolCallContext,
    tool_context,
)


def naive(llm: FakeLLM, human: HumanInputToolHandler) -> None:
    async def ask(params: FunctionCallParams) -> None:
        context = ToolCallContext(
            "", params.tool_call_id, "bench", ChannelType.REALTIME_VOICE, None
        )
        with tool_context(context):
            text = await human(params.function_name, dict(params.arguments))
        await params.result_callback(text)

    llm.register_function("AskUserQuestion", ask)


async def once(bridge: bool, how: str, wait: float) -> tuple[float, str]:
    human = HumanInputToolHandler(
        {"AskUserQuestion"}, timeout=wait, tool_definitions=[ASK_USER_QUESTION]
    )
    opened = asyncio.Event()
    settled: list[RequestSettled] = []
    done = asyncio.Event()

    def observe(event: RequestEvent) -> None:
        if event.type == "opened":
            opened.set()
        elif isinstance(event, RequestSettled):
            settled.append(event)
            done.set()

    human.handler.add_observer(observe)
    llm = FakeLLM()
    if bridge:
        human_input_functions(llm, human)
    else:
        naive(llm, human)
    async with Running(llm) as pipeline:
        await pipeline.call("AskUserQuestion", "c1", question="Which account?")
        await opened.wait()
        start = time.perf_counter()
        if how == "cancel":
            await pipeline.worker.cancel()
            await pipeline.finished()
        elif how == "end":
            await pipeline.worker.queue_frame(EndFrame())
            await pipeline.finished()
        else:
            await pipeline.worker.queue_frame(InterruptionFrame())
            await done.wait()
        elapsed = time.perf_counter() - start
    outcome = settled[0] if settled else None
    what = "open" if outcome is None else f"{outcome.outcome}: {outcome.detail or outcome.text}"
    return elapsed, what


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--wait", type=float, default=3.0, help="the handler's timeout (s)")
    args = parser.parse_args()
    pipecat_log.remove()
    logging.disable(logging.CRITICAL)
    import pipecat

    print(f"pipecat-ai {pipecat.version() if callable(getattr(pipecat, 'version', None)) else ''}"
          f", {args.runs} runs, a person never answers (timeout {args.wait:g}s)")
    for how in ("cancel", "end", "interrupt"):
        for bridge in (False, True):
            times, outcomes = [], set()
            for _ in range(args.runs):
                elapsed, what = await once(bridge, how, args.wait)
                times.append(elapsed * 1000)
                outcomes.add(what)
            label = "bridge" if bridge else "plain handler"
            print(f"{how:9} {label:13} median {statistics.median(times):7.2f} ms, "
                  f"max {max(times):7.2f} ms; request: {' | '.join(sorted(outcomes))}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
