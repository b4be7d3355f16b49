"""Who approves a gated tool: the caller aloud (speech or keypad, by risk tier), a quorum of
named participants in a conference, or an operator on the board."""

from __future__ import annotations

import json

from conference_rig import make_rig
from doors import LOOKUP, DoorDriver, Observed, human_tools
from test_approval import TRANSFER, RecordingHost

from providers.mock import MockRealtimeProvider
from voice_hitl import LocalTransport, RealtimeVoiceChannel, VoiceKit, VoiceResponder
from voice_hitl.board import BoardBridge, BoardStatus, MemoryBoard
from voice_hitl.speech.dtmf import generate_dtmf


class SpokenRig:
    """A voice channel with a responder: the caller is asked aloud."""

    def __init__(self) -> None:
        self.kit = VoiceKit()
        self.observed = Observed.on(self.kit)
        self.provider = MockRealtimeProvider()
        self.transport = LocalTransport()
        self.host = RecordingHost()
        self.human = human_tools()
        self.voice = RealtimeVoiceChannel(
            "voice",
            provider=self.provider,
            transport=self.transport,
            tools=[TRANSFER, LOOKUP],
            tool_handler=self.host,
            human_input_handler=self.human,
        )
        self.kit.register_channel(self.voice)
        self.responder = VoiceResponder(self.kit)
        self.responder.serve(self.voice)
        self.driver = DoorDriver("provider", self.provider, None)

    async def close(self) -> None:
        await self.responder.aclose()
        await self.kit.aclose()


async def test_the_caller_confirms_aloud_with_the_challenge_word() -> None:
    rig = SpokenRig()
    rig.kit.require_approval("transfer", phrasing="move {amount} pounds to {to}")
    session = await rig.voice.start_session("room", participant_id="caller")
    reading = rig.driver.call(session, "transfer", {"amount": 250, "to": "savings"})
    await rig.provider.wait_for("say", 1)
    assert rig.provider.said == [
        "Please confirm: move 250 pounds to savings (say confirm always to allow it for the "
        "rest of the call). To go ahead, say confirm, or press 1. To stop, say no."
    ]
    rig.provider.simulate_transcription(session, "yes, go ahead", role="user")
    await rig.provider.wait_for("say", 2)  # a high-risk yes needs the challenge word
    assert rig.host.calls == []
    rig.provider.simulate_transcription(session, "confirm", role="user")
    # A provider transcript carries no confidence or audio figures: nothing unmeasured passes,
    # so the challenge is asked once more before the tool may run.
    await rig.provider.wait_for("say", 3)
    assert rig.host.calls == []
    rig.provider.simulate_transcription(session, "confirm", role="user")
    read = await reading
    assert not read.is_error, read.text
    assert rig.host.calls == [("transfer", {"amount": 250, "to": "savings"})]
    assert rig.kit.approvals.grants() == []
    await rig.close()


async def test_the_caller_says_confirm_always_and_is_not_asked_again() -> None:
    rig = SpokenRig()
    rig.kit.require_approval("transfer", risk="low")
    session = await rig.voice.start_session("room", participant_id="caller")
    reading = rig.driver.call(session, "transfer", {"amount": 5, "to": "savings"})
    await rig.provider.wait_for("say", 1)
    rig.provider.simulate_transcription(session, "confirm always", role="user")
    assert not (await reading).is_error
    [grant] = rig.kit.approvals.grants("room")
    assert grant.by == "caller"
    assert not (await rig.driver.call(session, "transfer", {"amount": 6, "to": "x"})).is_error
    assert len(rig.provider.said) == 1 and len(rig.host.calls) == 2
    await rig.close()


async def test_the_caller_approves_and_refuses_by_keypad() -> None:
    rig = SpokenRig()
    rig.kit.require_approval("transfer")
    session = await rig.voice.start_session("room", participant_id="caller")
    rate = rig.voice.input_format.sample_rate
    for key, approved in (("1", True), ("2", False)):
        reading = rig.driver.call(session, "transfer", {"amount": 250, "to": key})
        await rig.observed.requests.get()
        tones = generate_dtmf(key, rate, lead_ms=40, gap_ms=60)
        for start in range(0, len(tones), 480):
            rig.transport.push_caller_audio(session.session_id, tones[start : start + 480])
        read = await reading
        assert read.is_error is not approved, read.text
    assert rig.host.calls == [("transfer", {"amount": 250, "to": "1"})]
    await rig.close()


async def test_a_quorum_of_named_participants_approves_in_a_conference() -> None:
    host = RecordingHost()
    rig = await make_rig(host=host)
    rig.kit.require_approval("lookup", approvers=["alice", "bob", "carol"], quorum=2)
    reading = rig.call("lookup", {"key": "vault"})
    event = await rig.observed.requests.get()
    assert event.tool_name == "ConfirmAction" and event.arguments["quorum"] == 2
    assert event.context["risk"] == "high"
    pid = event.pending_id
    assert [p.participant_id for p in rig.conf.addressed_to(pid) or ()] == [
        "alice",
        "bob",
        "carol",
    ]
    assert rig.conf.answer(pid, "alice", "approve")
    assert not reading.done() and host.calls == []
    rig.backend.transcribe("bob", "I approve")
    assert not reading.done()  # no confidence or audio figures: said twice in a row
    rig.backend.transcribe("bob", "approve")
    read = await reading
    assert not read.is_error, read.text
    assert host.calls == [("lookup", {"key": "vault"})]
    result = rig.conf.approval_result(pid)
    assert result is not None and result.approvers == ("alice", "bob")
    # One no vetoes: the model reads the refusal and the tool does not run.
    reading = rig.call("lookup", {"key": "other"})
    event = await rig.observed.requests.get()
    assert rig.conf.answer(event.pending_id, "carol", "deny")
    read = await reading
    assert read.is_error and "was not approved" in read.json()["error"]
    assert host.calls == [("lookup", {"key": "vault"})]
    await rig.kit.aclose()


async def test_an_operator_approves_on_the_board_and_the_caller_is_not_asked() -> None:
    rig = SpokenRig()
    rig.kit.require_approval("transfer", operator="supervisor")
    board = MemoryBoard()
    session = await rig.voice.start_session("room", participant_id="caller")
    async with BoardBridge(rig.human.handler, board) as bridge:
        reading = rig.driver.call(session, "transfer", {"amount": 9000, "to": "offshore"})
        event = await rig.observed.requests.get()
        await bridge.drain()
        record = await board.get(event.pending_id)
        assert record is not None and record.is_open
        assert record.tool == "ConfirmAction" and record.addressed == ("supervisor",)
        assert record.spec is not None and record.spec["kind"] == "confirm"
        settled = await board.settle(
            event.pending_id,
            BoardStatus.ANSWERED,
            json.dumps({"answer": True, "via": "operator", "actor_id": "maria"}),
            by="maria",
            via="operator",
        )
        assert settled.won
        read = await reading
    assert not read.is_error, read.text
    assert rig.host.calls == [("transfer", {"amount": 9000, "to": "offshore"})]
    assert rig.provider.said == []  # nobody on the call was asked
    await rig.close()
