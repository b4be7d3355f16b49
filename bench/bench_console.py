"""Benchmark the operator console in Chromium with many open requests.

What is measured (headless Debian Chromium driven by Playwright, the service on loopback over a
``MemoryBoard``, one worker's ``HumanInputHandler`` bridged to it):

* **first paint**: the page's first-contentful-paint (ms after navigation start);
* **snapshot**: the console's handling of the feed's first snapshot with ``--open`` requests
  (building, sorting and inserting every card; ms of script), and when the next frame after it
  was painted (ms after navigation start);
* **tick**: the once-a-second refresh of every open card's countdown and urgency (script);
* **per update**: ``--updates`` requests opened one at a time, then as many answered, each
  waited for in the page; the console's handling time of each feed message (script) and the
  time until the next animation frame after it (layout and paint included), p50 / p99 / max.

Run it from a checkout with the ``server`` and ``dev`` extras::

    nice -n 10 .venv/bin/python bench/bench_console.py --open 500
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser_rig import ARGS, CHROMIUM

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.service import Operator, Operators, create_app
from voice_hitl.service._serve import running_service

TOKEN = "bench-console-token"


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {ordered[-1]:.2f} ms (n={len(ordered)})"


async def ask(bridge: BoardBridge, n: int, timeout: float) -> str:
    pending = await bridge.handler.create(
        "AskUserQuestion",
        {"question": f"Which account for transfer {n}?", "choices": ["checking", "savings"]},
        room_id=f"room-{n % 20}",
        channel_id="phone",
        actor_id=f"caller-{n % 50}",
        timeout=timeout,
        context={"transcript": ({"role": "user", "text": f"move money {n}"},)},
    )
    return pending.pending_id


async def main(args: argparse.Namespace) -> None:
    from playwright.async_api import async_playwright

    board = MemoryBoard()
    handler = HumanInputHandler()
    operators = Operators.from_tokens({TOKEN: Operator("bench")})
    async with (
        running_service(create_app(board, operators)) as url,
        BoardBridge(handler, board, worker_id="w-bench") as bridge,
        async_playwright() as playwright,
    ):
        for n in range(args.open):
            await ask(bridge, n, 300 + (n * 7919) % 600)
        await bridge.drain()
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page(viewport={"width": 1100, "height": 900})
        await page.goto(f"{url}/#token={TOKEN}")
        await page.wait_for_function("voiceHitlDesk.stats.snapshotAt !== null", timeout=60_000)
        paint = await page.evaluate(
            "performance.getEntriesByType('paint')"
            ".filter((e) => e.name === 'first-contentful-paint').map((e) => e.startTime)[0]"
        )
        stats = await page.evaluate("voiceHitlDesk.stats")
        print(f"open requests: {stats['snapshotSize']}")
        print(f"first contentful paint: {paint:.1f} ms after navigation start")
        print(
            f"snapshot: {stats['snapshotMs']:.1f} ms of script; painted "
            f"{stats['snapshotAt']:.1f} ms after navigation start"
        )
        opened = []
        for n in range(args.updates):
            rid = await ask(bridge, args.open + n, 30 + n)
            opened.append(rid)
            await page.wait_for_selector(f"#queue [data-id='{rid}']", state="attached")
        for rid in opened:
            await page.wait_for_function(
                "voiceHitlDesk.stats.frameMs.length >= voiceHitlDesk.stats.updateMs.length"
            )
            handler.resolve(rid, "checking")
            await page.wait_for_selector(f"#settled [data-id='{rid}']", state="attached")
        await page.wait_for_function(
            "voiceHitlDesk.stats.frameMs.length >= voiceHitlDesk.stats.updateMs.length"
        )
        await page.wait_for_function("voiceHitlDesk.stats.tickMs.length >= 5")
        stats = await page.evaluate("voiceHitlDesk.stats")
        half = args.updates
        print(f"per update, opened (script): {quantiles(stats['updateMs'][:half])}")
        print(f"per update, opened (to next frame): {quantiles(stats['frameMs'][:half])}")
        print(f"per update, settled (script): {quantiles(stats['updateMs'][half:])}")
        print(f"per update, settled (to next frame): {quantiles(stats['frameMs'][half:])}")
        print(f"countdown tick each second, {args.open} open: {quantiles(stats['tickMs'])}")
        await browser.close()
        await handler.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--open", type=int, default=500, help="open requests at page load")
    parser.add_argument("--updates", type=int, default=50, help="requests opened, then answered")
    asyncio.run(main(parser.parse_args()))
