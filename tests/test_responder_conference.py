"""VoiceResponder in a conference: asks aloud, hears only the addressed participants, feeds a
quorum of spoken approvals, and stops when the provider is unplugged."""

from __future__ import annotations

import json

from conference_rig import make_rig

from voice_hitl import VoiceResponder


async def test_addressed_question_answered_by_the_right_participant() -> None:
    rig = await make_rig()
    responder = VoiceResponder(rig.kit)
    responder.serve(rig.conf)
    reading = rig.call("AskUserQuestion", {"question": "Which room is free?", "ask": "Alice"})
    await rig.provider.wait_for("say")
    assert rig.provider.said == ["Which room is free?"]
    rig.provider.simulate_transcription(rig.conf, "room five", role="user", speaker_id="bob")
    rig.provider.simulate_transcription(rig.conf, "the blue room", role="user", speaker_id="alice")
    read = await reading
    assert not read.is_error
    answer = json.loads(read.text)
    assert (answer["answer"], answer["actor_id"]) == ("the blue room", "alice")
    await responder.aclose()
    await rig.kit.aclose()


async def test_quorum_of_two_spoken_approvals() -> None:
    rig = await make_rig()
    responder = VoiceResponder(rig.kit)
    responder.serve(rig.conf)
    reading = rig.call(
        "ConfirmAction",
        {"action": "ship the release", "approvers": ["alice", "bob"], "quorum": 2},
    )
    await rig.provider.wait_for("say")
    assert rig.provider.said[0].startswith("Please confirm: ship the release.")
    # Carol is not addressed; Alice repeats herself; Bob's yes completes the quorum. The
    # line has no confidence or audio figures: each approver says the word twice in a row.
    said = rig.provider.simulate_transcription
    said(rig.conf, "yes", role="user", speaker_id="carol")
    said(rig.conf, "yes, I approve", role="user", speaker_id="alice")
    said(rig.conf, "approve", role="user", speaker_id="alice")
    said(rig.conf, "yes", role="user", speaker_id="alice")
    said(rig.conf, "yes, approved", role="user", speaker_id="bob")
    said(rig.conf, "approved", role="user", speaker_id="bob")
    read = await reading
    assert not read.is_error
    summary = json.loads(read.text)
    assert summary["approved"] is True
    assert sorted(summary["approvers"]) == ["Alice", "Bob"]
    # asked once (at most once more of an approver); the quorum was gathered by listening
    again = "To be sure, please say confirm once more, or press 1."
    assert set(rig.provider.said[1:]) <= {again} and len(rig.provider.said) <= 3
    await responder.aclose()
    await rig.kit.aclose()


async def test_unplug_mid_question_stops_the_dialogue() -> None:
    rig = await make_rig()
    responder = VoiceResponder(rig.kit)
    responder.serve(rig.conf)
    reading = rig.call("ConfirmAction", {"action": "archive the room", "approvers": ["alice"]})
    event = await rig.observed.requests.get()
    await rig.provider.wait_for("say")
    await rig.conf.unplug_realtime()
    await rig.kit.hooks.drain()
    assert rig.human.handler.resolve(event.pending_id, "late") is False
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled"
    reading.cancel()
    await responder.aclose()
    await rig.kit.aclose()
