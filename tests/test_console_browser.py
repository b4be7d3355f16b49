"""The web console in a real browser: a call's question appears, a click answers it, and the
model receives that answer as the tool result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from browser_rig import chromium_page
from service_rig import ANN, TOKENS

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    HumanInputToolHandler,
    RealtimeVoiceChannel,
    VoiceKit,
)
from voice_hitl.board import BoardBridge, MemoryBoard
from voice_hitl.journal import Journal
from voice_hitl.service import create_app
from voice_hitl.service._serve import running_service


async def test_a_click_in_the_console_answers_the_models_question(tmp_path: Path) -> None:
    kit = VoiceKit()
    provider = MockRealtimeProvider()
    human = HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction"},
        timeout=120,
        tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION],
    )
    voice = RealtimeVoiceChannel("phone", provider=provider, human_input_handler=human)
    kit.register_channel(voice)
    board = MemoryBoard()
    journal = Journal.open(tmp_path / "journal.sqlite3", b"console-key")
    journal.attach(human.handler)  # the worker journals into the store the service reads
    async with (
        running_service(create_app(board, TOKENS, journal=journal)) as url,
        BoardBridge(human.handler, board),
        chromium_page() as page,
    ):
        await page.goto(f"{url}/#token={ANN}")
        await page.wait_for_selector("#status.online")
        session = await voice.start_session("room-7", participant_id="caller")
        provider.simulate_transcription(session, "I'd like to move money", role="user")
        call_id = provider.simulate_tool_call(
            session,
            "AskUserQuestion",
            {"question": "Which account should it go to?", "choices": ["checking", "savings"]},
        )
        card = page.locator("article.card[data-status=open]")
        await card.wait_for()
        assert await card.locator(".question").inner_text() == "Which account should it go to?"
        assert "I'd like to move money" in await card.locator(".transcript").inner_text()
        assert "On the call: caller" in await card.locator(".people").inner_text()
        await card.locator("button[data-answer=savings]").click()
        record = await provider.wait_for_tool_result(call_id)
        assert not record.is_error
        result = json.loads(record.output)
        assert (result["answer"], result["choice_id"]) == ("savings", "savings")
        assert (result["actor_id"], result["via"]) == ("ann", "operator")
        # The answered card folds into the "Settled" section.
        await page.locator("#settled-box summary").click()
        outcome = page.locator("#settled article.card[data-status=answered] .outcome")
        assert (await outcome.inner_text()).startswith("Answered by ann at")

        # The answered card links to the request's story in the journal.
        assert await asyncio.to_thread(journal.flush)
        answered = page.locator("article.card[data-status=answered]")
        await answered.locator("button.story-link").click()
        story = answered.locator(".story")
        await story.locator("li[data-kind=delivered]").wait_for()
        kinds = await story.locator("li").evaluate_all("(items) => items.map(i => i.dataset.kind)")
        assert {"board", "opened", "settled", "delivered"} <= set(kinds)
        settled = await story.locator("li[data-kind=settled]").inner_text()
        assert "answered by ann via console" in settled

        # A question withdrawn by the call shows as withdrawn, without a reload.
        provider.simulate_tool_call(session, "ConfirmAction", {"action": "close the account"})
        await page.locator("article.card[data-status=open] button[data-answer=yes]").wait_for()
        await voice.end_session(session)
        withdrawn = page.locator("article.card[data-status=withdrawn] .outcome")
        await withdrawn.wait_for()
        assert "Withdrawn" in await withdrawn.inner_text()
        assert "the voice session ended" in await withdrawn.inner_text()

        # Signed in with a server-side session (the token itself is not kept); signing out
        # ends the session on the service, not only in the tab.
        kept = await page.evaluate("sessionStorage.getItem('voice-hitl-token')")
        assert kept.startswith("vhs_") and ANN not in kept
        async with httpx.AsyncClient(base_url=url) as client:
            bearer = {"Authorization": f"Bearer {kept}"}
            assert (await client.get("/v1/me", headers=bearer)).json()["name"] == "ann"
            await page.locator("#signout").click()
            await page.locator("#login").wait_for()
            # announced once the service confirmed the session ended
            await page.wait_for_function(
                "document.querySelector('#announce').textContent === 'Signed out'"
            )
            refused = await client.get("/v1/me", headers=bearer)
            assert refused.status_code == 401 and "signed out" in refused.text
    await kit.aclose()
    await asyncio.to_thread(journal.close)
