"""The approval step's cost in ``ToolGate``.

Two figures:

* **added cost on a tool that needs no approval**: ``gate.call`` of a host tool (an async
  handler that returns at once), 20,000 calls, with no approvals at all against approvals
  declared for other tools (one per-tool policy and one ``when=`` rule that does not apply).
  The difference per call is what the step adds to every ungated call. Best of ``--repeats``
  runs, the two configurations interleaved, gc disabled while timing. Target: under 2 us.
  The gate's whole call costs tens of microseconds and varies by more than that on a shared
  machine, so the step is also timed alone: the no-kit check and the lookup of the gate's and
  the kit's policies on the ungated call (``ToolGate.approval_for``), 100,000 times.
* **yes -> handler**: a gated tool's call waits on its ``ConfirmAction`` request; the time from
  ``resolve(...)`` (the person's yes reaching the handler) to the tool's handler starting,
  ``--samples`` calls, p50 / p99 / max.

Run it: ``nice -n 10 python bench/bench_gate_approval.py``. It exits 0 whatever the figures
(``--check`` makes a missed target exit 1).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from typing import Any

from voice_hitl import (
    ASK_USER_QUESTION as ASK,
)
from voice_hitl import (
    AITool,
    ChannelType,
    Door,
    HumanInputToolHandler,
    RequestEvent,
    ToolApprovals,
    ToolCall,
    ToolGate,
    VoiceKit,
)

TARGET_US = 2.0

LOOKUP = AITool(
    name="lookup",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)
TRANSFER = AITool(
    name="transfer",
    parameters={
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
    },
)


async def _host(name: str, arguments: dict[str, Any]) -> str:
    return "ok"


def _declared() -> ToolApprovals:
    approvals = ToolApprovals()
    approvals.require("transfer")
    approvals.require(when=lambda name, args: name == "wire" and args.get("amount", 0) > 100)
    return approvals


async def _time_calls(gate: ToolGate, calls: int) -> float:
    call = ToolCall("lookup", {"key": "k"}, "c1", "room", door=Door.PROVIDER)
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            await gate.call(call)
        return (time.perf_counter() - start) / calls
    finally:
        gc.enable()


async def added_cost(calls: int, repeats: int) -> tuple[float, float]:
    """Best seconds per call without approvals and with approvals declared for other tools."""
    plain = _gate()
    plain.kit = VoiceKit()  # no approvals declared (a gate with host tools needs a kit)
    gated = _gate()
    gated.approvals = _declared()
    gated.kit = _kit()  # the gate's own and the kit's policies, all for other tools
    assert (await gated.call(ToolCall("lookup", {"key": "k"}))).outcome == "ok"
    await _time_calls(plain, calls // 10)  # warm-up
    await _time_calls(gated, calls // 10)
    best_plain = best_gated = float("inf")
    for _ in range(repeats):
        best_plain = min(best_plain, await _time_calls(plain, calls))
        best_gated = min(best_gated, await _time_calls(gated, calls))
    return best_plain, best_gated


async def yes_to_handler(samples: int) -> list[float]:
    """Seconds from ``resolve`` of the approval to the gated tool's handler starting."""
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=60, tool_definitions=[ASK])
    started: list[float] = []
    opened: asyncio.Queue[str] = asyncio.Queue()

    async def host(name: str, arguments: dict[str, Any]) -> str:
        started.append(time.perf_counter())
        return "done"

    def observe(event: RequestEvent) -> None:
        if event.type == "opened":
            opened.put_nowait(event.pending_id)

    human.handler.add_observer(observe)
    gate = ToolGate(
        "c", ChannelType.REALTIME_VOICE, tools=[TRANSFER], tool_handler=host, human_input=human
    )
    gate.approvals = _declared()
    latencies: list[float] = []
    for n in range(samples):
        call = ToolCall("transfer", {"amount": n, "to": "savings"}, f"c{n}", "room")
        task = asyncio.create_task(gate.call(call))
        pending_id = await opened.get()
        resolved_at = time.perf_counter()
        human.handler.resolve(pending_id, '{"answer": true}')
        result = await task
        assert result.outcome == "ok", result
        latencies.append(started[-1] - resolved_at)
    return latencies


def _gate() -> ToolGate:
    """A gate serving the host tools, with a human-input handler to ask approvals through."""
    human = HumanInputToolHandler({"AskUserQuestion"}, timeout=60, tool_definitions=[ASK])
    tools = [LOOKUP, TRANSFER]
    return ToolGate(
        "c", ChannelType.REALTIME_VOICE, tools=tools, tool_handler=_host, human_input=human
    )


def _kit() -> VoiceKit:
    kit = VoiceKit()
    kit.require_approval("wire")
    kit.require_approval(when=lambda name, args: name == "wire" and args.get("amount", 0) > 9)
    return kit


def step_cost(calls: int, repeats: int) -> float:
    """Best seconds per approval step of an ungated call: ``ToolGate.approval_for`` (the
    no-kit check and the lookup of the gate's and the kit's policies, both declared for
    other tools)."""
    gate = _gate()
    gate.approvals = _declared()
    gate.kit = _kit()
    arguments = {"key": "k"}
    lookup = gate.approval_for
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                lookup("lookup", arguments)
            best = min(best, (time.perf_counter() - start) / calls)
    finally:
        gc.enable()
    return best


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--samples", type=int, default=2_000)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    plain, gated = await added_cost(args.calls, args.repeats)
    added_us = (gated - plain) * 1e6
    print(
        f"gate.call, ungated host tool: {plain * 1e6:.2f} us without approvals, "
        f"{gated * 1e6:.2f} us with approvals declared for other tools: "
        f"added {added_us:+.2f} us per call (target < {TARGET_US} us)"
    )
    step = step_cost(args.calls * 5, args.repeats)
    print(f"the step alone (no-kit check + gate and kit policy lookup): {step * 1e6:.3f} us")
    latencies = await yes_to_handler(args.samples)
    print(
        f"yes -> gated tool handler starts ({args.samples} calls): "
        f"p50 {_quantile(latencies, 0.5) * 1e6:.1f} us, "
        f"p99 {_quantile(latencies, 0.99) * 1e6:.1f} us, "
        f"max {max(latencies) * 1e6:.1f} us, mean {statistics.fmean(latencies) * 1e6:.1f} us"
    )
    return 1 if args.check and min(added_us, step * 1e6) >= TARGET_US else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
