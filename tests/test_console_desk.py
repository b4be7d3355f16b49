"""The console as a busy desk, in Chromium: ordering by time left, filters, search, counts,
urgency, answers read as a person reads them, keyboard answering, alerts (notification
permission granted and denied), sign-out, an accessibility check, and 500 open requests."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_rig import chromium_browser
from service_rig import ANN, TOKENS

from voice_hitl import HumanInputHandler, HumanInputRejectedError
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.service import create_app
from voice_hitl.service._serve import running_service

AXE = Path(__file__).parent / "fixtures" / "axe" / "axe.min.js"
AXE_RUN = (
    "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    ".map((v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3)"
    ".map((n) => n.target.join(' '))}))"
)

Ask = dict[str, Any]


@contextlib.asynccontextmanager
async def desk() -> AsyncIterator[tuple[str, BoardBridge]]:
    board = MemoryBoard()
    handler = HumanInputHandler()
    async with (
        running_service(create_app(board, TOKENS)) as url,
        BoardBridge(handler, board, worker_id="w-desk") as bridge,
    ):
        yield url, bridge
        await handler.close()


async def ask(
    bridge: BoardBridge,
    tool: str,
    arguments: Ask,
    *,
    timeout: float,
    room: str = "room-a",
    actor: str = "caller",
    addressed: tuple[str, ...] = (),
    drain: bool = True,
) -> str:
    pending = await bridge.handler.create(
        tool,
        arguments,
        room_id=room,
        channel_id="phone",
        actor_id=actor,
        timeout=timeout,
        context={
            "addressed": addressed,
            "transcript": ({"role": "user", "text": f"about {room}", "speaker_id": actor},),
        },
    )
    if drain:
        await bridge.drain()
    return pending.pending_id


async def shown_ids(page: Any) -> list[str]:
    ids: list[str] = await page.locator("#queue article.card:not([hidden])").evaluate_all(
        "(cards) => cards.map((c) => c.dataset.id)"
    )
    return ids


async def test_the_desk_orders_filters_counts_and_answers_from_the_keyboard() -> None:
    async with desk() as (url, bridge), chromium_browser() as browser:
        handler = bridge.handler
        close = await ask(
            bridge,
            "ConfirmAction",
            {"action": "close the account"},
            timeout=300,
            addressed=("ann",),
        )
        colour = await ask(
            bridge,
            "AskUserQuestion",
            {"question": "Which colour?", "choices": ["red", "Dark blue"]},
            timeout=20,
            room="room-b",
        )
        ref = await ask(
            bridge,
            "AskUserQuestion",
            {"question": "What is the account reference?"},
            timeout=120,
            actor="maria",
        )
        page = await browser.new_page()
        await page.goto(f"{url}/#token={ANN}")
        await page.wait_for_selector("#status.online")
        await page.wait_for_function("document.title === '(3) voice-hitl console'")
        # Soonest deadline first, whatever the order they were asked in.
        assert await shown_ids(page) == [colour, ref, close]
        assert await page.locator(f"[data-id='{colour}']").get_attribute("data-urgency") == "soon"
        assert await page.locator(f"[data-id='{close}']").get_attribute("data-urgency") == "calm"

        # A new request lands in its place, and the counts follow.
        refund = await ask(bridge, "ConfirmAction", {"action": "refund 20 euros"}, timeout=60)
        await page.wait_for_function("document.title === '(4) voice-hitl console'")
        assert await shown_ids(page) == [colour, refund, ref, close]
        assert await page.locator("#count").inner_text() == "4 open"
        assert "refund 20 euros" in await page.locator("#announce").inner_text()

        # Filters and search; the count says how many are shown.
        await page.select_option("#f-room", "room-a")
        assert await shown_ids(page) == [refund, ref, close]
        assert await page.locator("#count").inner_text() == "4 open, 3 shown"
        await page.select_option("#f-tool", "ConfirmAction")
        assert await shown_ids(page) == [refund, close]
        await page.select_option("#f-room", "")
        await page.select_option("#f-tool", "")
        await page.select_option("#f-actor", "maria")
        assert await shown_ids(page) == [ref]
        await page.select_option("#f-actor", "")
        await page.check("#f-mine")
        assert await shown_ids(page) == [close]
        await page.uncheck("#f-mine")
        await page.fill("#search", "account REF")
        assert await shown_ids(page) == [ref]
        await page.fill("#search", "nothing like this")
        assert await shown_ids(page) == []
        assert await page.locator("#none-shown").is_visible()
        await page.fill("#search", "")
        assert await shown_ids(page) == [colour, refund, ref, close]

        # The desk passes an automated accessibility check (axe-core, loaded from disk).
        await page.add_script_tag(path=str(AXE))
        found = await page.evaluate(AXE_RUN)
        assert found == [], json.dumps(found, indent=1)

        # Keyboard: j/k move between cards, y answers a confirmation, 2 a second choice.
        await page.locator("body").click(position={"x": 5, "y": 5})
        await page.keyboard.press("j")
        assert await page.evaluate("document.activeElement.dataset.id") == colour
        await page.keyboard.press("j")
        assert await page.evaluate("document.activeElement.dataset.id") == refund
        await page.keyboard.press("y")
        assert json.loads(await handler.wait(refund))["answer"] is True
        # The card folds away into "Settled" and focus moves to the one after it.
        await page.locator(f"#settled [data-id='{refund}']").wait_for(state="attached")
        assert await page.evaluate("document.activeElement.dataset.id") == ref
        await page.keyboard.press("k")
        assert await page.evaluate("document.activeElement.dataset.id") == colour
        await page.keyboard.press("2")
        assert json.loads(await handler.wait(colour))["choice_id"] == "dark_blue"
        await page.locator(f"#settled [data-id='{colour}']").wait_for(state="attached")
        # a to type an answer, Enter to send it.
        assert await page.evaluate("document.activeElement.dataset.id") == ref
        await page.keyboard.press("a")
        await page.keyboard.type("AB-12")
        await page.keyboard.press("Enter")
        assert json.loads(await handler.wait(ref))["answer"] == "AB-12"
        # Answers read as a person reads them: the choice's label, "Yes".
        await page.locator("#settled-box summary").click()
        outcome = page.locator(f"#settled [data-id='{colour}'] .outcome")
        assert (await outcome.inner_text()).endswith(": Dark blue")
        yes = page.locator(f"#settled [data-id='{refund}'] .outcome")
        assert (await yes.inner_text()).startswith("Answered by ann at")
        assert (await yes.inner_text()).endswith(": Yes")

        # Answered elsewhere (the HTTP API), a "No" reads "No".
        async with httpx.AsyncClient(base_url=url) as client:
            response = await client.post(
                f"/v1/requests/{close}/answer",
                json={"answer": False},
                headers={"Authorization": f"Bearer {ANN}"},
            )
        assert response.status_code == 200, response.text
        no = page.locator(f"#settled [data-id='{close}'] .outcome")
        await no.wait_for()
        assert (await no.inner_text()).startswith("Answered elsewhere by ann via api")
        assert (await no.inner_text()).endswith(": No")
        await page.wait_for_function("document.title === 'voice-hitl console'")
        assert await page.locator("#settled-count").inner_text() == "4"
        assert await page.locator("#empty").is_visible()

        # Sign-out forgets the token: the login form shows, and a reload stays signed out.
        await page.click("#signout")
        await page.locator("#login").wait_for()
        assert await page.locator("#status").inner_text() == "signed out"
        assert await page.evaluate("sessionStorage.getItem('voice-hitl-token')") is None
        assert await page.locator("#queue article").count() == 0
        await page.reload()
        await page.locator("#login").wait_for()
        assert not await page.locator("#desk").is_visible()
        # The sign-in page passes the accessibility check too; the checker does see a flaw.
        await page.add_script_tag(path=str(AXE))
        assert await page.evaluate(AXE_RUN) == []
        await page.evaluate("document.body.append(document.createElement('input'))")
        assert "label" in {v["id"] for v in await page.evaluate(AXE_RUN)}
        # Signing in again brings the desk back.
        await page.fill("#token", ANN)
        await page.click("#login button[type=submit]")
        await page.wait_for_selector("#status.online")
        assert await page.locator("#who").inner_text() == "signed in as ann"


RECORD_NOTIFICATIONS = """
(() => {
  window.__notes = [];
  const Real = window.Notification;
  if (!Real) return;
  class Recorded extends Real {
    constructor(title, options) { super(title, options); window.__notes.push(title); }
  }
  window.Notification = Recorded;
})();
"""


async def test_a_new_request_alerts_with_and_without_notification_permission() -> None:
    async with desk() as (url, bridge), chromium_browser() as browser:
        pages = {}
        for setting in ("granted", "denied"):
            context = await browser.new_context()
            await context.add_init_script(RECORD_NOTIFICATIONS)
            page = await context.new_page()
            # The browser's own permission setting (Chrome DevTools Protocol), as a person's
            # "Allow" / "Block" leaves it.
            cdp = await context.new_cdp_session(page)
            target = await cdp.send("Target.getTargetInfo")
            await cdp.send(
                "Browser.setPermission",
                {
                    "permission": {"name": "notifications"},
                    "setting": setting,
                    "origin": url,
                    "browserContextId": target["targetInfo"]["browserContextId"],
                },
            )
            await page.goto(f"{url}/#token={ANN}")
            await page.wait_for_selector("#status.online")
            pages[setting] = page
        granted, denied = pages["granted"], pages["denied"]
        assert await granted.locator("#alerts").inner_text() == "Alerts on"
        assert await denied.locator("#alerts").inner_text() == "Notifications blocked: sound only"
        assert await denied.locator("#alerts").is_disabled()

        await ask(bridge, "ConfirmAction", {"action": "wire 5,000 euros"}, timeout=60, room="r9")
        for page in (granted, denied):
            await page.wait_for_function("document.title === '(1) voice-hitl console'")
            assert await page.evaluate("voiceHitlDesk.stats.chimes") == 1
            assert "wire 5,000 euros" in await page.locator("#announce").inner_text()
        assert await granted.evaluate("window.__notes") == ["New request (r9)"]
        assert await denied.evaluate("window.__notes") == []
        # A request the filters hide is counted, but does not ring.
        await granted.select_option("#f-room", "r9")
        await ask(bridge, "ConfirmAction", {"action": "elsewhere"}, timeout=60, room="r2")
        await granted.wait_for_function("document.title === '(2) voice-hitl console'")
        assert await granted.evaluate("[voiceHitlDesk.stats.chimes, window.__notes.length]") == [
            1,
            1,
        ]

        # Asking for permission: the button asks the browser and shows its answer.
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(f"{url}/#token={ANN}")
        await page.wait_for_selector("#status.online")
        assert await page.locator("#alerts").inner_text() == "Turn on alerts"
        await context.grant_permissions(["notifications"], origin=url)
        await page.click("#alerts")
        await page.wait_for_function("document.querySelector('#alerts').textContent == 'Alerts on'")


async def test_five_hundred_open_requests_stay_sorted_and_filterable() -> None:
    async with desk() as (url, bridge), chromium_browser() as browser:
        expected = []
        for n in range(500):
            timeout = 100 + (n * 7919) % 500  # distinct, not in the order asked
            rid = await ask(
                bridge,
                "ConfirmAction",
                {"action": f"step {n}"},
                timeout=timeout,
                room=f"room-{n % 10}",
                drain=False,
            )
            expected.append((timeout, rid))
        await bridge.drain()
        page = await browser.new_page()
        await page.goto(f"{url}/#token={ANN}")
        await page.wait_for_function("document.title === '(500) voice-hitl console'")
        assert await shown_ids(page) == [rid for _, rid in sorted(expected)]
        first = await ask(bridge, "ConfirmAction", {"action": "urgent"}, timeout=10)
        await page.wait_for_function("document.title === '(501) voice-hitl console'")
        assert (await shown_ids(page))[0] == first
        # Reject from the keyboard: j to the first card, r to the reason, Enter.
        await page.locator("body").click(position={"x": 5, "y": 5})
        await page.keyboard.press("j")
        await page.keyboard.press("r")
        await page.keyboard.type("not while the account is frozen")
        await page.keyboard.press("Enter")
        with pytest.raises(HumanInputRejectedError, match="account is frozen"):
            await bridge.handler.wait(first)
        await page.wait_for_function("document.title === '(500) voice-hitl console'")
        await page.select_option("#f-room", "room-3")
        assert len(await shown_ids(page)) == 50
        await page.fill("#search", "step 413")
        # The search also reads request ids, which are random hex: one may hold "413" too.
        found = [(t, rid) for n, (t, rid) in enumerate(expected) if n % 10 == 3]
        found = [(t, rid) for t, rid in found if rid == expected[413][1] or "413" in rid]
        assert await shown_ids(page) == [rid for _, rid in sorted(found)]
        stats = await page.evaluate("voiceHitlDesk.stats")
        assert stats["snapshotSize"] == 500 and len(stats["updateMs"]) == 2
