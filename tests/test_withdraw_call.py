"""``VoiceSession.withdraw_call``: one open call withdrawn with its own reason, on every door;
the session (and a reasoning backend's loop) goes on."""

from __future__ import annotations

import pytest
from doors import DOORS, DoorDriver, Observed, QueueBackend, human_tools

from providers.mock import MockRealtimeProvider
from voice_hitl import RealtimeVoiceChannel, VoiceKit


@pytest.mark.parametrize("door", DOORS)
async def test_withdraw_one_call_with_its_reason(door: str) -> None:
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    backend = QueueBackend() if door == "reasoning" else None
    channel = RealtimeVoiceChannel(
        "voice", provider=provider, human_input_handler=human_tools(), reasoning_backend=backend
    )
    kit.register_channel(channel)
    session = await channel.start_session("room", "caller")
    driver = DoorDriver(door, provider, backend)
    read = driver.call(session, "AskUserQuestion", {"question": "Which account?"})
    request = await observed.requests.get()
    assert request.tool_call_id in session.open_calls
    assert await session.withdraw_call(request.tool_call_id, "caller hung up")
    report = await observed.reports.get()
    assert (report.outcome, report.error_detail) == ("cancelled", "caller hung up")
    assert not await session.withdraw_call(request.tool_call_id, "again")
    if door == "reasoning":  # the backend reads the withdrawal and its turn goes on
        assert "caller hung up" in (await read).text
    else:  # the model is sent nothing for a withdrawn call
        read.cancel()
    # The session goes on: the next call through the same door is served.
    again = driver.call(session, "AskUserQuestion", {"question": "And the amount?"})
    second = await observed.requests.get()
    channel.human_input_handler.handler.resolve(second.pending_id, "forty")  # type: ignore[union-attr]
    assert (await again).text == "forty"
    await kit.aclose()
