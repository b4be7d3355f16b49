"""The Media Streams protocol without sockets: a recorded inbound call, what we send, marks
and clear, bad input; and the same messages read and written by Pipecat's Twilio serializer
(a peer nobody here wrote)."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from providers.twilio import (
    AudioPlayed,
    CallerAudio,
    KeyPressed,
    MediaStream,
    StreamProtocolError,
    StreamStarted,
    StreamStopped,
    mulaw_to_pcm16,
    pcm16_to_mulaw,
)

RECORDED = Path(__file__).parent / "fixtures" / "twilio" / "inbound_call.jsonl"


def recorded() -> list[str]:
    return RECORDED.read_text().splitlines()


def started_stream() -> MediaStream:
    stream = MediaStream()
    for line in recorded()[:2]:
        stream.receive(line)
    stream.events()
    return stream


def test_recorded_call_gives_its_events_in_order() -> None:
    stream = MediaStream()
    events = []
    for line in recorded():
        stream.receive(line)
        events.extend(stream.events())
    kinds = [type(e) for e in events]
    assert kinds == [StreamStarted, CallerAudio, CallerAudio, KeyPressed, StreamStopped]
    start = events[0]
    assert isinstance(start, StreamStarted)
    assert start.call_sid.startswith("CA") and start.stream_sid == stream.stream_sid
    assert start.custom_parameters == {"caller": "+15550123", "campaign": "refunds"}
    audio = np.concatenate([e.frame for e in events if isinstance(e, CallerAudio)])
    assert audio.dtype == np.int16 and audio.size == 320
    spectrum = np.abs(np.fft.rfft(audio))
    assert abs(np.argmax(spectrum) * 8000 / audio.size - 440) < 30
    assert events[3] == KeyPressed("7")
    assert stream.stopped
    stream.receive(recorded()[2])  # after stop: ignored, not an error
    assert stream.events() == []


def test_agent_audio_goes_out_in_20ms_frames_then_a_mark() -> None:
    stream = started_stream()
    stream.send_audio(np.zeros(400, dtype=np.int16))  # 50 ms: two frames, 80 samples kept
    sent = [json.loads(m) for m in stream.outgoing()]
    assert [m["event"] for m in sent] == ["media", "media", "mark"]
    assert all(m["streamSid"] == stream.stream_sid for m in sent)
    assert [len(base64.b64decode(m["media"]["payload"])) for m in sent[:2]] == [160, 160]
    assert stream.sent_samples == 320
    stream.flush()
    tail = [json.loads(m) for m in stream.outgoing()]
    assert [m["event"] for m in tail] == ["media", "mark"]
    assert len(base64.b64decode(tail[0]["media"]["payload"])) == 80
    # Twilio plays the first mark back: the caller heard the first 320 samples.
    stream.receive(_mark(stream, sent[2]["mark"]["name"]))
    assert stream.events() == [AudioPlayed(320)]
    assert stream.unplayed_samples == 80


def _mark(stream: MediaStream, name: str) -> str:
    message = {"event": "mark", "streamSid": stream.stream_sid, "mark": {"name": name}}
    return json.dumps(message)


def test_marks_returned_after_clear_do_not_count_as_played() -> None:
    stream = started_stream()
    stream.send_audio(np.ones(1600, dtype=np.int16))
    names = [json.loads(m)["mark"]["name"] for m in stream.outgoing() if '"mark"' in m]
    stream.clear()
    assert [json.loads(m)["event"] for m in stream.outgoing()] == ["clear"]
    stream.receive(_mark(stream, names[0]))  # Twilio returns pending marks on clear
    assert stream.events() == []
    assert stream.played_samples == 0
    stream.receive(_mark(stream, "someone-elses"))  # not ours: ignored
    assert stream.events() == []


@pytest.mark.parametrize(
    ("message", "complaint"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "'event' string"),
        ('{"event": "start", "start": {"streamSid": "MZ1"}}', "callSid"),
        ('{"event": "media", "media": {"payload": "AAAA"}}', "before 'start'"),
    ],
)
def test_bad_input_before_start_names_the_problem(message: str, complaint: str) -> None:
    with pytest.raises(StreamProtocolError, match=complaint):
        MediaStream().receive(message)


def test_unsupported_media_format_is_refused() -> None:
    start = json.loads(recorded()[1])
    start["start"]["mediaFormat"] = {"encoding": "audio/x-l16", "sampleRate": 16000, "channels": 1}
    with pytest.raises(StreamProtocolError, match="audio/x-l16 at 16000 Hz"):
        MediaStream().receive(json.dumps(start))


def test_bad_input_during_the_call_names_the_problem() -> None:
    stream = started_stream()
    sid = stream.stream_sid
    cases = [
        ({"event": "media", "streamSid": sid, "media": {"payload": "***"}}, "not base64"),
        ({"event": "media", "streamSid": sid, "media": {}}, "media.payload"),
        ({"event": "dtmf", "streamSid": sid, "dtmf": {"digit": "x"}}, "unknown key 'x'"),
        ({"event": "media", "streamSid": "MZother", "media": {"payload": ""}}, "MZother"),
        (json.loads(recorded()[1]), "second 'start'"),
    ]
    for message, complaint in cases:
        with pytest.raises(StreamProtocolError, match=complaint):
            stream.receive(json.dumps(message))
    stream.receive('{"event": "something-new", "streamSid": "x"}')  # unknown event: ignored
    stream.receive(recorded()[3])  # the stream is unchanged and goes on
    assert [type(e) for e in stream.events()] == [CallerAudio]


# -- a peer: Pipecat's Twilio serializer --------------------------------------------------------


def _pipecat_serializer(stream_sid: str):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():  # pipecat imports audioop (deprecated on 3.11-3.12)
        warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
        pytest.importorskip("pipecat.frames.frames")
        twilio = pytest.importorskip("pipecat.serializers.twilio")
    params = twilio.TwilioFrameSerializer.InputParams(sample_rate=8000, auto_hang_up=False)
    return twilio.TwilioFrameSerializer(stream_sid, params=params)


async def _ready(serializer):  # type: ignore[no-untyped-def]
    # What a pipeline's setup would tell it: the pipeline runs at 8 kHz (no resampling).
    await serializer.setup(SimpleNamespace(audio_in_sample_rate=8000))
    return serializer


async def test_pipecat_reads_the_recorded_call_as_we_do() -> None:
    serializer = await _ready(_pipecat_serializer("MZ18ad3ab5a668481ce02b83e7395059f0"))
    from pipecat.frames.frames import InputAudioRawFrame, InputDTMFFrame

    stream = MediaStream()
    compared = []
    for line in recorded():
        stream.receive(line)
        ours = stream.events()
        theirs = await serializer.deserialize(line)
        if isinstance(theirs, InputAudioRawFrame):
            (audio,) = ours
            assert isinstance(audio, CallerAudio)
            assert audio.frame.tobytes() == theirs.audio
        elif isinstance(theirs, InputDTMFFrame):
            assert ours == [KeyPressed(theirs.button.value)]
        compared.append(type(theirs).__name__)
    assert compared.count("InputAudioRawFrame") == 2 and "InputDTMFFrame" in compared


async def test_pipecat_writes_the_messages_we_write() -> None:
    stream = started_stream()
    serializer = await _ready(_pipecat_serializer(stream.stream_sid))
    from pipecat.frames.frames import InterruptionFrame, OutputAudioRawFrame

    speech = np.round(9000 * np.sin(np.arange(160) / 3)).astype(np.int16)
    stream.send_audio(speech)
    ours = [json.loads(m) for m in stream.outgoing()]
    theirs = json.loads(await serializer.serialize(OutputAudioRawFrame(speech.tobytes(), 8000, 1)))
    assert ours[0] == theirs
    assert mulaw_to_pcm16(pcm16_to_mulaw(speech)).size == 160
    stream.clear()
    (clear,) = [json.loads(m) for m in stream.outgoing()]
    assert clear == json.loads(await serializer.serialize(InterruptionFrame()))


def test_clear_is_sent_only_while_something_may_be_playing() -> None:
    stream = started_stream()
    stream.clear()  # nothing sent yet: nothing to clear
    assert stream.outgoing() == []
    stream.send_audio(np.ones(320, dtype=np.int16))
    (mark,) = [json.loads(m)["mark"]["name"] for m in stream.outgoing() if '"mark"' in m]
    stream.receive(_mark(stream, mark))  # played out
    stream.clear()  # the caller speaks after the agent finished: nothing to clear
    stream.clear()
    assert stream.outgoing() == []
    stream.send_audio(np.ones(320, dtype=np.int16))
    stream.outgoing()
    stream.clear()  # talking over the agent: one clear
    stream.clear()  # already cleared, its mark still on the way back: no second one
    assert [json.loads(m)["event"] for m in stream.outgoing()] == ["clear"]


def test_a_binary_frame_is_refused_as_such() -> None:
    stream = started_stream()
    with pytest.raises(StreamProtocolError, match=r"^binary frame not allowed"):
        stream.receive(b'{"event": "media"}')
    with pytest.raises(StreamProtocolError, match=r"^binary frame not allowed"):
        stream.receive(b"\x00\x00\xfe\xff")  # once read as a "utf-32-be" decode error
