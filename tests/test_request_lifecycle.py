"""The request lifecycle observers: one ordered story per request, from every door."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest
from doors import DOORS, Observed, human_tools, voice_rig

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    HumanInputHandler,
    RealtimeVoiceChannel,
    RequestDelivered,
    RequestEvent,
    RequestNoted,
    RequestNotified,
    RequestOpened,
    RequestSettled,
    VoiceKit,
)


class Story:
    """Collects the events of every request, in order, and lets a test wait for a kind."""

    def __init__(self) -> None:
        self.events: list[RequestEvent] = []
        self._changed = asyncio.Event()

    def __call__(self, event: RequestEvent) -> None:
        self.events.append(event)
        self._changed.set()

    def kinds(self, pending_id: str) -> list[str]:
        return [e.type for e in self.events if e.pending_id == pending_id]

    async def wait_for(self, kind: str) -> RequestEvent:
        while True:
            for event in self.events:
                if event.type == kind:
                    return event
            self._changed.clear()
            await self._changed.wait()


async def test_answered_request_tells_its_story_in_order() -> None:
    handler = HumanInputHandler()
    story = Story()
    handler.add_observer(story)
    pending = await handler.create("AskUserQuestion", {"question": "Colour?"}, timeout=30)
    assert handler.note(pending.pending_id, "escalated", {"to": "supervisor"})
    assert handler.resolve(pending.pending_id, '{"answer": "red"}', by="ops-ann", via="operator")
    assert await handler.wait(pending.pending_id) == '{"answer": "red"}'
    assert story.kinds(pending.pending_id) == ["opened", "noted", "settled"]
    opened, noted, settled = story.events
    assert isinstance(opened, RequestOpened)
    assert opened.request.tool_name == "AskUserQuestion"
    assert opened.request.deadline is not None
    assert opened.request.deadline - opened.at == timedelta(seconds=30)
    assert isinstance(noted, RequestNoted) and noted.data == {"to": "supervisor"}
    assert isinstance(settled, RequestSettled)
    assert (settled.outcome, settled.text, settled.by, settled.via) == (
        "answered",
        '{"answer": "red"}',
        "ops-ann",
        "operator",
    )
    # Only open requests take notes; a second settle emits nothing.
    assert not handler.note(pending.pending_id, "late")
    assert not handler.reject(pending.pending_id, "too late")
    assert len(story.events) == 3


async def test_withdrawal_carries_the_cancel_reason() -> None:
    handler = HumanInputHandler()
    story = Story()
    handler.add_observer(story)
    pending = await handler.create("ConfirmAction", {"action": "pay"})
    waiting = asyncio.create_task(handler.wait(pending.pending_id, timeout=None))
    await asyncio.sleep(0)  # let the wait start
    waiting.cancel("the voice session ended")
    with pytest.raises(asyncio.CancelledError):
        await waiting
    settled = await story.wait_for("settled")
    assert isinstance(settled, RequestSettled)
    assert settled.outcome == "withdrawn"
    assert settled.detail == "the voice session ended"


async def test_a_failing_observer_is_logged_and_never_reaches_the_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = HumanInputHandler()
    story = Story()

    def broken(event: RequestEvent) -> None:
        raise RuntimeError("observer bug")

    handler.add_observer(broken)
    remove = handler.add_observer(story)
    with caplog.at_level(logging.ERROR, logger="voice_hitl.human_input"):
        pending = await handler.create("AskUserQuestion", {"question": "?"})
        assert handler.resolve(pending.pending_id, "yes")
        assert await handler.wait(pending.pending_id) == "yes"
    assert story.kinds(pending.pending_id) == ["opened", "settled"]
    assert sum("observer" in r.getMessage() for r in caplog.records) == 2
    remove()
    other = await handler.create("AskUserQuestion", {"question": "again?"})
    handler.release(other.pending_id)
    assert story.kinds(other.pending_id) == []


@pytest.mark.parametrize("door", DOORS)
async def test_every_door_reports_context_notification_and_delivery(door: str) -> None:
    human = human_tools(timeout=60)
    story = Story()
    human.handler.add_observer(story)
    rig = voice_rig(door, human)
    kit, voice, provider, observed, driver = (
        rig.kit,
        rig.voice,
        rig.provider,
        rig.observed,
        rig.driver,
    )
    session = await voice.start_session("room-1", participant_id="caller-7")
    provider.simulate_transcription(session, "I want to move money", role="user")
    reading = driver.call(session, "AskUserQuestion", {"question": "How much?"})
    request = await observed.requests.get()
    await story.wait_for("notified")
    assert human.handler.resolve(request.pending_id, "500", by="caller-7", via="speech")
    await reading
    delivered = await story.wait_for("delivered")
    kinds = story.kinds(request.pending_id)
    assert kinds == ["opened", "notified", "settled", "delivered"]
    opened = story.events[0]
    assert isinstance(opened, RequestOpened)
    lines = opened.request.context["transcript"]
    assert {"role": "user", "text": "I want to move money", "speaker_id": None} in lines
    assert opened.request.actor_id == "caller-7"
    assert isinstance(story.events[1], RequestNotified) and story.events[1].denied is None
    assert isinstance(delivered, RequestDelivered)
    assert (delivered.outcome, delivered.text) == ("ok", "500")
    report = await observed.reports.get()
    assert delivered.tool_call_id == report.tool_call_id
    await kit.aclose()


async def test_session_end_is_delivered_as_cancelled() -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    human = human_tools()
    story = Story()
    human.handler.add_observer(story)
    voice = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human)
    kit.register_channel(voice)
    session = await voice.start_session("room-1")
    provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    request = await observed.requests.get()
    await voice.end_session(session)
    kinds = story.kinds(request.pending_id)
    assert kinds[0] == "opened" and kinds[-2:] == ["settled", "delivered"]
    settled = next(e for e in story.events if isinstance(e, RequestSettled))
    delivered = next(e for e in story.events if isinstance(e, RequestDelivered))
    assert settled.outcome == "withdrawn" and settled.detail == "the voice session ended"
    assert delivered.outcome == "cancelled"
    await kit.aclose()
