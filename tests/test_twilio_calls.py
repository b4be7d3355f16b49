"""Phone calls through Twilio Media Streams, end to end on loopback: a fake Twilio client
places the call; the server turns it into a voice session (mock provider) with a responder.

Keypad answers, what the caller heard when they hang up, barge-in, a dropped socket, a
session ended on our side, bad input."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import numpy as np
import pytest
from doors import Observed, human_tools
from websockets.asyncio.client import connect

from providers.mock import MockProviderSession, MockRealtimeProvider
from providers.twilio import PhoneServer, TwilioTransport
from providers.twilio.testing import FakeTwilioCall
from voice_hitl import (
    ProviderError,
    RealtimeVoiceChannel,
    RequestEvent,
    RequestNoted,
    VoiceKit,
    VoiceResponder,
    VoiceSession,
)
from voice_hitl.voice._provider import SessionConfig


@dataclass
class Phone:
    kit: VoiceKit
    provider: MockRealtimeProvider
    channel: RealtimeVoiceChannel
    server: PhoneServer
    observed: Observed
    notes: list[RequestNoted] = field(default_factory=list)
    noted: asyncio.Event = field(default_factory=asyncio.Event)

    async def session(self) -> VoiceSession:
        await self.provider.wait_for("connect")
        (session,) = self.channel.sessions
        return session

    async def report(self, call_id: str):  # type: ignore[no-untyped-def]
        while True:
            report = await self.observed.reports.get()
            if report.tool_call_id == call_id:
                return report


@pytest.fixture
async def phone() -> AsyncIterator[Phone]:
    kit = VoiceKit()
    provider = MockRealtimeProvider()
    human = human_tools()
    channel = RealtimeVoiceChannel(
        "phone", provider=provider, transport=TwilioTransport(), human_input_handler=human
    )
    kit.register_channel(channel)
    responder = VoiceResponder(kit)
    responder.serve(channel)
    server = PhoneServer(channel)
    rig = Phone(kit, provider, channel, server, Observed.on(kit))

    def note(event: RequestEvent) -> None:
        if isinstance(event, RequestNoted):
            rig.notes.append(event)
            rig.noted.set()

    human.handler.add_observer(note)
    await server.start()
    try:
        yield rig
    finally:
        await server.aclose()
        await responder.aclose()
        await kit.aclose()


def tone(seconds: float, rate: int = 24_000, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return np.round(8000 * np.sin(2 * np.pi * freq * t)).astype(np.int16)


async def ask(phone: Phone, session: VoiceSession, *, speak_seconds: float = 0.5) -> str:
    """The model asks to confirm; the responder says it; the 'voice' plays, then ends."""
    call_id = phone.provider.simulate_tool_call(session, "ConfirmAction", {"action": "refund"})
    await phone.provider.wait_for("say")
    phone.provider.simulate_audio(session, [tone(speak_seconds)])
    phone.provider.simulate_transcription(session, "Please confirm: refund.")
    return call_id


async def test_call_becomes_a_session_and_audio_flows_both_ways(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url, caller="+15550199") as call:
        session = await phone.session()
        assert (session.room_id, session.participant_id) == (call.call_sid, "+15550199")
        assert session.session_id == call.stream_sid
        await call.send_audio(tone(0.2, 8000), 8000)
        mock = phone.provider.sessions[0]
        await phone.provider.wait_until(lambda: sum(f.size for f in mock.audio_in) >= 4800)
        heard = np.concatenate(mock.audio_in)  # at the channel's 24 kHz
        peak = np.argmax(np.abs(np.fft.rfft(heard))) * 24_000 / heard.size
        assert heard.size == 4800 and abs(peak - 440) < 10
        phone.provider.simulate_audio(session, [tone(0.1)])
        await call.wait_for(lambda: len(call.heard) >= 800)
        assert len(call.heard) == 800  # 100 ms at 8 kHz, in 20 ms frames
        media = [m for m in call.received if m["event"] == "media"]
        assert all(len(m["media"]["payload"]) == 216 for m in media)  # 160 bytes, base64
        await call.hang_up()
    assert call.invalid == []


async def test_keypad_answer_from_dtmf_events(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        await call.press("1")
        record = await phone.provider.wait_for_tool_result(call_id)
        answer = json.loads(record.output)
        assert (answer["answer"], answer["via"]) == (True, "dtmf")
        await call.hang_up()
    assert call.invalid == []


async def test_hang_up_before_the_question_played(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url, hold_playback=True) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        await call.wait_for(lambda: call.queued_samples >= 4000)  # sent, not yet played
        await call.hang_up()
    report = await phone.report(call_id)
    assert report.outcome == "cancelled"
    assert report.error_detail == "caller hung up before hearing the question"
    await session.wait_closed()
    assert session.end_reason == "caller hung up"
    assert phone.channel.sessions == [] and phone.notes == []


async def test_hang_up_after_hearing_the_question(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        await phone.noted.wait()  # Twilio played our last mark: the caller heard it all
        assert [n.note for n in phone.notes] == ["question heard by the caller"]
        assert len(call.heard) >= 4000
        await call.hang_up()
    report = await phone.report(call_id)
    assert report.outcome == "cancelled"
    assert report.error_detail == "caller hung up without answering"


async def test_barge_in_clears_unplayed_audio_and_it_does_not_count_as_heard(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url, hold_playback=True) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        await call.wait_for(lambda: call.queued_samples >= 4000)
        phone.provider.simulate_speech(session, started=True)  # the caller talks over it
        await call.wait_for(lambda: call.clears >= 1)
        assert call.cleared_samples >= 4000 and call.queued_samples == 0
        assert call.marks_returned and not any(played for _, played in call.marks_returned)
        phone_call = phone.server.calls[call.call_sid]
        await call.hang_up()  # the cleared marks reach the server before 'stop'
        assert phone_call.stream.played_samples == 0
    report = await phone.report(call_id)
    assert report.error_detail == "caller hung up before hearing the question"


async def test_dropped_socket_ends_the_session_and_settles(phone: Phone) -> None:
    call = FakeTwilioCall(phone.server.url)
    await call.connect()
    session = await phone.session()
    call_id = await ask(phone, session)
    await call.aclose()  # no 'stop': the connection just goes
    report = await phone.report(call_id)
    assert report.error_detail in (
        "the call's media stream dropped before hearing the question",
        "the call's media stream dropped without answering",
    )
    await session.wait_closed()
    assert session.end_reason == "the call's media stream dropped"


async def test_session_ended_on_our_side_hangs_up_the_stream(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        await phone.channel.end_session(session, reason="done")
        await call.closed.wait()
        assert call.close_code == 1000
    assert session.ended and phone.channel.sessions == []


async def test_server_close_ends_calls(phone: Phone) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        await phone.server.aclose()
        await call.closed.wait()
    report = await phone.report(call_id)
    assert report.error_detail.startswith("the phone server closed")
    assert session.end_reason == "the phone server closed"


async def test_bad_start_is_refused_with_the_reason(phone: Phone) -> None:
    async with connect(phone.server.url) as ws:
        await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
        start = {
            "event": "start",
            "start": {
                "streamSid": "MZ1",
                "callSid": "CA1",
                "mediaFormat": {"encoding": "audio/x-l16", "sampleRate": 16000, "channels": 1},
            },
        }
        await ws.send(json.dumps(start))
        await ws.wait_closed()
    assert ws.close_code == 1008
    assert "unsupported media format" in (ws.close_reason or "")
    assert phone.server.rejected == 1 and phone.provider.sessions == []


async def test_bad_message_mid_call_is_dropped_and_the_call_goes_on(
    phone: Phone, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        with caplog.at_level(logging.WARNING, "voice_hitl.providers.twilio"):
            await call.send_json({"event": "media", "streamSid": call.stream_sid, "media": {}})
            await call.press("2")
            record = await phone.provider.wait_for_tool_result(call_id)
        assert json.loads(record.output)["answer"] is False
        assert "media.payload" in caplog.text
        await call.hang_up()


def test_server_needs_a_twilio_transport() -> None:
    channel = RealtimeVoiceChannel("x", provider=MockRealtimeProvider())
    with pytest.raises(ValueError, match="TwilioTransport"):
        PhoneServer(channel)


async def test_provider_that_cannot_connect_closes_the_call_with_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Unreachable(MockRealtimeProvider):
        async def connect(self, config: SessionConfig) -> MockProviderSession:
            raise ProviderError("model unreachable", code="connection_failed")

    channel = RealtimeVoiceChannel("phone", provider=Unreachable(), transport=TwilioTransport())
    async with PhoneServer(channel) as server, FakeTwilioCall(server.url) as call:
        await call.closed.wait()
    assert call.close_code == 1011 and "model unreachable" in call.close_reason
    assert "could not start" in caplog.text
    await channel.close()


async def test_a_binary_frame_mid_call_is_dropped_and_named(
    phone: Phone, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        assert call._ws is not None
        with caplog.at_level(logging.WARNING, "voice_hitl.providers.twilio"):
            await call._ws.send(b"\x00\x00\xfe\xff")
            await call.press("1")
            record = await phone.provider.wait_for_tool_result(call_id)
        assert json.loads(record.output)["answer"] is True
        assert "binary frame not allowed" in caplog.text and "utf-32" not in caplog.text
        await call.hang_up()


async def test_an_oversized_message_ends_the_call_logged_and_named(
    phone: Phone, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeTwilioCall(phone.server.url) as call:
        session = await phone.session()
        call_id = await ask(phone, session)
        with caplog.at_level(logging.ERROR, "voice_hitl.providers.twilio"):
            payload = "A" * (2_100_000 // 4 * 4)  # 2.1 MB of base64
            media = {"event": "media", "streamSid": call.stream_sid, "media": {"payload": payload}}
            await call.send_json(media)
            await call.closed.wait()
            report = await phone.report(call_id)
        assert call.close_code == 1009
        assert "1009 (message too big" in caplog.text
    await session.wait_closed()
    assert session.end_reason.startswith("the call's media stream dropped: a message over the")
    assert report.error_detail.startswith(session.end_reason)
