"""The saturating N -> 1 mix and the in-memory conference backend's audio and roster."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from conference import (
    InMemoryConferenceBackend,
    ParticipantJoined,
    ParticipantLeft,
    SpeakerTranscription,
    mix_pcm16,
)


def tone(n: int, level: int) -> np.ndarray:
    return np.full(n, level, dtype=np.int16)


def test_levels_add_sample_by_sample() -> None:
    a = np.array([100, -200, 300, 0], dtype=np.int16)
    b = np.array([1000, 2000, -3000, 5], dtype=np.int16)
    mixed = mix_pcm16([a, b])
    assert mixed.dtype == np.int16
    assert mixed.tolist() == [1100, 1800, -2700, 5]
    # Shorter frames are silence past their end; length can be fixed.
    assert mix_pcm16([a, tone(2, 10)]).tolist() == [110, -190, 300, 0]
    assert mix_pcm16([a], length=6).tolist() == [100, -200, 300, 0, 0, 0]
    assert mix_pcm16([]).tolist() == []


def test_saturates_instead_of_wrapping() -> None:
    loud = tone(4, 30000)
    assert mix_pcm16([loud, loud]).tolist() == [32767] * 4
    assert mix_pcm16([-loud, -loud, -loud]).tolist() == [-32768] * 4
    edge = np.array([32767, -32768], dtype=np.int16)
    assert mix_pcm16([edge, edge, edge, edge]).tolist() == [32767, -32768]


@given(
    st.lists(
        arrays(np.int16, st.integers(0, 64), elements=st.integers(-32768, 32767)),
        min_size=1,
        max_size=8,
    )
)
def test_mix_is_the_clipped_int64_sum(frames: list[np.ndarray]) -> None:
    length = max(len(f) for f in frames)
    total = np.zeros(length, dtype=np.int64)
    for frame in frames:
        total[: len(frame)] += frame
    assert mix_pcm16(frames).tolist() == np.clip(total, -32768, 32767).tolist()


def test_bad_frames_are_named() -> None:
    with pytest.raises(ValueError, match="frame 1 must be a 1-D int16 array, got float32"):
        mix_pcm16([tone(4, 1), np.zeros(4, dtype=np.float32)])
    with pytest.raises(ValueError, match="shape"):
        mix_pcm16([np.zeros((2, 2), dtype=np.int16)])
    with pytest.raises(ValueError, match="length must be >= 0"):
        mix_pcm16([tone(2, 1)], length=-1)


def test_join_and_leave_mid_stream() -> None:
    backend = InMemoryConferenceBackend(frame_samples=4, speech_threshold=50)
    events: list[object] = []
    backend.add_listener(events.append)
    backend.join("alice", "Alice")
    backend.push_audio("alice", tone(8, 100))
    first = backend.tick()
    assert first.samples.tolist() == [100] * 4 and first.speakers == {"alice"}
    backend.join("bob", "Bob")  # joins mid-stream: mixed from the next tick
    backend.push_audio("bob", tone(4, 1000))
    second = backend.tick()
    assert second.samples.tolist() == [1100] * 4 and second.speakers == {"alice", "bob"}
    backend.push_audio("alice", tone(4, 7))
    backend.push_audio("bob", tone(4, 20))
    backend.leave("alice")  # leaves with 4 unmixed samples: dropped with her
    third = backend.tick()
    assert third.samples.tolist() == [20] * 4 and third.speakers == frozenset()
    assert [type(e) for e in events] == [ParticipantJoined, ParticipantJoined, ParticipantLeft]
    assert set(backend.participants) == {"bob"}


def test_frames_of_any_size_are_rebuffered_and_padded() -> None:
    backend = InMemoryConferenceBackend(frame_samples=4)
    backend.join("a")
    backend.push_audio("a", np.arange(1, 4, dtype=np.int16))
    backend.push_audio("a", np.arange(4, 7, dtype=np.int16))
    assert backend.buffered("a") == 6
    assert backend.tick().samples.tolist() == [1, 2, 3, 4]
    assert backend.tick().samples.tolist() == [5, 6, 0, 0]
    assert backend.tick().samples.tolist() == [0, 0, 0, 0]
    assert backend.buffered("a") == 0


async def test_lanes_get_every_mix_and_bot_audio_reaches_everyone() -> None:
    backend = InMemoryConferenceBackend(frame_samples=2)
    backend.join("a")
    lane = backend.open_audio()
    backend.push_audio("a", tone(2, 5))
    backend.tick()
    backend.join("b")  # joins after the bot spoke once: hears only later audio
    await lane.play(tone(3, 1))
    backend.join("c")
    await lane.play(tone(3, 2))
    await lane.aclose()
    await lane.play(tone(3, 9))  # dropped: the lane is closed
    frames = [f.samples.tolist() async for f in lane.mixed()]
    assert frames == [[5, 5]]
    assert [h.tolist() for h in backend.heard("a")] == [[1, 1, 1], [2, 2, 2]]
    assert [h.tolist() for h in backend.heard("b")] == [[1, 1, 1], [2, 2, 2]]
    assert [h.tolist() for h in backend.heard("c")] == [[2, 2, 2]]
    assert backend.open_lanes == 0
    await lane.aclose()  # idempotent


def test_roster_errors_and_transcription_events() -> None:
    backend = InMemoryConferenceBackend()
    seen: list[object] = []

    def broken(event: object) -> None:
        raise RuntimeError("listener bug")

    backend.add_listener(broken)  # logged; the others still run
    remove = backend.add_listener(seen.append)
    alice = backend.join("alice", "Alice")
    assert str(alice) == "Alice (alice)"
    with pytest.raises(ValueError, match="already in the conference"):
        backend.join("alice")
    with pytest.raises(ValueError, match="'zed' is not in the conference"):
        backend.push_audio("zed", tone(2, 1))
    with pytest.raises(ValueError, match="int16"):
        backend.push_audio("alice", np.zeros(2, dtype=np.float64))
    with pytest.raises(ValueError, match="never joined"):
        backend.heard("zed")
    with pytest.raises(ValueError, match="not in the conference"):
        backend.leave("zed")
    backend.transcribe("alice", "yes please")
    assert seen[-1] == SpeakerTranscription("alice", "yes please")
    remove()
    backend.leave("alice")
    assert not any(isinstance(e, ParticipantLeft) for e in seen)
    with pytest.raises(ValueError, match="frame_samples"):
        InMemoryConferenceBackend(frame_samples=0)
    with pytest.raises(ValueError, match="speech_threshold"):
        InMemoryConferenceBackend(speech_threshold=0)
