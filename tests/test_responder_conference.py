"""VoiceResponder in a conference: asks aloud, hears only the addressed participants, feeds a
quorum of spoken approvals, offers the keypad only where the bot can hear one, and stops when
the provider is unplugged. The per-speaker cases run on both backends."""

from __future__ import annotations

import json

import pytest
from conference_rig import make_rig, tone_word
from janus_rig import janus  # noqa: F401
from speaker_rooms import RATE, room, server  # noqa: F401

from conference.janus import LocalJanus
from voice_hitl import VoiceResponder
from voice_hitl.speech.dtmf import generate_dtmf


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
    # asked once (at most once more of an approver); the quorum was gathered by listening.
    # The room has no keypad the bot can hear: no prompt offers one.
    again = "To be sure, please say confirm once more."
    assert set(rig.provider.said[1:]) <= {again} and len(rig.provider.said) <= 3
    assert not any("press" in said.lower() for said in rig.provider.said)
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


async def test_a_meeting_without_a_keypad_is_never_offered_one() -> None:
    rig = await make_rig()
    responder = VoiceResponder(rig.kit, reprompts=2)
    responder.serve(rig.conf)
    reading = rig.call("ConfirmAction", {"action": "wire the money", "approvers": ["alice"]})
    await rig.provider.wait_for("say")
    assert rig.provider.said == [
        "Please confirm: wire the money. To go ahead, say confirm. To stop, say no."
    ]
    for _ in range(3):  # nothing usable, to the last chance and past it
        rig.provider.simulate_transcription(rig.conf, "purple", role="user", speaker_id="alice")
    read = await reading
    assert read.is_error and "No usable answer after 3 attempts" in read.text
    last = rig.provider.said[-1]
    assert last == (
        "I could not take that as a yes. Please say it once more, or approve from the "
        "operator console or your answer link."
    )
    assert not any("press" in said.lower() for said in rig.provider.said)
    await responder.aclose()
    await rig.kit.aclose()


@pytest.mark.parametrize("backend", ["memory", "janus"])
async def test_a_quorum_said_at_once_is_asked_once_and_counted(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
) -> None:
    async with room(backend, server=server) as r:
        assert r.kit is not None and r.provider is not None
        responder = VoiceResponder(r.kit)
        responder.serve(r.conf)
        call = r.provider.simulate_tool_call(
            r.conf,
            "ConfirmAction",
            {"action": "ship the release", "approvers": ["Alice", "Bob"], "quorum": 2},
        )
        await r.provider.wait_for("say")
        # Alice and Bob answer together while Carol says something else.
        confirm = tone_word("confirm")
        await r.play(
            [("Alice", 0.0, confirm), ("Bob", 0.1, confirm), ("Carol", 0.0, tone_word("no"))]
        )
        record = await r.provider.wait_for_tool_result(call)
        assert not record.is_error, record.output
        summary = json.loads(record.output)
        assert summary["approved"] is True and sorted(summary["approvers"]) == ["Alice", "Bob"]
        assert len(r.provider.said) == 1  # nobody was asked again
        await responder.aclose()


@pytest.mark.parametrize("backend", ["memory", "janus"])
async def test_a_keyed_one_on_a_phone_line_is_offered_and_approves(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
) -> None:
    async with room(backend, ("Alice", "Bob"), server=server, keypad=True) as r:
        assert r.kit is not None and r.provider is not None
        responder = VoiceResponder(r.kit)
        responder.serve(r.conf)
        call = r.provider.simulate_tool_call(
            r.conf, "ConfirmAction", {"action": "wire it", "approvers": ["Alice"]}
        )
        await r.provider.wait_for("say")
        assert r.provider.said[0].endswith("say confirm, or press 1. To stop, say no.")
        # Bob says "hello there" while Alice keys 1 in band: her key, not an utterance.
        await r.play(
            [
                ("Alice", 0.0, generate_dtmf("1", RATE, tone_ms=150)),
                ("Bob", 0.0, tone_word("hello there")),
            ]
        )
        record = await r.provider.wait_for_tool_result(call)
        assert not record.is_error and json.loads(record.output)["approved"] is True
        await responder.aclose()
