"""Per-speaker hearing, one contract on every backend: each utterance is heard on its
speaker's own stream and attributed to them, whether answers come back to back, overlap or
start together, and noise on a bystander's line touches only that line."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from conference_rig import ToneWords, tone_word
from janus_rig import janus  # noqa: F401
from speaker_rooms import RATE, room, server  # noqa: F401

from conference import ConferenceChannel, InMemoryConferenceBackend, PerSpeakerHearing
from conference.janus import JanusConferenceBackend, LocalJanus
from voice_hitl.speech.dtmf import generate_dtmf

BACKENDS = ["memory", "janus"]


def hiss(seconds: float, dbov: float = -45.0, seed: int = 7) -> np.ndarray:
    """Steady white noise at ``dbov`` (its RMS against int16 full scale)."""
    rms = 32768 * 10 ** (dbov / 20)
    noise = np.random.default_rng(seed).normal(0, rms, round(seconds * RATE))
    return np.clip(noise, -32767, 32767).astype(np.int16)


def door_click(seconds: float = 0.2, seed: int = 3) -> np.ndarray:
    """A door click: a loud broadband burst decaying over ``seconds``."""
    n = round(seconds * RATE)
    burst = np.random.default_rng(seed).normal(0, 9000, n) * np.exp(-np.arange(n) / (0.02 * RATE))
    return np.clip(burst, -32767, 32767).astype(np.int16)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("gap", [0.0, 0.2, 0.5, 1.0])
async def test_the_second_approver_counts_however_soon_they_answer(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
    gap: float,
) -> None:
    async with room(backend, server=server) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        confirm = tone_word("confirm")
        await r.play([("Alice", 0.0, confirm), ("Bob", gap, confirm)])
        heard = await r.speech(2)
        assert {(h.speaker_id, h.text) for h in heard} == {
            (r.pid("Alice"), "confirm"),
            (r.pid("Bob"), "confirm"),
        }
        assert all(h.attribution == 1.0 for h in heard)
        result = await approval.wait()
        assert set(result.approvers) == {r.pid("Alice"), r.pid("Bob")}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_three_overlapping_speakers_are_three_utterances(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
) -> None:
    async with room(backend, server=server) as r:
        parts = [
            ("Alice", 0.0, tone_word("hello there", 1.0)),
            ("Bob", 0.6, tone_word("no", 1.0)),
            ("Carol", 1.2, tone_word("confirm", 1.0)),
        ]
        await r.play(parts)
        heard = await r.speech(3)
        said = {h.speaker_id: h.text for h in heard}
        assert said == {
            r.pid("Alice"): "hello there",
            r.pid("Bob"): "no",
            r.pid("Carol"): "confirm",
        }


@pytest.mark.parametrize("backend", BACKENDS)
async def test_noise_on_a_bystanders_line_touches_only_that_line(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
) -> None:
    async with room(backend, server=server) as r:
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        confirm = tone_word("confirm")
        carol = np.concatenate([hiss(0.5), door_click(), hiss(1.0), door_click(), hiss(2.0)])
        await r.play([("Carol", 0.0, carol), ("Alice", 1.5, confirm), ("Bob", 2.3, confirm)])
        heard = await r.speech(2)
        assert {h.speaker_id for h in heard} == {r.pid("Alice"), r.pid("Bob")}
        result = await approval.wait()
        assert set(result.approvers) == {r.pid("Alice"), r.pid("Bob")}
        ears = r.conf.ears
        assert ears is not None
        await ears.drain()
        assert r.heard.empty()  # Carol's hiss and clicks were no utterance of hers
        assert ears.recognised == 2 and ears.skipped == 2  # her clicks never reached it


async def test_recognition_is_bounded_and_each_speaker_keeps_their_order() -> None:
    words = ToneWords()
    names = ("A", "B", "C", "D", "E")
    async with room("memory", names, recognizer=words) as r:
        parts = [(n, 0.0, tone_word("hello there")) for n in names]
        parts += [(n, 1.5, tone_word("no")) for n in names]
        await r.play(parts)
        heard = await r.speech(10)
    assert words.calls == 10 and words.most_in_flight <= 2
    for name in names:
        mine = [h.text for h in heard if h.speaker_id == r.pid(name)]
        assert mine == ["hello there", "no"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_in_band_key_is_a_key_not_an_empty_utterance(
    backend: str,
    server: LocalJanus | None,  # noqa: F811
) -> None:
    async with room(backend, ("Alice", "Bob"), server=server, keypad=True) as r:
        tones = generate_dtmf("1", RATE, tone_ms=400)
        await r.play([("Alice", 0.0, tones), ("Bob", 0.0, tone_word("no"))])
        heard = await r.speech(2)
        ears = r.conf.ears
        assert ears is not None
        await ears.drain()
    by_kind = {(h.kind, h.speaker_id, h.text) for h in heard}
    assert by_kind == {("dtmf", r.pid("Alice"), "1"), ("speech", r.pid("Bob"), "no")}
    assert ears.skipped >= 1  # the key's tones were not sent to the recogniser


def test_hearing_needs_a_backend_with_per_speaker_audio() -> None:
    class MixOnly:
        participants: ClassVar[dict[str, object]] = {}

        def add_listener(self, listener: object) -> object:
            return lambda: None

        def open_audio(self) -> object:
            raise AssertionError

    with pytest.raises(TypeError, match=r"hearing= needs a backend with per-speaker audio"):
        ConferenceChannel("c", backend=MixOnly(), hearing=PerSpeakerHearing(ToneWords()))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        PerSpeakerHearing(ToneWords(), concurrency=0)
    with pytest.raises(ValueError, match="sample_rate must be at least 8000"):
        InMemoryConferenceBackend().open_speakers(4000)


async def test_rtp_from_anyone_but_the_latched_source_is_counted_and_dropped(
    janus: LocalJanus,  # noqa: F811
) -> None:
    from conference.janus import RtpSender
    from conference.janus._media import open_udp

    async with room("janus", ("Alice", "Bob"), server=janus) as r:
        backend = r.conf.backend
        assert isinstance(backend, JanusConferenceBackend)
        bob_seat = next(s.seat for s in backend._relays.values() if s.seat.display_name == "Bob")
        approval = r.conf.open_approval("ship it", approvers=["Alice", "Bob"], quorum=2)
        # A spoofer sends Bob's "confirm" to Bob's seat and to the bot's own mix port, from
        # its own socket, with Bob's SSRC and with its own: none of it is anyone's audio.
        spoofer = await open_udp(lambda data, source: None)
        forged = RtpSender(ssrc=0x5EED)
        confirm = tone_word("confirm", rate=8_000)
        foreign_before = backend.media.stats.foreign
        try:
            for start in range(0, len(confirm) - 160, 160):
                packet = forged.packet(confirm[start : start + 160], voice=True)
                spoofer.sendto(packet, (bob_seat.host, bob_seat.port))
                spoofer.sendto(packet, ("127.0.0.1", backend.media.local_port))
        finally:
            spoofer.close()
        await r.play([("Alice", 0.0, tone_word("confirm"))])
        (heard,) = await r.speech(1)
        assert heard.speaker_id == r.pid("Alice")
        ears = r.conf.ears
        assert ears is not None
        await ears.drain()
        assert r.heard.empty() and [a.participant.display_name for a in approval.approvals] == [
            "Alice"
        ]
        dropped = backend.media.stats.foreign - foreign_before
        assert dropped >= 2 * (len(confirm) // 160 - 1) * 9 // 10  # UDP on loopback: ~all
