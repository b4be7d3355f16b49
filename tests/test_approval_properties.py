"""Property (issue 45): over channel kind x door x policy shape x registration state x
answerer, a gated tool's handler never runs without a yes that satisfies its policy.

Each example builds one setup. A setup that could not ask for the yes must be refused when it
is built (``ApprovalSetupError``); otherwise a call is driven through the door and, if a
question opens, answered. The handler must have run exactly when no policy held the call, or
a matching yes was given. Everything synchronises on events; no sleeps.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from conference_rig import make_rig
from doors import DOORS, LOOKUP, DoorDriver, QueueBackend, human_tools
from hypothesis import given, settings
from hypothesis import strategies as st
from test_approval import TRANSFER, RecordingHost

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ApprovalSetupError,
    ChannelType,
    Door,
    RealtimeVoiceChannel,
    RequestEvent,
    RequestOpened,
    ToolApprovals,
    ToolCall,
    ToolGate,
    VoiceKit,
)

POLICIES: dict[str, dict[str, Any] | None] = {
    "none": None,
    "caller": {},
    "caller-low": {"risk": "low"},
    "over-100": {"when": lambda tool, args: args.get("amount", 0) > 100},
    "operator": {"operator": "supervisor"},
    "quorum": {"approvers": ["alice", "bob"], "quorum": 2},
    "once-only": {"allow_always": False},
}
REGISTRATION = ["before", "after", "unregistered", "gate-own", "gate-empty-with-kit"]
ANSWERERS = ["yes", "yes-always", "no", "plain-yes-from-mallory", "quorum-votes"]
KINDS = ["voice", "gate", "conference"]


@dataclass
class Setup:
    kind: str
    door: str
    policy: str
    registration: str
    answerer: str
    amount: int


def expected_refused_at_setup(s: Setup) -> bool:
    """A policy naming approvers reaches a channel that cannot tell who is speaking."""
    reaches = s.registration != "unregistered"
    return s.policy == "quorum" and s.kind != "conference" and reaches


def holds(s: Setup) -> bool:
    if s.policy == "none" or s.registration == "unregistered":
        return False
    return s.policy != "over-100" or s.amount > 100


def satisfies(s: Setup) -> bool:
    """Whether the answer is a yes the policy accepts."""
    if s.answerer == "no":
        return False
    if s.policy == "quorum":
        return s.answerer == "quorum-votes"  # a counted vote of two named approvers
    return True


@st.composite
def setups(draw: st.DrawFn) -> Setup:
    kind = draw(st.sampled_from(KINDS))
    door = draw(st.sampled_from(DOORS)) if kind == "voice" else kind
    registration = (
        draw(st.sampled_from(["before", "after"]))
        if kind == "conference"
        else draw(st.sampled_from(REGISTRATION))
    )
    answerer = draw(st.sampled_from(ANSWERERS))
    if kind != "conference" and answerer == "quorum-votes":
        answerer = "yes"
    return Setup(
        kind,
        door,
        draw(st.sampled_from(sorted(POLICIES))),
        registration,
        answerer,
        draw(st.sampled_from([5, 250])),
    )


def declare(approvals: ToolApprovals | VoiceKit, tool: str, name: str) -> None:
    options = POLICIES[name]
    if options is None:
        return
    if isinstance(approvals, VoiceKit):
        approvals.require_approval(tool, **options)
    else:
        approvals.require(tool, **options)


class Asked:
    """Requests opened on a handler, as a queue (the handler's observers see every one)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue()

    def __call__(self, event: RequestEvent) -> None:
        if isinstance(event, RequestOpened):
            self.queue.put_nowait(event.source.pending_id)


async def answer(s: Setup, pending_id: str, human: Any, conf: Any = None) -> None:
    if s.answerer == "quorum-votes":
        conf.answer(pending_id, "alice", "approve")  # a question to anyone settles here
        conf.answer(pending_id, "bob", "approve")
    elif s.answerer == "no":
        human.handler.reject(pending_id, "no", by="caller")
    elif s.answerer == "plain-yes-from-mallory":
        human.handler.resolve(pending_id, '{"answer": true}', by="mallory", via="api")
    else:
        body = {"answer": True, "always": s.answerer == "yes-always"}
        human.handler.resolve(pending_id, json.dumps(body), by="caller", via="api")


async def drive(s: Setup) -> None:
    host = RecordingHost()
    asked = Asked()
    arguments = {"amount": s.amount, "to": "a"}
    kit = VoiceKit()
    closers: list[Any] = [kit]
    try:
        if s.kind == "conference":
            rig = await make_rig(host=host, plug=s.registration == "before")
            kit = rig.kit
            closers = [kit]
            rig.human.handler.add_observer(asked)
            try:
                declare(kit, "lookup", s.policy)
                if s.registration == "after":
                    await rig.conf.plug_realtime()
            except ApprovalSetupError:
                assert expected_refused_at_setup(s)
                return
            assert not expected_refused_at_setup(s)
            reading = rig.call("lookup", {"key": "k", "amount": s.amount})
            human, conf, tool = rig.human, rig.conf, "lookup"
        else:
            human = human_tools()
            human.handler.add_observer(asked)
            conf, tool = None, "transfer"
            backend = QueueBackend() if s.door == "reasoning" else None
            provider = MockRealtimeProvider()
            voice = RealtimeVoiceChannel(
                "voice",
                provider=provider,
                tools=[TRANSFER, LOOKUP],
                tool_handler=host,
                human_input_handler=human,
                reasoning_backend=backend,
            )
            closers.append(voice)
            gate = voice.gate
            if s.kind == "gate":
                gate = ToolGate(
                    "gate",
                    ChannelType.REALTIME_VOICE,
                    tools=[TRANSFER],
                    tool_handler=host,
                    human_input=human,
                )
            try:
                register(s, kit, voice, gate)
            except ApprovalSetupError:
                assert expected_refused_at_setup(s)
                return
            assert not expected_refused_at_setup(s)
            if s.kind == "gate":
                call = ToolCall("transfer", arguments, "c1", "room-1", "caller", Door.DIRECT)
                reading = asyncio.ensure_future(gate.call(call))
            else:
                if s.registration == "unregistered":
                    try:
                        await voice.start_session("room-1", participant_id="caller")
                    except ApprovalSetupError:
                        assert host.calls == []
                        return
                    raise AssertionError("an unregistered channel started a session")
                session = await voice.start_session("room-1", participant_id="caller")
                reading = DoorDriver(s.door, provider, backend).call(session, tool, arguments)
        opened = asyncio.ensure_future(asked.queue.get())
        done, _ = await asyncio.wait({reading, opened}, return_when=asyncio.FIRST_COMPLETED)
        if opened in done:
            assert holds(s), f"asked though no policy holds the call: {s}"
            assert host.calls == [], "the handler ran before the answer"
            await answer(s, opened.result(), human, conf)
        else:
            opened.cancel()
            assert not holds(s), f"a held call ended without a question: {s}"
        result = await reading
        ran = bool(host.calls)
        expected = s.registration != "unregistered" and (not holds(s) or satisfies(s))
        assert ran == expected, (s, result)
        assert asked.queue.empty()
    finally:
        for closer in closers:
            await (closer.aclose() if isinstance(closer, VoiceKit) else closer.close())


def register(s: Setup, kit: VoiceKit, voice: RealtimeVoiceChannel, gate: ToolGate) -> None:
    """Make the setup's registration (the calls that may raise ApprovalSetupError)."""
    bind = (lambda: kit.register_channel(voice)) if gate is voice.gate else _bind(kit, gate)
    if s.registration == "before":
        bind()
        declare(kit, "transfer", s.policy)
    elif s.registration == "after":
        declare(kit, "transfer", s.policy)
        bind()
    elif s.registration == "gate-own":
        own = ToolApprovals()
        declare(own, "transfer", s.policy)
        gate.approvals = own
    elif s.registration == "gate-empty-with-kit":
        gate.approvals = ToolApprovals()
        bind()
        declare(kit, "transfer", s.policy)
    else:
        declare(kit, "transfer", s.policy)  # declared on a kit the channel never joins


def _bind(kit: VoiceKit, gate: ToolGate) -> Any:
    def bind() -> None:
        gate.kit = kit
        human = gate.human_input
        assert human is not None
        kit.attach_human_input(gate.channel_id, human.handler)

    return bind


@settings(max_examples=40, deadline=None, derandomize=True)
@given(setups())
def test_a_gated_handler_never_runs_without_a_matching_yes(setup: Setup) -> None:
    asyncio.run(drive(setup))
