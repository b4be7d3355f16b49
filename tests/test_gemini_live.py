"""GeminiLiveProvider driven by RealtimeVoiceChannel against the loopback Live test server.

The door scenarios shared with the other providers live in ``test_voice_channel.py``; this
file covers what is Gemini's own: the handshake and ``setup``, audio rates, ``goAway`` and
resumption, results of calls from a lost connection, closes that carry errors, malformed
server frames, and the SDK's own client against the test server. Every message either side
wrote is checked against the ``google-genai`` types in the camelCase wire form.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pytest

pytest.importorskip("google.genai", reason="the gemini extra (google-genai) is not installed")

from doors import LOOKUP, Observed, human_tools
from tls_front import self_signed, tls_front

from providers.base import (
    AudioFormat,
    AudioOutEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SessionConfig,
    SpeechStartedEvent,
    TranscriptionEvent,
)
from providers.gemini_live import GeminiLiveProvider, GeminiLiveSession, ReconnectPolicy
from providers.gemini_live_testing import (
    Cancel,
    Close,
    Drop,
    ExpectResponse,
    FunctionCall,
    GoAway,
    Interrupt,
    LiveServerConnection,
    LiveTestServer,
    SendRaw,
    Speak,
    UserSays,
    play,
    validate_client_message,
    validate_server_message,
)
from voice_hitl import (
    ChannelClosedError,
    ProviderError,
    RealtimeVoiceChannel,
    VoiceKit,
    VoiceSession,
)

FAST = ReconnectPolicy(max_attempts=3, initial_delay=0.0, max_delay=0.0, open_timeout=5.0)


async def host(name: str, arguments: dict[str, Any]) -> str:
    return f"host:{name}"


def check_wire(server: LiveTestServer) -> tuple[int, int]:
    """Every message both ways, strictly against the SDK's types; returns the counts."""
    assert server.invalid == [], "the provider sent messages the server rejected"
    client = server_side = 0
    for conn in server.connections:
        for message in conn.received:
            validate_client_message(message, strict=True)
            client += 1
        for message in conn.sent:
            validate_server_message(message, strict=True)
            server_side += 1
    return client, server_side


@pytest.fixture
async def server() -> AsyncIterator[LiveTestServer]:
    async with LiveTestServer(api_key="g-test") as srv:
        yield srv
    check_wire(srv)


class Rig:
    def __init__(self, server: LiveTestServer, **provider_kw: Any) -> None:
        self.server = server
        self.kit = VoiceKit()
        self.observed = Observed.on(self.kit)
        provider_kw.setdefault("api_key", "g-test")
        provider_kw.setdefault("reconnect", FAST)
        provider_kw.setdefault("url", server.url)
        self.provider = GeminiLiveProvider(**provider_kw)
        self.voice = RealtimeVoiceChannel(
            "voice",
            provider=self.provider,
            tools=[LOOKUP],
            tool_handler=host,
            human_input_handler=human_tools(),
            instructions="Be brief.",
        )
        self.kit.register_channel(self.voice)
        self.events: asyncio.Queue[ProviderEvent] = asyncio.Queue()

    async def start(self) -> tuple[VoiceSession, LiveServerConnection]:
        session = await self.voice.start_session("room-1", participant_id="caller-7")
        session.add_listener(self.events.put_nowait)
        conn = await self.server.next_connection()
        await conn.expect("setup")
        return session, conn

    async def next_event(self, kind: type[Any]) -> Any:
        while True:
            event = await self.events.get()
            if isinstance(event, kind):
                return event

    def resolve(self, pending_id: str, answer: str) -> bool:
        assert self.voice.human_input_handler is not None
        return self.voice.human_input_handler.handler.resolve(pending_id, answer)


async def test_handshake_key_header_and_setup(server: LiveTestServer) -> None:
    rig = Rig(server, model="gemini-live-test", extra_headers={"X-Trace": "t1"})
    session, conn = await rig.start()
    assert conn.path.endswith("GenerativeService.BidiGenerateContent")
    assert conn.headers["x-goog-api-key"] == "g-test" and conn.headers["X-Trace"] == "t1"
    setup = conn.setup
    assert setup["model"] == "models/gemini-live-test"
    names = {d["name"] for d in setup["tools"][0]["functionDeclarations"]}
    assert names == {"lookup", "AskUserQuestion", "ConfirmAction"}
    assert setup["systemInstruction"]["parts"][0]["text"] == "Be brief."
    await rig.kit.aclose()


async def test_bad_key_is_a_fatal_provider_error(server: LiveTestServer) -> None:
    provider = GeminiLiveProvider(api_key="wrong", url=server.url, reconnect=FAST)
    with pytest.raises(ProviderError, match="API key not valid") as info:
        await provider.connect(SessionConfig())
    assert info.value.code == "unauthorized" and not info.value.recoverable
    assert server.rejected_keys == 1


async def test_answer_and_host_tool_reach_the_server(server: LiveTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    asked = await conn.function_call("AskUserQuestion", {"question": "Which account?"})
    event = await rig.observed.requests.get()
    assert (event.actor_id, event.arguments) == ("caller-7", {"question": "Which account?"})
    (_, looked) = await play(conn, [FunctionCall("lookup", {"key": "k"}), ExpectResponse()])
    assert (looked.text, looked.is_error) == ("host:lookup", False)
    assert rig.resolve(event.pending_id, '{"answer": "savings"}')
    response = await conn.expect_tool_response(asked)
    assert (response.name, json.loads(response.text)) == ("AskUserQuestion", {"answer": "savings"})
    report = await rig.observed.reports.get()
    assert (report.outcome, report.door.value) == ("ok", "provider")
    await rig.kit.aclose()


async def test_audio_rates_say_and_interrupt() -> None:
    async with LiveTestServer(binary=False) as server:  # text frames are read too
        kit = VoiceKit()
        provider = GeminiLiveProvider(url=server.url, reconnect=FAST)
        voice = RealtimeVoiceChannel("v", provider=provider)
        voice.input_format, voice.output_format = AudioFormat(8_000), AudioFormat(48_000)
        kit.register_channel(voice)
        session = await voice.start_session("r")
        events: asyncio.Queue[ProviderEvent] = asyncio.Queue()
        session.add_listener(events.put_nowait)
        conn = await server.next_connection()
        provider_session = session.provider_session
        await provider_session.send_audio(np.zeros(160, dtype=np.int16))  # 20 ms at 8 kHz
        audio = await conn.expect("realtimeInput")
        assert audio["audio"]["mimeType"] == "audio/pcm;rate=16000"
        assert len(audio["audio"]["data"]) == 856  # 640 bytes of PCM16 at 16 kHz, base64
        await provider_session.say("One moment.")
        text, complete = await conn.expect_turn("Say exactly this")
        assert text.endswith("One moment.") and complete
        await provider_session.interrupt()  # the Live API has no client-side cancel
        await conn.speak("Hello there.")
        await conn.interrupt()
        seen: list[ProviderEvent] = []
        while not any(isinstance(e, SpeechStartedEvent) for e in seen):
            seen.append(await events.get())
        frames = [e.frame.size for e in seen if isinstance(e, AudioOutEvent)]
        assert frames == [960]  # 480 samples at 24 kHz -> 48 kHz
        finals = [e.text for e in seen if isinstance(e, TranscriptionEvent) and e.final]
        assert finals == ["Hello there."]
        assert conn.count("clientContent") == 1
        await kit.aclose()
        check_wire(server)


async def test_go_away_resumes_and_the_late_answer_is_read(server: LiveTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "Which account?"})
    event = await rig.observed.requests.get()
    updates = [m["sessionResumptionUpdate"] for m in conn.sent if "sessionResumptionUpdate" in m]
    handle = updates[-1]["newHandle"]
    await conn.go_away("5s")
    again = await server.next_connection()
    await again.expect("setup")
    assert again.setup["sessionResumption"] == {"handle": handle}
    note, complete = await again.expect_turn("[Tool AskUserQuestion pending]")
    assert '"question": "Which account?"' in note and not complete
    assert rig.resolve(event.pending_id, "savings")  # the request survived the handover
    text, complete = await again.expect_turn("[Tool AskUserQuestion completed]")
    assert "Which account?" in text and text.endswith("savings") and complete
    assert again.count("toolResponse") == conn.count("toolResponse") == 0
    report = await rig.observed.reports.get()
    assert report.outcome == "ok"
    provider_session = session.provider_session
    assert isinstance(provider_session, GeminiLiveSession)
    assert provider_session.connections == 2
    seen = [rig.events.get_nowait() for _ in range(rig.events.qsize())]
    assert not any(isinstance(e, ProviderErrorEvent) for e in seen)  # a planned handover
    # The resumed session serves new calls with toolResponse again.
    (_, looked) = await play(again, [FunctionCall("lookup", {"key": "k"}), ExpectResponse()])
    assert looked.text == "host:lookup"
    assert call_id not in provider_session.protocol.open_calls
    await rig.kit.aclose()


async def test_answer_given_while_disconnected_is_delivered_after(
    server: LiveTestServer,
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await conn.function_call("AskUserQuestion", {"question": "Which account?"})
    event = await rig.observed.requests.get()
    await conn.drop()
    lost = await rig.next_event(ProviderErrorEvent)
    assert lost.error.code == "connection_lost" and lost.error.recoverable
    assert rig.resolve(event.pending_id, "checking")  # the request is still open
    again = await server.next_connection()
    text, complete = await again.expect_turn("[Tool AskUserQuestion completed]")
    assert "Which account?" in text and text.endswith("checking") and complete
    assert (await rig.observed.reports.get()).outcome == "ok"
    await rig.kit.aclose()


async def test_result_written_as_the_socket_died_is_written_again(
    server: LiveTestServer,
) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("lookup", {"key": "k"})
    await conn.expect_tool_response(call_id)  # written; the server never moved past it
    await conn.drop()
    again = await server.next_connection()
    text, complete = await again.expect_turn("[Tool lookup completed]")
    assert text.endswith("host:lookup") and complete
    await rig.kit.aclose()


async def test_gives_up_and_an_undeliverable_result_raises(server: LiveTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "?"})
    await rig.observed.requests.get()
    server.api_key = "rotated"  # every reconnect is now refused (close 1008)
    await conn.drop()
    await rig.next_event(ProviderErrorEvent)  # connection_lost: the session is reconnecting
    provider_session = session.provider_session
    with pytest.raises(ProviderError, match="could not be re-established") as info:
        await provider_session.submit_tool_result(call_id, "too late", is_error=False)
    assert info.value.code == "connection_failed" and not info.value.recoverable
    final = await rig.next_event(ProviderErrorEvent)
    assert final.error.code == "connection_failed" and not final.error.recoverable
    assert "API key not valid" in str(final.error)
    report = await rig.observed.reports.get()
    assert report.outcome == "cancelled"
    assert all(c.count("toolResponse") + c.count("clientContent") == 0 for c in server.connections)
    await rig.kit.aclose()


async def test_error_closes_and_malformed_frames(server: LiveTestServer) -> None:
    rig = Rig(server)
    session, conn = await rig.start()
    await play(conn, [SendRaw(b'{"toolCall": '), Speak("Still here.")])
    error = await rig.next_event(ProviderErrorEvent)
    assert error.error.code == "malformed_server_event" and error.error.recoverable
    await play(conn, [Close(1011, "Internal error encountered.")])
    error = await rig.next_event(ProviderErrorEvent)
    assert (error.error.code, error.error.recoverable) == ("server_error", True)
    again = await server.next_connection()
    (_, looked) = await play(again, [FunctionCall("lookup"), ExpectResponse()])
    assert looked.text == "host:lookup"
    await play(again, [Close(1007, "Request contains an invalid argument.")])
    error = await rig.next_event(ProviderErrorEvent)
    assert (error.error.code, error.error.recoverable) == ("invalid_request", False)
    await rig.kit.aclose()


async def test_the_sdk_client_against_the_test_server(tmp_path: Path) -> None:
    """google-genai's own Live client (a peer nobody here wrote) runs a tool round trip and a
    spoken turn. The SDK writes some keys in snake_case (``tool_response``,
    ``parameters_json_schema``), which the real server accepts and so does the test server;
    only the strict camelCase check is left out here.

    The SDK always dials ``wss://`` with an API key, so it reaches the plain test server
    through a TLS loopback front, configured by its public options alone (``base_url`` and
    ``async_client_args={"ssl": ...}``): no private attribute is touched, so an SDK upgrade
    that changed how it connects would fail here rather than bypass the check."""
    pytest.importorskip("cryptography", reason="google-auth's dependency, for the TLS front")
    server_tls, client_tls = self_signed(tmp_path)
    async with (
        LiveTestServer(api_key="g-test") as server,
        tls_front(urlparse(server.url).port or 0, server_tls) as front,
    ):
        await _sdk_session(server, front.port, client_tls)
    assert front.connections == 1 and len(server.connections) == 1
    assert server.invalid == []
    for message in server.connections[0].sent:
        validate_server_message(message, strict=True)
    kinds = [next(iter(m)) for m in server.connections[0].received]
    assert kinds == ["setup", "toolResponse"]


async def _sdk_session(server: LiveTestServer, port: int, tls: ssl.SSLContext) -> None:
    from google import genai
    from google.genai import types

    options = {"base_url": f"https://127.0.0.1:{port}", "async_client_args": {"ssl": tls}}
    client = genai.Client(api_key="g-test", http_options=options)
    declaration = {"name": "lookup", "parameters_json_schema": LOOKUP.parameters}
    config = {"response_modalities": ["AUDIO"], "tools": [{"function_declarations": [declaration]}]}
    async with client.aio.live.connect(model="gemini-live-test", config=config) as live:
        conn = await server.next_connection()
        await conn.expect("setup")
        call_id = await conn.function_call("lookup", {"key": "k"})
        async for message in live.receive():
            if message.tool_call is not None:
                (call,) = message.tool_call.function_calls or []
                assert (call.id, call.name, call.args) == (call_id, "lookup", {"key": "k"})
                answer = types.FunctionResponse(id=call.id, name=call.name, response={"output": 1})
                await live.send_tool_response(function_responses=[answer])
                break
        response = await conn.expect_tool_response(call_id)
        assert (response.text, response.is_error) == ("1", False)
        await conn.speak("Done.")
        spoken = ""
        async for message in live.receive():
            content = message.server_content
            if content is not None and content.output_transcription is not None:
                spoken += content.output_transcription.text or ""
            if content is not None and content.turn_complete:
                break
        assert spoken == "Done."
    assert conn.setup["model"] == "models/gemini-live-test"


async def test_script_steps_cancel_go_away_and_drop() -> None:
    async with LiveTestServer(auto_respond=True) as server:
        rig = Rig(server, api_key=None)
        session, conn = await rig.start()
        script = [
            FunctionCall("lookup", {"key": "a"}),
            ExpectResponse(),
            FunctionCall("AskUserQuestion", {"question": "?"}),
            UserSays("never mind"),
        ]
        results = await play(conn, script)
        assert results[1].text == "host:lookup"
        await rig.observed.requests.get()
        assert (await rig.observed.reports.get()).tool_name == "lookup"
        await play(conn, [Interrupt(), Cancel(results[2]), GoAway("1s")])
        report = await rig.observed.reports.get()
        assert report.outcome == "cancelled" and "interrupted" in report.error_detail
        assert session.transcript[-1].text == "never mind"
        # auto_respond ended a turn after the toolResponse: nothing is resent after goAway.
        assert {"serverContent": {"turnComplete": True}} in conn.sent
        again = await server.next_connection()
        await again.expect("setup")
        server.accept_handles = False  # handles expire: resuming fails, a fresh session starts
        await play(again, [Drop()])
        rejected = await server.next_connection()  # resuming with the expired handle
        await rejected.closed.wait()
        third = await server.next_connection()
        await third.expect("setup")
        assert "handle" in rejected.setup["sessionResumption"]
        assert third.setup["sessionResumption"] == {}
        assert again.count("clientContent") == third.count("clientContent") == 0
        (_, looked) = await play(third, [FunctionCall("lookup"), ExpectResponse()])
        assert looked.text == "host:lookup"
        await rig.kit.aclose()
    check_wire(server)


async def test_closing_while_a_result_waits_raises_closed(server: LiveTestServer) -> None:
    slow = ReconnectPolicy(max_attempts=3, initial_delay=3600.0, max_delay=3600.0)
    rig = Rig(server, reconnect=slow)
    session, conn = await rig.start()
    call_id = await conn.function_call("AskUserQuestion", {"question": "?"})
    await rig.observed.requests.get()
    await conn.drop()
    await rig.next_event(ProviderErrorEvent)  # lost; the next attempt is an hour away
    provider_session = session.provider_session
    submitting = asyncio.create_task(
        provider_session.submit_tool_result(call_id, "yes", is_error=False)
    )
    await asyncio.sleep(0)  # one loop turn: the task runs up to its wait
    assert isinstance(provider_session, GeminiLiveSession)
    assert provider_session.protocol.waiting(call_id) and not submitting.done()
    await provider_session.aclose()
    with pytest.raises(ChannelClosedError, match="session closed"):
        await submitting
    await rig.kit.aclose()
