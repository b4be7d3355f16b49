"""Take the README's screenshot of the operator console (docs/console.png).

Needs the ``server`` extra, Playwright's Python package and Debian's chromium. Three calls ask
an operator (a choice with the call's transcript, a conference approval, a bounded number);
one request was already answered elsewhere (in the open "Settled" section).

    python scripts/console_screenshot.py [docs/console.png]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser_rig import chromium_page

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.service import Operator, Operators, create_app
from voice_hitl.service._serve import running_service

TOKEN = "supervisor-token"


def line(role: str, text: str, speaker: str | None) -> dict[str, str | None]:
    return {"role": role, "text": text, "speaker_id": speaker}


async def main(out: Path) -> None:
    board = MemoryBoard()
    handler = HumanInputHandler()
    operators = Operators.from_tokens({TOKEN: Operator("maria")})
    async with (
        running_service(create_app(board, operators)) as url,
        BoardBridge(handler, board, worker_id="agents-2:4117") as bridge,
        chromium_page(1100, 1000) as page,
    ):
        await handler.create(
            "AskUserQuestion",
            {
                "question": "What is the customer's account reference?",
                "mode": "digits",
                "length": 8,
            },
            room_id="call-5521",
            channel_id="phone",
            actor_id="caller",
            timeout=240,
            context={
                "transcript": (
                    line("user", "I want to move 500 dollars to savings", "caller"),
                    line("assistant", "I can do that. Which account is it from?", None),
                    line("user", "I don't have the reference with me", "caller"),
                )
            },
        )
        await handler.create(
            "ConfirmAction",
            {
                "action": "Move 12,000 dollars from the team budget to savings",
                "approvers": ["alice", "bob"],
                "quorum": 2,
            },
            room_id="standup",
            channel_id="meeting",
            actor_id="alice",
            timeout=90,
            context={
                "transcript": (
                    line("user", "Let's move the unspent budget to savings", "alice"),
                    line("user", "Agreed, but check with finance", "bob"),
                )
            },
        )
        await handler.create(
            "AskUserQuestion",
            {"question": "Which plan should the caller move to?", "choices": ["Basic", "Plus"]},
            room_id="call-5530",
            channel_id="phone",
            actor_id="caller",
            timeout=45,
            context={"transcript": (line("user", "The cheaper one, I think", "caller"),)},
        )
        gone = await handler.create(
            "AskUserQuestion",
            {"question": "How much should be refunded?", "mode": "number", "min": 1, "max": 200},
            room_id="call-5533",
            channel_id="phone",
            actor_id="caller",
            timeout=120,
        )
        await bridge.drain()
        await page.goto(f"{url}/#token={TOKEN}")
        await page.wait_for_selector("#status.online")
        await page.locator("article.card").nth(3).wait_for()
        handler.resolve(gone.pending_id, '{"answer": 40}', by="tom", via="console")
        await page.locator("#settled article.card[data-status=answered]").wait_for(state="attached")
        await page.locator("#settled-box summary").click()  # show what settled, folded
        await page.locator("#queue article.card").first.focus()
        await page.screenshot(path=str(out), full_page=True)
        await handler.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/console.png")))
