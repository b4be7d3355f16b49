"""The sans-I/O parts of ``conference.janus``, without sockets: the Janus and AudioBridge
JSON, RTP packets and the RFC 6464 audio level, the jitter buffer, who spoke when, and the
streaming resampler. The JSON below is what Janus 1.1.2 sent in ``test_janus_conference``."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("httpx", reason="the Janus backend needs the 'janus' extra")

from conference_rig import make_rig

from conference import ConferenceEnded, SpeakerClock
from conference.janus import (
    JanusConferenceBackend,
    JanusWireError,
    JitterBuffer,
    RtpSender,
    audio_level,
    parse_rtp,
    read_events,
)
from conference.janus._resample import StreamResampler
from conference.janus._wire import (
    BridgeError,
    OwnJoin,
    PeerJoined,
    PeerLeft,
    RoomDestroyed,
    SessionEnded,
    Talking,
    reply_data,
    room_join,
)
from providers.twilio import mulaw_to_pcm16
from voice_hitl import ChannelClosedError
from voice_hitl.voice._audio import resample_pcm16


def bridge(data: dict[str, object], janus: str = "event") -> dict[str, object]:
    return {
        "janus": janus,
        "session_id": 1,
        "sender": 2,
        "plugindata": {"plugin": "janus.plugin.audiobridge", "data": data},
    }


def test_own_join_reads_the_rtp_port_and_the_people_already_there() -> None:
    msg = bridge(
        {
            "audiobridge": "joined",
            "room": 77,
            "id": 7264675788494071,
            "participants": [{"id": 1687606551093144, "display": "Bot", "setup": False}],
            "rtp": {"ip": "127.0.0.1", "port": 44114, "payload_type": 0},
        }
    )
    assert read_events(msg) == [
        OwnJoin("7264675788494071", "127.0.0.1", 44114),
        PeerJoined("1687606551093144", "Bot"),
    ]


def test_room_events_map_to_typed_events() -> None:
    joined = bridge({"audiobridge": "joined", "room": 77, "participants": [{"id": 5}]})
    assert read_events(joined) == [PeerJoined("5", "5")]  # no display name: the id
    talking = bridge({"audiobridge": "event", "participants": [{"id": 6, "talking": True}]})
    assert read_events(talking) == [PeerJoined("6", "6"), Talking("6", True)]
    assert read_events(bridge({"audiobridge": "event", "leaving": 5})) == [PeerLeft("5")]
    assert read_events(bridge({"audiobridge": "event", "kicked": 5})) == [PeerLeft("5", True)]
    assert read_events(bridge({"audiobridge": "talking", "id": 6})) == [Talking("6", True)]
    stopped = bridge({"audiobridge": "stopped-talking", "id": 6})
    assert read_events(stopped) == [Talking("6", False)]
    assert read_events(bridge({"audiobridge": "destroyed", "room": 77})) == [RoomDestroyed()]
    refused = bridge({"audiobridge": "event", "error_code": 489, "error": "Plain RTP no"})
    assert read_events(refused) == [BridgeError(489, "Plain RTP no")]
    assert read_events({"janus": "timeout", "session_id": 1}) == [SessionEnded("Janus timeout")]
    assert read_events({"janus": "ack", "transaction": "x"}) == []
    assert read_events({"janus": "webrtcup"}) == []


@pytest.mark.parametrize(
    ("msg", "message"),
    [
        ([], "must be a JSON object"),
        (bridge({"audiobridge": "joined", "id": 3}), "no rtp port"),
        (bridge({"audiobridge": "event", "leaving": None}), "participant id"),
        (bridge({"audiobridge": "event", "participants": {"id": 1}}), "must be a list"),
        ({"janus": "event", "plugindata": {"plugin": "janus.plugin.audiobridge"}}, "without data"),
    ],
)
def test_malformed_messages_are_named(msg: object, message: str) -> None:
    with pytest.raises(JanusWireError, match=message):
        read_events(msg)  # type: ignore[arg-type]


def test_reply_data_raises_janus_and_plugin_errors() -> None:
    assert reply_data({"janus": "success", "data": {"id": 9}}) == {"id": 9}
    created = bridge({"audiobridge": "created", "room": 77}, janus="success")
    assert reply_data(created)["room"] == 77
    with pytest.raises(JanusWireError, match="458: No such session"):
        reply_data({"janus": "error", "error": {"code": 458, "reason": "No such session"}})
    with pytest.raises(JanusWireError, match="AudioBridge error 486"):
        reply_data(bridge({"error_code": 486, "error": "exists"}, janus="success"))
    with pytest.raises(JanusWireError, match="expected a Janus success"):
        reply_data({"janus": "ack"})


def test_join_request_names_codec_port_seat_and_level_extension() -> None:
    body = room_join(77, "Alice", rtp_port=4000, participant_id=12, group="seat1", audiolevel_ext=1)
    assert body == {
        "request": "join",
        "room": 77,
        "display": "Alice",
        "codec": "pcmu",
        "rtp": {"ip": "127.0.0.1", "port": 4000, "payload_type": 0, "audiolevel_ext": 1},
        "id": 12,
        "group": "seat1",
    }


def tone(amplitude: int, n: int = 160) -> np.ndarray:
    return (np.sin(np.arange(n) * 0.3) * amplitude).astype(np.int16)


def test_rtp_round_trip_with_the_audio_level_and_talkspurt_marker() -> None:
    sender = RtpSender(level_id=1, ssrc=42)
    sender.sequence, sender.timestamp = 0xFFFF, 0xFFFFFF60
    quiet = parse_rtp(sender.packet(np.zeros(160, np.int16)), level_id=1)
    loud = parse_rtp(sender.packet(tone(8000)), level_id=1)
    again = parse_rtp(sender.packet(tone(8000)), level_id=1)
    assert (quiet.sequence, loud.sequence, again.sequence) == (0xFFFF, 0, 1)  # wraps
    assert (quiet.timestamp, loud.timestamp, again.timestamp) == (0xFFFFFF60, 0, 160)
    assert (quiet.level, quiet.voice, quiet.marker) == (127, False, False)
    assert loud.voice and loud.marker and not again.marker  # the talkspurt starts once
    assert loud.level == 15  # a sine of amplitude 8000: RMS -15.2 dBov
    assert loud.ssrc == 42 and loud.payload_type == 0 and len(loud.payload) == 160
    decoded = mulaw_to_pcm16(loud.payload)
    assert np.abs(decoded.astype(int) - tone(8000)).max() < 300  # G.711 quantisation
    assert parse_rtp(sender.packet(tone(8000))).level is None  # id not given: not read
    with pytest.raises(ValueError, match="holds 160 samples"):
        sender.packet(np.zeros(161, np.int16))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x80\x00", "at least 12 bytes"),
        (b"\x40" + bytes(11), "version 2"),
        (b"\x90" + bytes(11) + b"\xbe\xde", "extension truncated"),
        (b"\x90" + bytes(11) + struct.pack("!HH", 0xBEDE, 2) + bytes(4), "block truncated"),
        (b"\xa0" + bytes(11) + b"\x00\x00\x09", "padding of 9 bytes"),
        (b"\x8f" + bytes(11), "shorter than its header"),
    ],
)
def test_bad_rtp_is_named(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rtp(data)


def test_audio_level_is_minus_dbov() -> None:
    assert audio_level(np.zeros(160, np.int16)) == 127
    assert audio_level(np.full(160, 32767, np.int16)) == 0
    assert audio_level(np.full(160, 328, np.int16)) == 40  # 1 % of full scale


def test_jitter_buffer_reorders_counts_loss_and_lateness_and_wraps() -> None:
    jb: JitterBuffer[str] = JitterBuffer(depth=3)
    for seq in (65534, 0, 65535):  # out of order, across the wrap
        jb.push(seq, f"p{seq}")
    assert [jb.pop() for _ in range(3)] == [(True, "p65534"), (True, "p65535"), (True, "p0")]
    jb.push(2, "p2")
    jb.push(2, "p2")  # duplicate
    assert jb.pop() == (True, None)  # 1 never came: a gap
    jb.push(1, "p1")  # too late now
    assert jb.pop() == (True, "p2")
    assert jb.pop() == (False, None)  # ran dry: re-prime
    jb.push(3, "p3")
    assert jb.pop() == (False, None)  # priming again (depth 3)
    jb.push(4, "p4")
    jb.push(5, "p5")
    assert jb.pop() == (True, "p3")
    assert (jb.stats.played, jb.stats.lost, jb.stats.late, jb.stats.duplicate) == (5, 1, 1, 1)
    assert jb.stats.underruns == 1
    with pytest.raises(ValueError, match="depth"):
        JitterBuffer(depth=0)


def test_jitter_buffer_skips_ahead_when_over_capacity() -> None:
    jb: JitterBuffer[int] = JitterBuffer(depth=1, capacity=3)
    jb.push(10, 10)
    assert jb.pop() == (True, 10)
    for seq in (13, 14, 15, 16):  # 11 and 12 never come, and the buffer overflows
        jb.push(seq, seq)
    assert jb.pop() == (True, 13) and jb.stats.lost == 2
    for seq in (17, 18):  # no gap left: a player behind drops the oldest, not drifts
        jb.push(seq, seq)
    assert len(jb) == 3 and jb.stats.overflow == 2
    assert jb.pop() == (True, 16)


def test_speaker_clock_joins_levels_and_back_dated_talking_events() -> None:
    clock = SpeakerClock(window=0.03, talk_lag=0.2)
    clock.level("alice", 10.00, True)
    clock.level("bob", 10.00, False)
    assert clock.speakers_at(10.02) == {"alice"}
    assert clock.speakers_at(10.05) == frozenset()
    clock.talking("carol", True, 11.0)  # decided after 0.2 s of talking
    assert "carol" in clock.speakers_at(10.85)
    clock.talking("carol", False, 12.0)
    assert clock.speakers_at(11.7) == {"carol"} and clock.speakers_at(11.9) == frozenset()
    clock.forget("carol")
    assert clock.speakers_at(11.5) == frozenset()


def test_stream_resampler_is_continuous_across_frames() -> None:
    pytest.importorskip("soxr")
    signal = (np.sin(np.arange(8000) * 2 * np.pi * 300 / 8000) * 8000).astype(np.int16)
    resampler = StreamResampler(8000, 16000)
    out = np.concatenate([resampler.frame(signal[i : i + 160]) for i in range(0, 8000, 160)])
    assert len(out) == 16000 and resampler.frame_delay == 1
    # Each frame resampled on its own clicks at the frame edges: energy above 1 kHz, where a
    # 300 Hz tone has none. The stream keeps it ~1000 times lower.
    framewise = np.concatenate(
        [resample_pcm16(signal[i : i + 160], 8000, 16000) for i in range(0, 8000, 160)]
    )
    assert high_band(out[640:15000]) < 1e-7 < 1e-6 < high_band(framewise[640:15000])


def high_band(x: np.ndarray) -> float:
    """The share of energy above 1 kHz (16 kHz audio)."""
    spectrum = np.abs(np.fft.rfft(x.astype(float) * np.hanning(len(x)))) ** 2
    return float(spectrum[np.fft.rfftfreq(len(x), 1 / 16000) > 1000].sum() / spectrum.sum())


def test_backend_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="room must be a positive"):
        JanusConferenceBackend("http://127.0.0.1:1/janus", 0, secret="s")
    with pytest.raises(ValueError, match=r"seats must be in 0\.\.1024"):
        JanusConferenceBackend("http://127.0.0.1:1/janus", 1, secret="s", seats=1025)
    with pytest.raises(ValueError, match="seat_idle_timeout must be above 0"):
        JanusConferenceBackend("http://127.0.0.1:1/janus", 1, secret="s", seat_idle_timeout=0)
    backend = JanusConferenceBackend("http://127.0.0.1:1/janus", 1, secret="s")
    with pytest.raises(RuntimeError, match="seats are reserved once the backend started"):
        backend.reserve_seat("Alice")
    with pytest.raises(ValueError, match="display_name must not be empty"):
        backend.reserve_seat(" ")


async def test_unreachable_janus_fails_start_and_leaves_nothing_open() -> None:
    from redis_rig import free_port

    from conference.janus import JanusLostError

    backend = JanusConferenceBackend(f"http://127.0.0.1:{free_port()}/janus", 1, secret="s")
    with pytest.raises(JanusLostError, match="unreachable"):
        await backend.start()
    assert backend.media.bot is None


async def test_conference_ended_settles_requests_and_fails_application_approvals() -> None:
    rig = await make_rig()
    reading = rig.call("AskUserQuestion", {"question": "Ship it?", "ask": "bob"})
    await rig.observed.requests.get()
    approval = rig.conf.open_approval("deploy", approvers=["alice"], quorum=1, timeout=60)
    rig.backend._emit(ConferenceEnded("the room was destroyed"))
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled" and report.error_detail == "the room was destroyed"
    with pytest.raises(ChannelClosedError, match="ended: the room was destroyed"):
        await approval.wait()
    await rig.conf.close()
    assert not rig.conf.plugged
    reading.cancel()
    await rig.kit.aclose()


def test_public_names_show_the_public_package_and_errors_share_the_root() -> None:
    import conference.janus as janus_package
    from conference.janus import JanusLostError
    from voice_hitl import VoiceHitlError

    for name in janus_package.__all__:
        assert getattr(janus_package, name).__module__ == "conference.janus", name
    assert JanusLostError.__mro__[1:3] == (VoiceHitlError, ConnectionError)
    assert JanusWireError.__mro__[1:3] == (VoiceHitlError, ValueError)


def test_demo_janus_needs_the_conference_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from voice_hitl._cli import main

    assert main(["demo", "--janus", "--out", str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--janus runs the meeting in a Janus room: use it with --conference" in line


def test_opus_codec_round_trip_and_rtp_clock() -> None:
    pytest.importorskip("av", reason="Opus needs PyAV")
    from conference.janus._codec import Opus

    codec = Opus()
    sender = RtpSender(codec=codec, ssrc=1)
    sender.timestamp = 0
    t = np.arange(960 * 10) / 48_000
    signal = (np.sin(2 * np.pi * 440 * t) * 8000).astype(np.int16)
    packets = [parse_rtp(sender.packet(signal[i : i + 960])) for i in range(0, len(signal), 960)]
    assert [p.timestamp for p in packets[:3]] == [0, 960, 1920]  # 48 kHz clock, 20 ms each
    assert {p.payload_type for p in packets} == {111}
    decoded = np.concatenate([codec.decode(p.payload) for p in packets])
    assert len(decoded) == len(signal)
    # Opus delays its output a little; past that it is the same tone at the same level.
    assert abs(audio_level(decoded[2880:]) - audio_level(signal[2880:])) <= 1
    spectrum = np.abs(np.fft.rfft(decoded[2880:].astype(float)))
    assert abs(np.fft.rfftfreq(len(decoded) - 2880, 1 / 48_000)[spectrum.argmax()] - 440) < 10


async def test_talking_events_of_webrtc_participants_label_the_frames() -> None:
    # Janus emits talking events only for WebRTC participants (none in the real-room tests,
    # whose participants are plain RTP): fed here as Janus sends them.
    backend = JanusConferenceBackend("http://127.0.0.1:1/janus", 1, secret="s")
    events: list[object] = []
    backend.add_listener(events.append)
    dee = {"audiobridge": "joined", "participants": [{"id": 5, "display": "Dee"}]}
    backend._on_message(bridge(dee))
    loop = asyncio.get_running_loop()
    backend._on_message(bridge({"audiobridge": "talking", "id": 5}))
    talking_from = loop.time() - backend.clock.talk_lag
    assert backend.clock.speakers_at(talking_from + 0.01) == {"5"}
    backend._on_message(bridge({"audiobridge": "stopped-talking", "id": 5}))
    assert backend.clock.speakers_at(loop.time() + 0.01) == frozenset()
    backend._on_message(bridge({"audiobridge": "destroyed", "room": 1}))
    assert [type(e).__name__ for e in events] == [
        "ParticipantJoined",
        "ParticipantLeft",
        "ConferenceEnded",
    ]
    assert backend.participants == {} and backend.ended is not None


def test_an_rtp_latch_takes_one_source_and_ssrc_and_counts_the_rest() -> None:
    from conference.janus._latch import RtpLatch, RtpStats

    stats = RtpStats()
    first = RtpLatch(stats, "a seat")
    assert first.accepts(("10.0.0.1", 5000), 7)  # latches on the first valid packet
    assert first.accepts(("10.0.0.1", 5000), 7)
    assert not first.accepts(("10.0.0.2", 5000), 7)  # another address
    assert not first.accepts(("10.0.0.1", 5001), 7)  # another port
    assert not first.accepts(("10.0.0.1", 5000), 8)  # another SSRC
    janus = RtpLatch(stats, "the room mix", expected=("", 0))
    assert not janus.accepts(("127.0.0.1", 9), 1)  # nothing before the join says where
    janus.expect(("127.0.0.1", 9))
    assert janus.accepts(("127.0.0.1", 9), 1) and not janus.accepts(("127.0.0.1", 9), 2)
    assert stats.foreign == 5
