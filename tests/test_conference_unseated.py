"""Participants without a seat, heard through the room mix cut by when they talk
(``conference.MixCut``), one contract on every backend where it can run.

An unseated participant's utterance is theirs with attribution ``CLEAN`` (enough for a
high-risk yes) only when nobody else may have been speaking; over someone else it is
``AMBIGUOUS`` (the vote is not counted: they are asked again), and once a line that reports no
levels has been heard talking, every cut is (the room has a talker no event accounts for).
Janus 1.1.2 sends talking events for WebRTC participants only (not for plain-RTP joiners,
with or without the audio-level extension), so the cases that need an unseated line with
levels run on the in-memory backend, which reports talking as AudioBridge does; the fail-
closed case runs on both.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from conference_rig import tone_word
from janus_rig import janus  # noqa: F401
from speaker_rooms import Room, room, server  # noqa: F401
from webrtc_rig import need_webrtc

from conference import InMemoryConferenceBackend, MixCut, SpeakerClock, SpeakerFrame
from conference._mix_cut import AMBIGUOUS, CLEAN, UNACCOUNTED
from conference.janus import LocalJanus
from voice_hitl import Heard
from voice_hitl.responder._risk import EvidencePolicy

BAR = EvidencePolicy().min_attribution
"""The attribution a high-risk yes needs."""


async def heard_until(r: Room, speaker: str, timeout: float = 30.0) -> list[Heard]:
    """Utterances reported up to and including the first of ``speaker``'s, then every other
    one heard so far (the recognitions under way drained)."""
    heard: list[Heard] = []
    while not heard or heard[-1].speaker_id != speaker:
        heard += await r.speech(1, timeout)
    ears = r.conf.ears
    assert ears is not None
    await ears.drain()
    while not r.heard.empty():
        heard.append(r.heard.get_nowait())
    return heard


def voters(approval: object) -> list[str]:
    return [a.participant.participant_id for a in approval.approvals]  # type: ignore[attr-defined]


async def test_an_unseated_confirm_alone_counts_toward_a_quorum() -> None:
    async with room("memory", ("Alice", "Bob"), unseated=("Alice",)) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        confirm = tone_word("confirm")
        await r.play([("Alice", 0.0, confirm), ("Bob", 2.0, confirm)])
        heard = {h.speaker_id: h for h in await r.speech(2)}
        assert heard["alice"].text == "confirm"
        assert BAR <= heard["alice"].attribution < 1.0  # timing, not a stream of her own
        assert heard["bob"].attribution == 1.0
        result = await approval.wait()
        assert set(result.approvers) == {"alice", "bob"}


@pytest.mark.parametrize("first", ["Alice", "Bob"])
@pytest.mark.parametrize("gap", [0.5, 1.0])
async def test_seated_and_unseated_back_to_back_are_both_counted(first: str, gap: float) -> None:
    # gap: the silence between the first "confirm" (0.6 s) ending and the second starting.
    second = "Bob" if first == "Alice" else "Alice"
    async with room("memory", ("Alice", "Bob"), unseated=("Alice",)) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        confirm = tone_word("confirm")
        await r.play([(first, 0.0, confirm), (second, 0.6 + gap, confirm)])
        heard = await r.speech(2)
        assert {(h.speaker_id, h.text) for h in heard} == {("alice", "confirm"), ("bob", "confirm")}
        assert all(h.attribution >= BAR for h in heard)
        result = await approval.wait()
        assert set(result.approvers) == {"alice", "bob"}


@pytest.mark.parametrize("other_seated", [True, False])
async def test_overlap_is_asked_again_never_misattributed(other_seated: bool) -> None:
    # Carol's "hello there" overlaps Alice's "confirm" by 0.4 s: whatever Alice's cut
    # reads, it is not a counted yes, and nothing is anyone's with a high-risk
    # attribution but what they said. Alice, asked again, answers alone: counted.
    unseated = ("Alice",) if other_seated else ("Alice", "Carol")
    async with room("memory", ("Alice", "Carol"), unseated=unseated) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice"], quorum=1)
        parts = [
            ("Alice", 0.0, tone_word("confirm")),
            ("Carol", 0.2, tone_word("hello there")),
            ("Alice", 2.5, tone_word("confirm")),
        ]
        await r.play(parts)
        heard = await heard_until(r, "alice")
        said = {("alice", "confirm"), ("carol", "hello there")}
        assert all((h.speaker_id, h.text) in said for h in heard if h.attribution >= BAR)
        overlapped = [h for h in heard if h.speaker_id == "alice"]
        assert overlapped[0].attribution < BAR  # her first utterance was cut over Carol's
        result = await approval.wait()
        assert result.approvers == ("alice",)
        alice = [h for h in heard if h.speaker_id == "alice"]
        if len(alice) == 1:  # her second "confirm" is reported after the first
            alice += await heard_until(r, "alice")
        assert alice[-1].text == "confirm" and alice[-1].attribution >= BAR


async def test_a_bystanders_confirm_counts_for_nobody() -> None:
    async with room("memory", ("Alice", "Bob", "Carol"), unseated=("Carol",)) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        confirm = tone_word("confirm")
        await r.play([("Carol", 0.0, confirm), ("Alice", 1.5, confirm), ("Bob", 3.0, confirm)])
        heard = await r.speech(3)
        assert {(h.speaker_id, h.attribution >= BAR) for h in heard} == {
            ("carol", True),
            ("alice", True),
            ("bob", True),
        }
        result = await approval.wait()
        assert set(result.approvers) == {"alice", "bob"}


@pytest.mark.parametrize("backend", ["memory", "janus"])
async def test_a_line_without_levels_closes_the_mix_cut_to_high_risk_votes(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Carol's line reports no levels: her "confirm" is in the mix while nobody is flagged
    # talking. From then on no cut of the mix carries a high-risk yes: Dave's "confirm"
    # (a line with levels in memory; on Janus 1.1.2 a plain-RTP joiner with the extension,
    # which Janus reads for WebRTC participants only) is not counted. Alice's seat is.
    names = ("Alice", "Carol", "Dave")
    async with room(
        backend, names, server=server, unseated=("Carol", "Dave"), no_levels=("Carol",)
    ) as r:
        approval = r.conf.open_approval("ship it", approvers=list(names), quorum=3)
        confirm = tone_word("confirm")
        with caplog.at_level(logging.WARNING, logger="conference.mix_cut"):
            await r.play([("Carol", 0.0, confirm), ("Dave", 1.5, confirm), ("Alice", 3.0, confirm)])
            heard = await heard_until(r, r.pid("Alice"))
        assert "a line without audio levels is talking" in caplog.text
        assert r.conf.backend.mix_cut.unaccounted is not None  # type: ignore[attr-defined]
        unseated = {r.pid("Carol"), r.pid("Dave")}
        assert not [h for h in heard if h.speaker_id in unseated and h.attribution >= BAR]
        assert voters(approval) == [r.pid("Alice")]


async def test_a_webrtc_participants_confirm_is_counted_from_the_mix(
    janus: LocalJanus,  # noqa: F811
) -> None:
    # Alice is a browser (Chromium running Debian's janus.js) in the room without a seat;
    # Janus's talking events for her cut her "confirm" out of the mix. Bob is seated.
    need_webrtc()
    async with room("janus", ("Alice", "Bob"), server=janus, webrtc=("Alice",)) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        confirm = tone_word("confirm")
        await r.play([("Alice", 0.0, confirm), ("Bob", 1.6, confirm)])
        heard = {h.speaker_id: h for h in await r.speech(2)}
        alice = heard[r.pid("Alice")]
        assert alice.text == "confirm" and BAR <= alice.attribution < 1.0
        assert heard[r.pid("Bob")].attribution == 1.0
        result = await approval.wait()
        assert set(result.approvers) == {r.pid("Alice"), r.pid("Bob")}
        assert r.conf.backend.mix_cut.unaccounted is None  # type: ignore[attr-defined]


# -- the cut itself (sans I/O), with Janus's timing ------------------------------------------

FRAME = 0.02
VOICE = tone_word("confirm", FRAME, rate=8_000)
QUIET = np.zeros_like(VOICE)


NEVER = (9.0, 9.0)
TALKING = {1.3: ("p", True), 1.9: ("p", False)}
"""P speaks 1.0-1.6 s in the mix; Janus says so at 1.3 and stops at 1.9 (a 0.2 s lag plus
its 10-packet window)."""


def run_cut(
    seat_loud: tuple[float, float] = NEVER, stray: tuple[float, float] = NEVER
) -> tuple[MixCut, list[SpeakerFrame]]:
    """A 3 s mix at 8 kHz: P voiced 1.0-1.6 s with :data:`TALKING` events (back-dated 0.2 s),
    seat S loud (in the mix) during ``seat_loud``, and someone unflagged during ``stray``.
    Returns the cut and P's frames."""
    clock = SpeakerClock(window=0.09, talk_lag=0.2)
    cut = MixCut(clock, 8_000, seated=lambda pid: pid == "s")
    frames: list[SpeakerFrame] = []
    for i in range(150):
        t = round(i * FRAME, 2)
        if t in TALKING:
            clock.talking(*TALKING[t], t)
        seat = seat_loud[0] <= t < seat_loud[1]
        clock.level("s", t, seat)
        voiced = seat or 1.0 <= t < 1.6 or stray[0] <= t < stray[1]
        frames += cut.push(VOICE if voiced else QUIET, t)
    return cut, [f for f in frames if f.participant_id == "p"]


def test_the_cut_waits_for_talking_events_that_trail_the_speech() -> None:
    # Every frame of P's speech is P's, cleanly, though Janus said so 0.3 s late.
    cut, mine = run_cut()
    voiced = [f for f in mine if f.samples.any()]
    assert [round(f.at, 2) for f in voiced] == [round(1.0 + i * FRAME, 2) for i in range(30)]
    assert {f.attribution for f in voiced} == {CLEAN}
    assert cut.unaccounted is None


def test_a_seat_heard_during_the_span_makes_the_cut_ambiguous() -> None:
    # Seat S is loud 1.4-1.5 s, inside P's span: P's frames near it are AMBIGUOUS; after P's
    # span, S loud again (1.8-2.0) falls in P's margin only: P hears silence there.
    _, mine = run_cut(seat_loud=(1.4, 1.5))
    near = [f for f in mine if 1.32 <= f.at <= 1.56]
    assert near and {f.attribution for f in near} == {AMBIGUOUS}
    _, mine = run_cut(seat_loud=(1.8, 2.0))
    assert not [f for f in mine if 1.8 <= f.at < 2.0 and f.samples.any()]
    assert {f.attribution for f in mine if f.samples.any()} == {CLEAN}


def test_bad_cut_settings_and_attributions_are_refused() -> None:
    with pytest.raises(ValueError, match=r"trail must be in 0\.\.10 seconds, got -1"):
        MixCut(SpeakerClock(), 8_000, trail=-1)
    with pytest.raises(ValueError, match="rate must be at least 8000, got 100"):
        MixCut(SpeakerClock(), 100)
    with pytest.raises(ValueError, match=r"attribution must be in 0\.\.1, got 1\.5"):
        SpeakerFrame("p", QUIET, 0.0, 1.5)
    with pytest.raises(ValueError, match="keypad=True needs seated=True"):
        InMemoryConferenceBackend().join("p", seated=False, keypad=True)


def test_speech_nobody_accounts_for_caps_every_later_cut(caplog: pytest.LogCaptureFixture) -> None:
    # 0.4 s of voiced mix at 0.2 s with nobody flagged and no seat loud: a line without
    # levels. P's clean speech afterwards is cut at UNACCOUNTED.
    with caplog.at_level(logging.WARNING, logger="conference.mix_cut"):
        cut, mine = run_cut(stray=(0.2, 0.6))
    assert cut.unaccounted is not None and "without audio levels" in caplog.text
    assert caplog.text.count("without audio levels") == 1
    assert {f.attribution for f in mine if f.samples.any()} == {UNACCOUNTED}
