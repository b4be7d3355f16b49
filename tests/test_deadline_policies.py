"""Deadline policies (``default=``, ``escalate_to=``, ``vetoable=``) on every door and in
conferences: what the model reads, what observers (the journal) see, and that a request settled
any other way is never answered by its policy. Time is virtual (looptime)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conference_rig import KEY, make_rig
from doors import ASK, CONFIRM, DOORS, DoorDriver, Observed, voice_rig

from conference import ApprovalReceipt, verify_receipt
from voice_hitl import (
    Escalation,
    HumanInputToolHandler,
    RequestEvent,
    RequestNoted,
    RequestSettled,
    VoiceKit,
)
from voice_hitl.journal import Journal, SqliteJournalStore, verify_chain

TOOLS = {"AskUserQuestion", "ConfirmAction"}


def tools(timeout: float = 30.0, **policies: Any) -> HumanInputToolHandler:
    return HumanInputToolHandler(
        TOOLS, timeout=timeout, tool_definitions=[ASK, CONFIRM], **policies
    )


class Events:
    """The lifecycle events of a handler, in order."""

    def __init__(self, human: HumanInputToolHandler) -> None:
        self.seen: list[RequestEvent] = []
        human.handler.add_observer(self.seen.append)

    def settled(self) -> list[RequestSettled]:
        return [e for e in self.seen if isinstance(e, RequestSettled)]

    def notes(self, note: str) -> list[RequestNoted]:
        return [e for e in self.seen if isinstance(e, RequestNoted) and e.note == note]


def voice_on(door: str, human: HumanInputToolHandler) -> tuple[VoiceKit, Any, DoorDriver, Observed]:
    rig = voice_rig(door, human)
    return rig.kit, rig.voice, rig.driver, rig.observed


@pytest.fixture(params=DOORS)
def door(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- default= ------------------------------------------------------------------------------


@pytest.mark.looptime
async def test_default_is_taken_at_the_deadline_on_every_door(door: str) -> None:
    human = tools(default={"AskUserQuestion": "savings"})
    events = Events(human)
    kit, voice, driver, observed = voice_on(door, human)
    loop = asyncio.get_running_loop()
    session = await voice.start_session("room-1")
    start = loop.time()
    read = await driver.call(session, "AskUserQuestion", {"question": "Which account?"})
    assert loop.time() - start == pytest.approx(30.0, abs=0.05)
    assert not read.is_error
    body = read.json()
    assert body["answer"] == "savings" and body["via"] == "default"
    assert "Nobody answered within 30s" in body["note"]
    (settled,) = events.settled()
    assert (settled.outcome, settled.via, settled.by) == ("answered", "default", None)
    report = await observed.reports.get()
    assert report.outcome == "ok"
    await kit.aclose()


@pytest.mark.looptime
async def test_an_answer_before_the_deadline_wins_and_the_default_never_fires(door: str) -> None:
    human = tools(default={"AskUserQuestion": "savings"})
    events = Events(human)
    kit, voice, driver, observed = voice_on(door, human)
    session = await voice.start_session("room-1")
    reading = driver.call(session, "AskUserQuestion", {"question": "Which account?"})
    request = await observed.requests.get()
    assert request.context["deadline_policy"] == {
        "on_deadline": "default answer",
        "default": "savings",
        "timeout": 30.0,
    }
    assert human.handler.resolve(request.pending_id, "checking", by="caller", via="speech")
    read = await reading
    assert read.text == "checking"
    await asyncio.sleep(60)  # well past the deadline: nothing else settles it
    assert [(s.text, s.via) for s in events.settled()] == [("checking", "speech")]
    await kit.aclose()


@pytest.mark.looptime
async def test_a_withdrawn_request_is_not_answered_by_its_default() -> None:
    human = tools(default={"AskUserQuestion": "savings"})
    events = Events(human)
    kit, voice, driver, observed = voice_on("provider", human)
    session = await voice.start_session("room-1")
    reading = driver.call(session, "AskUserQuestion", {"question": "Which account?"})
    await observed.requests.get()
    await voice.end_session(session)
    await asyncio.sleep(60)
    assert [s.outcome for s in events.settled()] == ["withdrawn"]
    reading.cancel()
    await asyncio.gather(reading, return_exceptions=True)
    await kit.aclose()


# -- vetoable= -----------------------------------------------------------------------------


@pytest.mark.looptime
async def test_vetoable_proceeds_when_nobody_vetoes_on_every_door(door: str) -> None:
    human = tools(vetoable=["ConfirmAction"])
    events = Events(human)
    kit, voice, driver, observed = voice_on(door, human)
    session = await voice.start_session("room-1")
    reading = driver.call(session, "ConfirmAction", {"action": "restart the cache"})
    request = await observed.requests.get()
    assert request.context["deadline_policy"]["on_deadline"] == "proceed unless vetoed"
    read = await reading
    body = read.json()
    assert body == {
        "answer": "proceed",
        "via": "no_veto",
        "vetoed": False,
        "note": "Nobody vetoed within 30s; proceeding.",
    }
    assert [s.via for s in events.settled()] == ["no_veto"]
    await kit.aclose()


@pytest.mark.looptime
async def test_a_veto_before_the_deadline_refuses_the_call(door: str) -> None:
    human = tools(vetoable={"ConfirmAction": {"confirmed": True}})
    kit, voice, driver, observed = voice_on(door, human)
    session = await voice.start_session("room-1")
    reading = driver.call(session, "ConfirmAction", {"action": "restart the cache"})
    request = await observed.requests.get()
    await asyncio.sleep(10)
    assert human.handler.reject(request.pending_id, "vetoed by the on-call engineer", by="op")
    read = await reading
    assert read.is_error
    assert read.json() == {"error": "Human input rejected: vetoed by the on-call engineer"}
    report = await observed.reports.get()
    assert report.outcome == "refused"
    await kit.aclose()


# -- escalate_to= --------------------------------------------------------------------------


@pytest.mark.looptime
async def test_escalation_keeps_the_remaining_time_on_every_door(door: str) -> None:
    human = tools(escalate_to={"AskUserQuestion": Escalation("supervisor", after=20)})
    events = Events(human)
    kit, voice, driver, observed = voice_on(door, human)
    loop = asyncio.get_running_loop()
    session = await voice.start_session("room-1")
    start = loop.time()
    reading = driver.call(session, "AskUserQuestion", {"question": "Refund?"})
    request = await observed.requests.get()
    await asyncio.sleep(25)
    (escalated,) = events.notes("escalated")
    assert escalated.pending_id == request.pending_id
    assert escalated.data["to"] == ["supervisor"] and escalated.data["remaining"] == 10.0
    assert escalated.at is not None
    assert human.handler.resolve(request.pending_id, "yes", by="supervisor", via="operator")
    read = await reading
    assert read.text == "yes"
    assert loop.time() - start == pytest.approx(25.0, abs=0.05)
    await kit.aclose()


@pytest.mark.looptime
async def test_an_escalated_request_times_out_at_the_first_deadline_not_later() -> None:
    human = tools(escalate_to={"AskUserQuestion": "operator"})  # at half the timeout
    events = Events(human)
    kit, voice, driver, observed = voice_on("provider", human)
    loop = asyncio.get_running_loop()
    session = await voice.start_session("room-1")
    start = loop.time()
    read = await driver.call(session, "AskUserQuestion", {"question": "Anyone?"})
    assert loop.time() - start == pytest.approx(30.0, abs=0.05)
    assert read.json() == {"error": "Human input timed out after 30s for tool 'AskUserQuestion'"}
    (escalated,) = events.notes("escalated")
    assert escalated.data["after"] == 15.0
    assert [s.outcome for s in events.settled()] == ["timed_out"]
    await kit.aclose()


@pytest.mark.looptime
async def test_escalation_then_default() -> None:
    human = tools(
        escalate_to={"ConfirmAction": Escalation(["ops", "security"], after=5)},
        default={"ConfirmAction": False},
    )
    events = Events(human)
    kit, voice, driver, observed = voice_on("provider", human)
    session = await voice.start_session("room-1")
    read = await driver.call(session, "ConfirmAction", {"action": "wire money"})
    assert read.json()["answer"] is False and read.json()["via"] == "default"
    assert [e.type for e in events.seen if e.type in {"noted", "settled"}] == ["noted", "settled"]
    assert events.notes("escalated")[0].data["to"] == ["ops", "security"]
    await kit.aclose()


# -- conferences ---------------------------------------------------------------------------


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("target", "readdressed", "answerer", "problem"),
    [
        ("Carol", ["carol"], "carol", ""),  # re-addressed: only Carol's answer is taken now
        ("Dave", [], "bob", "no participant called 'Dave'"),  # absent: stays with Bob
    ],
)
async def test_conference_escalation_readdresses_the_question(
    target: str, readdressed: list[str], answerer: str, problem: str
) -> None:
    human = tools(escalate_to={"AskUserQuestion": Escalation(target, after=10)})
    events = Events(human)
    rig = await make_rig(human=human)
    reading = rig.call("AskUserQuestion", {"question": "Bob, ship it?", "ask": "Bob"})
    request = await rig.observed.requests.get()
    await asyncio.sleep(11)
    (escalated,) = events.notes("escalated")
    assert escalated.data["readdressed"] == readdressed
    assert problem in escalated.data.get("problem", "")
    addressed = [p.participant_id for p in rig.conf.addressed_to(request.pending_id) or ()]
    assert addressed == [answerer]
    if answerer != "bob":
        assert not rig.conf.answer(request.pending_id, "bob", "yes")  # no longer Bob's
    assert rig.conf.answer(request.pending_id, answerer, "ship it")
    assert (await reading).text == "ship it"
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_conference_default_when_nobody_answers() -> None:
    human = tools(default={"AskUserQuestion": "later"})
    rig = await make_rig(human=human)
    read = await rig.call("AskUserQuestion", {"question": "Bob, ship it?", "ask": "Bob"})
    assert read.json()["answer"] == "later" and read.json()["via"] == "default"
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_conference_quorum_approval_proceeds_unless_an_approver_vetoes() -> None:
    human = tools(vetoable=["ConfirmAction"])
    events = Events(human)
    rig = await make_rig(human=human)
    arguments = {"action": "deploy", "approvers": ["alice", "bob"], "quorum": 2}
    read = await rig.call("ConfirmAction", arguments)
    assert read.json()["via"] == "no_veto"
    vetoed = rig.call("ConfirmAction", arguments)
    request = await rig.observed.requests.get()
    request = await rig.observed.requests.get()
    assert rig.conf.answer(request.pending_id, "bob", "no")
    read = await vetoed
    assert read.is_error and "denied" in read.text
    assert [s.outcome for s in events.settled()] == ["answered", "rejected"]
    await rig.kit.aclose()


@pytest.mark.looptime
async def test_conference_quorum_approval_keeps_its_approvers_on_escalation() -> None:
    human = tools(escalate_to={"ConfirmAction": Escalation("carol", after=5)})
    events = Events(human)
    rig = await make_rig(human=human)
    reading = rig.call("ConfirmAction", {"action": "deploy", "approvers": ["alice"], "quorum": 1})
    request = await rig.observed.requests.get()
    await asyncio.sleep(6)
    (escalated,) = events.notes("escalated")
    assert "keeps the approvers" in escalated.data["problem"]
    assert rig.conf.answer(request.pending_id, "alice", "yes")
    assert json.loads((await reading).text)["approved"] is True
    await rig.kit.aclose()


# -- declaring policies --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"default": {"Nope": 1}}, "default names tools this handler does not serve: ['Nope']"),
        ({"default": {"AskUserQuestion": 1}, "vetoable": ["AskUserQuestion"]}, "not both"),
        ({"escalate_to": {"AskUserQuestion": Escalation("x", after=30)}}, "not before"),
        ({"default": {"AskUserQuestion": float("nan")}}, "JSON value"),
        ({"default": {"AskUserQuestion": object()}}, "JSON value"),
    ],
)
def test_bad_policies_name_what_is_wrong(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        tools(**options)


def test_escalation_needs_a_target_and_a_positive_delay() -> None:
    with pytest.raises(ValueError, match="must name someone"):
        Escalation([], after=1)
    with pytest.raises(ValueError, match=r"Escalation\.after must be above zero"):
        Escalation("ops", after=0)
    with pytest.raises(TypeError, match="not be one string"):
        tools(vetoable="ConfirmAction")  # type: ignore[arg-type]


# -- the journal keeps escalations, defaults and each approval's receipt ---------------------


async def test_journal_keeps_each_conference_approval_with_its_receipt(tmp_path: Path) -> None:
    human = tools()
    rig = await make_rig(human=human)
    journal = Journal.open(tmp_path / "j.sqlite3", b"journal-key")
    journal.attach(human.handler)
    arguments = {"action": "deploy", "approvers": ["alice", "bob", "carol"], "quorum": 2}
    reading = rig.call("ConfirmAction", arguments)
    request = await rig.observed.requests.get()
    assert rig.conf.answer(request.pending_id, "alice", "yes")
    assert rig.conf.answer(request.pending_id, "bob", "approve")
    assert json.loads((await reading).text)["approved"] is True
    await rig.kit.aclose()
    await asyncio.to_thread(journal.close)
    story = SqliteJournalStore(tmp_path / "j.sqlite3").read(request.pending_id)
    approvals = [e.data for e in story if e.kind == "noted" and e.data["note"] == "approval"]
    assert [(a["participant"], a["decision"]) for a in approvals] == [
        ("alice", "approve"),
        ("bob", "approve"),
    ]
    for approval in approvals:
        receipt = ApprovalReceipt(**approval["receipt"])
        assert receipt.request_id == request.pending_id
        assert verify_receipt(receipt, KEY)
        forged = ApprovalReceipt(**{**approval["receipt"], "decision": "deny"})
        assert not verify_receipt(forged, KEY)
    kinds = [e.kind for e in story]
    assert kinds.index("settled") > max(i for i, k in enumerate(kinds) if k == "noted")
    assert verify_chain(SqliteJournalStore(tmp_path / "j.sqlite3").read(), b"journal-key") == []


@pytest.mark.looptime
async def test_journal_keeps_the_escalation_and_the_default(tmp_path: Path) -> None:
    human = tools(
        escalate_to={"AskUserQuestion": Escalation("supervisor", after=10)},
        default={"AskUserQuestion": "later"},
    )
    journal = Journal.open(tmp_path / "j.sqlite3", b"journal-key")
    journal.attach(human.handler)
    kit, voice, driver, observed = voice_on("provider", human)
    session = await voice.start_session("room-1")
    read = await driver.call(session, "AskUserQuestion", {"question": "When?"})
    assert read.json()["via"] == "default"
    await kit.aclose()
    await asyncio.to_thread(journal.close)
    story = SqliteJournalStore(tmp_path / "j.sqlite3").read()
    assert [e.kind for e in story] == ["opened", "notified", "noted", "settled", "delivered"]
    opened, _, escalated, settled, delivered = story
    assert opened.data["context"]["deadline_policy"]["escalate_to"] == ["supervisor"]
    assert escalated.data["note"] == "escalated" and escalated.data["to"] == ["supervisor"]
    assert settled.data["via"] == "default" and settled.data["by"] is None
    assert json.loads(delivered.data["text"])["answer"] == "later"
