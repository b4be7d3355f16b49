"""Who answers: addressed requests, quorum approvals of distinct approvers, signed receipts,
spoken answers and participants leaving mid-request."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable

import pytest
from conference_rig import KEY, make_rig

from conference import (
    AddressingError,
    ApprovalDeniedError,
    ApprovalRequest,
    ApprovalTimeoutError,
    ConferenceChannel,
    Participant,
    parse_addressing,
    read_yes_no,
    resolve_participant,
    sign_receipt,
    verify_receipt,
)
from voice_hitl import ChannelClosedError
from voice_hitl.responder._risk import EvidencePolicy

ROSTER = {
    "alice": Participant("alice", "Alice"),
    "bob": Participant("bob", "Bob"),
    "u7": Participant("u7", "Carol"),
}


# -- addressed requests -----------------------------------------------------------------------


def test_names_resolve_by_id_or_display_name_case_insensitively() -> None:
    assert resolve_participant(ROSTER, "alice").participant_id == "alice"
    assert resolve_participant(ROSTER, "CAROL").participant_id == "u7"
    assert resolve_participant(ROSTER, "U7").participant_id == "u7"
    with pytest.raises(AddressingError, match=r"no participant called 'zed'.*present: Alice"):
        resolve_participant(ROSTER, "zed")
    twins = {"a1": Participant("a1", "Alex"), "a2": Participant("a2", "alex")}
    with pytest.raises(AddressingError, match=r"ambiguous.*a1, a2"):
        resolve_participant(twins, "ALEX")
    with pytest.raises(AddressingError, match="non-empty string"):
        resolve_participant(ROSTER, " ")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"ask": "alice", "approvers": ["bob"]}, "either 'ask'"),
        ({"quorum": 2}, "'quorum' needs 'approvers'"),
        ({"ask": "alice", "quorum": 1}, "goes with 'approvers'"),
        ({"approvers": []}, "non-empty list"),
        ({"approvers": ["alice", "Alice"], "quorum": 2}, "between 1 and the 1 distinct"),
        ({"approvers": ["alice"], "quorum": True}, "whole number"),
    ],
)
def test_malformed_addressing_is_explained(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(AddressingError, match=message):
        parse_addressing(arguments, ROSTER)


async def test_right_participant_answers_wrong_one_is_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rig = await make_rig()
    reading = rig.call("AskUserQuestion", {"question": "Alice, which budget?", "ask": "ALICE"})
    event = await rig.observed.requests.get()
    assert event.arguments["ask"] == "ALICE"
    with caplog.at_level(logging.WARNING):
        assert rig.conf.answer(event.pending_id, "bob", "the big one") is False
        assert rig.conf.answer(event.pending_id, "zed", "mine") is False
    assert "addressed to alice, not 'bob'" in caplog.text
    assert "'zed' is not in the conference" in caplog.text
    assert not reading.done()
    assert rig.conf.answer(event.pending_id, "alice", "Q3 budget")
    assert (await reading).text == "Q3 budget"
    assert rig.conf.answer(event.pending_id, "alice", "again") is False  # settled
    await rig.kit.aclose()


async def test_unknown_name_is_an_error_the_model_reads() -> None:
    rig = await make_rig()
    read = await rig.call("AskUserQuestion", {"question": "?", "ask": "Zed"})
    assert read.is_error
    assert read.json() == {
        "error": "Cannot ask: there is no participant called 'Zed' in the conference "
        "(present: Alice (alice), Bob (bob), Carol (carol))"
    }
    assert rig.observed.requests.empty()  # nobody was asked
    report = await rig.observed.reports.get()
    assert report.outcome == "failed"
    await rig.kit.aclose()


async def test_spoken_yes_answers_the_one_request_addressed_to_the_speaker() -> None:
    rig = await make_rig()
    reading = rig.call("AskUserQuestion", {"question": "Bob, record this?", "ask": "bob"})
    await rig.observed.requests.get()
    rig.backend.transcribe("alice", "yes")  # not addressed: ignored
    rig.provider.simulate_transcription(rig.conf, "hmm", role="user", speaker_id="bob")
    rig.provider.simulate_transcription(rig.conf, "Yes, go ahead.", role="user", speaker_id="bob")
    assert (await reading).text == "yes"
    await rig.kit.aclose()


# -- quorum through the model's tool ----------------------------------------------------------


async def test_two_of_three_distinct_approvers_grant_with_receipts() -> None:
    rig = await make_rig()
    opened = opened_queue(rig.conf)
    reading = rig.call(
        "ConfirmAction",
        {"action": "deploy to prod", "approvers": ["alice", "Bob", "carol"], "quorum": 2},
    )
    event = await rig.observed.requests.get()
    pid = event.pending_id
    assert (await opened.get()).request_id == pid
    assert [p.participant_id for p in rig.conf.addressed_to(pid) or ()] == ["alice", "bob", "carol"]
    assert rig.conf.answer(pid, "alice", "approve")
    assert rig.conf.answer(pid, "alice", "approve") is False  # a repeat counts once
    rig.backend.transcribe("alice", "yes yes")  # spoken repeat: not awaited from her any more
    rig.backend.join("dave", "Dave")
    assert rig.conf.answer(pid, "dave", "approve") is False  # not addressed
    assert not reading.done()
    rig.backend.transcribe("bob", "I approve")  # attributed speech counts
    assert not reading.done()  # no confidence or audio figures: said twice in a row
    rig.backend.transcribe("bob", "approve")
    read = await reading
    assert not read.is_error
    summary = read.json()
    assert summary["approved"] is True and summary["approvers"] == ["Alice", "Bob"]
    result = rig.conf.approval_result(pid)
    assert result is not None and result.approvers == ("alice", "bob")
    assert all(verify_receipt(a.receipt, KEY) for a in result.approvals)
    assert [a.receipt.decision for a in result.approvals] == ["approve", "approve"]
    assert result.approvals[0].at <= result.approvals[1].at == result.approved_at
    await rig.kit.aclose()


async def test_any_single_denial_vetoes() -> None:
    rig = await make_rig()
    reading = rig.call(
        "ConfirmAction", {"action": "wipe db", "approvers": ["alice", "bob", "carol"], "quorum": 2}
    )
    event = await rig.observed.requests.get()
    assert rig.conf.answer(event.pending_id, "alice", "yes")
    assert rig.conf.answer(event.pending_id, "carol", "maybe later?") is False  # not a yes/no
    assert rig.conf.answer(event.pending_id, "carol", "deny")
    read = await reading
    assert read.json() == {"error": "Human input rejected: Carol (carol) denied 'wipe db'"}
    assert rig.conf.approval_result(event.pending_id) is None
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_quorum_not_reached_in_time_fails() -> None:
    rig = await make_rig(timeout=60.0)
    reading = rig.call("ConfirmAction", {"action": "x", "approvers": ["alice", "bob"], "quorum": 2})
    event = await rig.observed.requests.get()
    assert rig.conf.answer(event.pending_id, "alice", "approve")
    read = await reading
    assert read.json() == {"error": "Human input timed out after 60s for tool 'ConfirmAction'"}
    assert rig.conf.approval(event.pending_id) is None
    assert rig.conf.open_requests == []
    await rig.kit.aclose()


async def test_bot_asks_while_the_only_approver_leaves() -> None:
    rig = await make_rig()
    reading = rig.call("ConfirmAction", {"action": "refund", "approvers": ["bob"]})
    await rig.observed.requests.get()
    rig.backend.leave("bob", "dropped from the call")
    read = await reading
    assert read.is_error
    assert read.json() == {
        "error": "Human input rejected: Bob (bob) dropped from the call before answering; "
        "the quorum of 1 for 'refund' can no longer be reached"
    }
    await rig.kit.aclose()


# -- approvals the application opens ------------------------------------------------------------


def recording_action(name: str) -> tuple[list[str], Callable[[], Awaitable[str]]]:
    """An action for dual control, and the list it appends ``name`` to when it runs."""
    ran: list[str] = []

    async def action() -> str:
        ran.append(name)
        return "done"

    return ran, action


def opened_queue(conf: ConferenceChannel) -> asyncio.Queue[ApprovalRequest]:
    opened: asyncio.Queue[ApprovalRequest] = asyncio.Queue()
    conf.add_approval_listener(opened.put_nowait)
    return opened


async def test_request_approval_by_spoken_answers_and_provider_attribution() -> None:
    rig = await make_rig()
    opened = opened_queue(rig.conf)
    waiting = asyncio.create_task(
        rig.conf.request_approval(
            "merge release", approvers=["alice", "bob", "carol"], quorum=2, key=b"k2"
        )
    )
    request = await opened.get()
    assert request.quorum == 2 and set(request.approvers) == {"alice", "bob", "carol"}
    rig.backend.transcribe("alice", "yes")  # a bare yes is no approval: high risk
    assert not request.approvals
    rig.backend.transcribe("alice", "yes, I approve")
    rig.backend.transcribe("alice", "what was the question")  # not two in a row
    rig.backend.transcribe("alice", "approve")
    assert not request.approvals
    rig.backend.transcribe("alice", "approve")
    said = rig.provider.simulate_transcription
    said(rig.conf, "sure, approved", role="user", speaker_id="carol")
    said(rig.conf, "approved", role="user", speaker_id="carol")
    result = await waiting
    assert result.approvers == ("alice", "carol")
    assert all(verify_receipt(a.receipt, b"k2") for a in result.approvals)
    assert not verify_receipt(result.approvals[0].receipt, KEY)  # signed with its own key
    await rig.kit.aclose()


async def test_direct_approval_veto_timeout_and_leave() -> None:
    rig = await make_rig(plug=False)
    conf = rig.conf
    # Veto: the denial carries its own signed receipt.
    vetoed = conf.open_approval("deploy", approvers=["alice", "bob"], quorum=1)
    assert conf.answer(vetoed.request_id, "bob", "no")
    with pytest.raises(ApprovalDeniedError, match="Bob \\(bob\\) denied 'deploy'") as denied:
        await vetoed.wait()
    assert denied.value.denied_by == "bob" and denied.value.receipt is not None
    assert verify_receipt(denied.value.receipt, KEY)
    assert denied.value.receipt.decision == "deny"
    # Leaving: quorum 1 of two survives one leaving; quorum 2 does not.
    survives = conf.open_approval("a", approvers=["alice", "carol"], quorum=1)
    fails = conf.open_approval("b", approvers=["alice", "carol"], quorum=2)
    rig.backend.leave("carol")
    with pytest.raises(ApprovalDeniedError, match="can no longer be reached") as unreachable:
        await fails.wait()
    assert unreachable.value.denied_by is None
    assert not survives.done
    assert conf.answer(survives.request_id, "alice", "approve")
    assert (await survives.wait()).approvers == ("alice",)
    with pytest.raises(AddressingError, match="'carol'"):
        conf.open_approval("c", approvers=["carol"])
    with pytest.raises(ValueError, match="quorum must be between 1 and 1"):
        conf.open_approval("c", approvers=["alice"], quorum=2)
    with pytest.raises(TypeError, match="list of names"):
        conf.open_approval("c", approvers="alice")
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_direct_approval_times_out() -> None:
    rig = await make_rig(plug=False)
    opened = opened_queue(rig.conf)
    loop = asyncio.get_running_loop()
    start = loop.time()
    waiting = asyncio.create_task(
        rig.conf.request_approval("x", approvers=["alice", "bob"], quorum=2, timeout=45)
    )
    request = await opened.get()
    assert rig.conf.open_requests == [request.request_id]
    assert rig.conf.answer(request.request_id, "bob", "yes")
    with pytest.raises(ApprovalTimeoutError, match="timed out after 45s with 1 of 2 approvals"):
        await waiting
    assert loop.time() - start == pytest.approx(45.0, abs=0.05)
    await rig.kit.aclose()


async def test_dual_control_runs_the_action_only_after_the_quorum() -> None:
    rig = await make_rig(plug=False)
    opened = opened_queue(rig.conf)
    ran, delete_prod = recording_action("deleted")
    running = asyncio.create_task(
        rig.conf.dual_control(2, ["alice", "bob", "carol"], delete_prod, description="delete prod")
    )
    request = await opened.get()
    rig.backend.transcribe("bob", "approved")
    rig.backend.transcribe("bob", "approved")  # unmeasured: the challenge twice in a row
    assert ran == [] and not request.done
    rig.backend.transcribe("carol", "yes")  # high risk: the challenge word is needed
    assert ran == [] and not request.done
    rig.backend.transcribe("carol", "yes, I confirm")
    assert ran == [] and not request.done
    rig.backend.transcribe("carol", "I confirm")
    assert await running == "done" and ran == ["deleted"]
    vetoed = asyncio.create_task(
        rig.conf.dual_control(1, ["alice"], delete_prod, description="again")
    )
    await opened.get()
    rig.backend.transcribe("alice", "no, don't")
    with pytest.raises(ApprovalDeniedError):
        await vetoed
    assert ran == ["deleted"]
    assert rig.conf.open_requests == []
    await rig.kit.aclose()


async def test_with_spoken_approvals_off_votes_are_cast_from_the_console(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rig = await make_rig(plug=False, evidence=EvidencePolicy(spoken=False))
    opened = opened_queue(rig.conf)
    ran, wire = recording_action("wired")
    running = asyncio.create_task(
        rig.conf.dual_control(1, ["alice", "bob"], wire, description="wire 9,000 dollars")
    )
    request = await opened.get()
    with caplog.at_level(logging.INFO, logger="conference.answers"):
        rig.backend.transcribe("bob", "approve")
        rig.backend.transcribe("bob", "approve")  # not even twice in a row
    assert request.approvals == () and not request.done
    assert (
        "spoken approvals are off for this action; "
        "vote from an operator console or ConferenceChannel.answer"
    ) in caplog.text
    assert rig.conf.answer(request.request_id, "bob", "approve")
    assert await running == "done" and ran == ["wired"]
    vetoed = asyncio.create_task(
        rig.conf.dual_control(1, ["alice"], wire, description="again")
    )
    await opened.get()
    rig.backend.transcribe("alice", "no, don't")  # a spoken no still counts
    with pytest.raises(ApprovalDeniedError):
        await vetoed
    assert ran == ["wired"]
    await rig.kit.aclose()


async def test_close_fails_open_approvals_and_cancel_withdraws() -> None:
    rig = await make_rig(plug=False)
    opened = opened_queue(rig.conf)
    request = rig.conf.open_approval("x", approvers=["alice"])
    waiting = asyncio.create_task(rig.conf.request_approval("y", approvers=["bob"]))
    assert await opened.get() is request
    withdrawn = await opened.get()
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert withdrawn.done and rig.conf.open_requests == [request.request_id]
    await rig.conf.close()
    with pytest.raises(ChannelClosedError, match="'conf' closed"):
        await request.wait()
    await rig.kit.aclose()


# -- receipts and the yes/no reader ---------------------------------------------------------


def test_receipts_verify_and_tampering_fails() -> None:
    receipt = sign_receipt(KEY, "req-1", "alice", "approve", "2025-01-01T00:00:00+00:00")
    assert verify_receipt(receipt, KEY)
    assert not verify_receipt(receipt, b"another key")
    for change in (
        {"request_id": "req-2"},
        {"participant_id": "mallory"},
        {"decision": "deny"},
        {"timestamp": "2025-01-01T00:00:01+00:00"},
        {"signature": "0" * 64},
    ):
        assert not verify_receipt(dataclasses.replace(receipt, **change), KEY), change  # type: ignore[arg-type]
    # Field boundaries cannot be shifted: ("a", "b|c") and ("a|b", "c") sign differently.
    one = sign_receipt(KEY, "a", "b,c", "approve", "t")
    two = sign_receipt(KEY, "a,b", "c", "approve", "t")
    assert one.signature != two.signature
    with pytest.raises(ValueError, match="non-empty bytes"):
        sign_receipt(b"", "r", "p", "approve", "t")
    with pytest.raises(ValueError, match="'approve' or 'deny'"):
        sign_receipt(KEY, "r", "p", "maybe", "t")  # type: ignore[arg-type]


def test_approval_request_validates_its_inputs() -> None:
    alice = ROSTER["alice"]
    with pytest.raises(ValueError, match="at least one approver"):
        ApprovalRequest("x", [], key=KEY)
    with pytest.raises(ValueError, match="between 1 and 1"):
        ApprovalRequest("x", [alice, alice], quorum=2, key=KEY)
    with pytest.raises(ValueError, match="non-empty bytes"):
        ApprovalRequest("x", [alice], key=b"")
    request = ApprovalRequest("x", [alice], key=KEY)
    with pytest.raises(ValueError, match="'approve' or 'deny'"):
        request.vote("alice", "perhaps")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes.", True),
        ("yeah go ahead", True),
        ("I approve", True),
        ("No", False),
        ("nope, deny it", False),
        ("I do not approve", False),
        ("no... yes", None),
        ("what was the question?", None),
        ("", None),
    ],
)
def test_yes_no_reader(text: str, expected: bool | None) -> None:
    assert read_yes_no(text) is expected
