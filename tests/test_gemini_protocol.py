"""LiveProtocol (sans-I/O) against recorded-shape Live server messages: no sockets, no loop.

Every client message the protocol writes is checked against the ``google-genai`` SDK's
``LiveClientMessage`` in the strict camelCase wire form, and every fixture message against
``LiveServerMessage`` (the peer types nobody here wrote).
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("google.genai", reason="the gemini extra (google-genai) is not installed")

from doors import ASK, CONFIRM, LOOKUP

from providers.base import (
    AudioFormat,
    AudioOutEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SessionConfig,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)
from providers.gemini_live import LiveOptions, LiveProtocol
from providers.gemini_live_testing import (
    MessageError,
    validate_client_message,
    validate_server_message,
)
from voice_hitl import ProviderError

FIXTURES = Path(__file__).parent / "fixtures" / "gemini"
AUDIO_480 = base64.b64encode(np.arange(480, dtype="<i2").tobytes()).decode()
CONFIG = SessionConfig(
    instructions="Be brief.",
    tools=(LOOKUP, ASK, CONFIRM),
    input_format=AudioFormat(8_000),
    output_format=AudioFormat(48_000),
)


def fixture(name: str) -> list[str]:
    messages = json.loads((FIXTURES / f"{name}.json").read_text())
    lines = [json.dumps(message).replace("$AUDIO_480", AUDIO_480) for message in messages]
    for line in lines:
        validate_server_message(json.loads(line), strict=True)
    return lines


def sent(protocol: LiveProtocol) -> list[dict[str, Any]]:
    """Drain the protocol's messages, checking each against the SDK's types (strict)."""
    messages = [json.loads(text) for text in protocol.outgoing()]
    for message in messages:
        validate_client_message(message, strict=True)
    return messages


def feed(protocol: LiveProtocol, lines: list[str]) -> list[ProviderEvent]:
    for line in lines:
        protocol.receive(line)
    return protocol.events()


def ready(options: LiveOptions | None = None) -> LiveProtocol:
    protocol = LiveProtocol(CONFIG, "gemini-test-model", options)
    protocol.connection_made()
    sent(protocol)
    feed(protocol, fixture("session"))
    return protocol


def test_setup_declares_tools_instructions_and_transcription() -> None:
    protocol = LiveProtocol(CONFIG, "gemini-test-model", LiveOptions(voice="Puck"))
    protocol.connection_made()
    (message,) = sent(protocol)
    setup = message["setup"]
    assert setup["model"] == "models/gemini-test-model"
    assert setup["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    (tools,) = setup["tools"]
    declared = {d["name"]: d for d in tools["functionDeclarations"]}
    assert set(declared) == {"lookup", "AskUserQuestion", "ConfirmAction"}
    assert declared["AskUserQuestion"]["parametersJsonSchema"] == ASK.parameters
    assert setup["generationConfig"]["responseModalities"] == ["AUDIO"]
    voice = setup["generationConfig"]["speechConfig"]["voiceConfig"]
    assert voice == {"prebuiltVoiceConfig": {"voiceName": "Puck"}}
    assert setup["inputAudioTranscription"] == {} == setup["outputAudioTranscription"]
    assert setup["sessionResumption"] == {}
    assert not protocol.ready


def test_nothing_but_setup_before_setup_complete() -> None:
    protocol = LiveProtocol(CONFIG, "m")
    protocol.connection_made()
    sent(protocol)
    assert protocol.append_audio(np.zeros(160, dtype=np.int16)) is False
    protocol.inject_context("note")
    assert sent(protocol) == []
    feed(protocol, fixture("session"))
    assert protocol.ready and protocol.handle == "Cg0KC3Nlc3Npb24tMDAx"
    (turn,) = sent(protocol)
    assert turn["clientContent"]["turnComplete"] is False
    assert turn["clientContent"]["turns"][0]["parts"][0]["text"] == "note"


def test_audio_in_is_16khz_pcm_and_out_is_resampled() -> None:
    protocol = ready()
    assert protocol.append_audio(np.ones(160, dtype=np.int16))  # 20 ms at 8 kHz
    (message,) = sent(protocol)
    blob = message["realtimeInput"]["audio"]
    assert blob["mimeType"] == "audio/pcm;rate=16000"
    assert len(base64.b64decode(blob["data"])) == 2 * 320  # 20 ms at 16 kHz
    with pytest.raises(ValueError, match="int16"):
        protocol.append_audio(np.zeros(4, dtype=np.float32))  # type: ignore[arg-type]
    events = feed(protocol, fixture("spoken_turn"))
    audio = [e for e in events if isinstance(e, AudioOutEvent)]
    assert [a.frame.size for a in audio] == [960, 960]  # 24 kHz chunk -> 48 kHz output


def test_tool_calls_and_responses() -> None:
    protocol = ready()
    events = feed(protocol, fixture("tool_call"))
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.call_id, c.name) for c in calls] == [
        ("function-call-4917", "AskUserQuestion"),
        ("function-call-4918", "lookup"),
    ]
    assert json.loads(calls[0].arguments)["choices"] == ["savings", "checking"]
    user = [e for e in events if isinstance(e, TranscriptionEvent) and e.final]
    assert [(u.role, u.text) for u in user] == [("user", "I want to move some money.")]
    protocol.submit_tool_result("function-call-4918", '{"balance": 12}', is_error=False)
    protocol.submit_tool_result(
        "function-call-4917", '{"error": "Human input timed out"}', is_error=True
    )
    first, second = sent(protocol)
    (ok,) = first["toolResponse"]["functionResponses"]
    assert ok == {
        "id": "function-call-4918",
        "name": "lookup",
        "response": {"output": {"balance": 12}},
    }
    (failed,) = second["toolResponse"]["functionResponses"]
    assert failed["response"] == {"error": "Human input timed out"}
    with pytest.raises(ProviderError, match="already answered") as info:
        protocol.submit_tool_result("function-call-4917", "again", is_error=False)
    assert info.value.code == "unknown_call"
    feed(protocol, fixture("tool_call"))  # a repeated toolCall is not a new call
    assert protocol.open_calls == []


def test_plain_text_output_and_error_text() -> None:
    protocol = ready()
    feed(protocol, fixture("tool_call"))
    protocol.submit_tool_result("function-call-4917", "savings", is_error=False)
    protocol.submit_tool_result("function-call-4918", "boom", is_error=True)
    first, second = sent(protocol)
    assert first["toolResponse"]["functionResponses"][0]["response"] == {"output": "savings"}
    assert second["toolResponse"]["functionResponses"][0]["response"] == {"error": "boom"}


def test_cancellation_withdraws_the_call() -> None:
    protocol = ready()
    events = feed(protocol, fixture("cancellation"))
    assert isinstance(events[0], ToolCallEvent)
    assert isinstance(events[1], SpeechStartedEvent)  # interrupted: stop playback
    cancelled = events[2]
    assert isinstance(cancelled, ToolCallCancelledEvent)
    assert cancelled.call_id == "function-call-77" and "interrupted" in cancelled.reason
    with pytest.raises(ProviderError, match="withdrawn") as info:
        protocol.submit_tool_result("function-call-77", "yes", is_error=False)
    assert info.value.code == "call_withdrawn" and info.value.recoverable
    assert sent(protocol) == []


def test_output_transcription_feeds_the_recovered_door() -> None:
    protocol = ready()
    events = feed(protocol, fixture("spoken_turn"))
    texts = [(e.text, e.final) for e in events if isinstance(e, TranscriptionEvent)]
    assert texts == [
        ("Let me check", False),
        ("Let me check with you.", False),
        ("Let me check with you.", True),
    ]
    assert protocol.handle == "Cg0KC3Nlc3Npb24tMDAy"


def test_voice_activity_thoughts_and_unknown_fields(caplog: pytest.LogCaptureFixture) -> None:
    protocol = ready()
    with caplog.at_level(logging.DEBUG, logger="voice_hitl.providers.gemini"):
        events = feed(protocol, fixture("unknown"))
        protocol.receive(json.dumps({"brandNewThing": {"x": 1}}))
    assert [type(e) for e in events] == [SpeechStartedEvent, SpeechStoppedEvent]
    assert "brandNewThing" in caplog.text
    assert protocol.events() == []


def test_bad_server_messages_become_error_events() -> None:
    protocol = ready()
    protocol.receive('{"toolCall": ')
    protocol.receive("[1, 2]")
    protocol.receive(json.dumps({"toolCall": {"functionCalls": "nope"}}))
    protocol.receive(json.dumps({"toolCall": {"functionCalls": [{"name": "lookup"}]}}))
    bad_audio = {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "%%%"}}
    protocol.receive(json.dumps({"serverContent": {"modelTurn": {"parts": [bad_audio]}}}))
    errors = protocol.events()
    assert all(isinstance(e, ProviderErrorEvent) and e.error.recoverable for e in errors)
    codes = [e.error.code for e in errors if isinstance(e, ProviderErrorEvent)]
    assert codes == [
        "malformed_server_event",
        "malformed_server_event",
        "invalid_server_event",
        "invalid_server_event",
        "invalid_server_event",
    ]
    assert "functionCalls" in str(errors[2].error)  # type: ignore[union-attr]


def test_go_away_and_resumed_setup_carry_open_calls_as_turns() -> None:
    protocol = ready()
    feed(protocol, fixture("tool_call"))
    feed(protocol, fixture("go_away"))
    assert protocol.going_away == "50s"
    protocol.submit_tool_result("function-call-4918", "host:lookup", is_error=False)
    protocol.connection_lost("goAway", unsent=protocol.outgoing())  # never written
    assert protocol.open_calls == ["function-call-4917"]
    assert protocol.waiting("function-call-4918")
    protocol.connection_made()
    (setup,) = sent(protocol)
    assert setup["setup"]["sessionResumption"] == {"handle": "Cg0KC3Nlc3Npb24tMDAx"}
    protocol.submit_tool_result("function-call-4917", "savings", is_error=False)
    assert sent(protocol) == []  # waits for setupComplete
    feed(protocol, fixture("session"))
    lookup, late = (m["clientContent"] for m in sent(protocol))  # no pending note: answered
    texts = [m["turns"][0]["parts"][0]["text"] for m in (lookup, late)]
    assert texts[0].startswith("[Tool lookup completed]") and "host:lookup" in texts[0]
    assert texts[1].startswith("[Tool AskUserQuestion completed]")
    assert '"question": "Which account?"' in texts[1] and texts[1].endswith("savings")
    assert late["turnComplete"] is True
    assert protocol.open_calls == []


def test_pending_note_after_reconnect_and_discard() -> None:
    protocol = ready()
    feed(protocol, fixture("tool_call"))
    protocol.connection_lost("dropped")
    protocol.connection_made()
    sent(protocol)
    feed(protocol, fixture("session"))
    notes = [m["clientContent"]["turns"][0]["parts"][0]["text"] for m in sent(protocol)]
    assert [n.split("]")[0] for n in notes] == [
        "[Tool AskUserQuestion pending",
        "[Tool lookup pending",
    ]
    protocol.connection_lost("dropped again")
    protocol.submit_tool_result("function-call-4917", "savings", is_error=False)
    assert protocol.discard_result("function-call-4917") is True
    assert not protocol.waiting("function-call-4917")
    assert protocol.discard_result("function-call-4917") is False


def test_say_and_text_modality() -> None:
    protocol = ready(LiveOptions(response_modality="TEXT", output_transcription=False))
    protocol.say("One moment.")
    (message,) = sent(protocol)
    assert message["clientContent"]["turnComplete"] is True
    assert message["clientContent"]["turns"][0]["parts"][0]["text"].endswith("One moment.")
    text = {"serverContent": {"modelTurn": {"parts": [{"text": "call:lookup{key: k}"}]}}}
    protocol.receive(json.dumps(text))
    protocol.receive(json.dumps({"serverContent": {"turnComplete": True}}))
    finals = [e for e in protocol.events() if isinstance(e, TranscriptionEvent) and e.final]
    assert [(e.role, e.text) for e in finals] == [("assistant", "call:lookup{key: k}")]


def test_validators_reject_what_the_sdk_rejects() -> None:
    good = {"toolResponse": {"functionResponses": [{"id": "a", "name": "n", "response": {}}]}}
    assert validate_client_message(good, strict=True) == "toolResponse"
    snake = {"tool_response": good["toolResponse"]}
    assert validate_client_message(snake) == "toolResponse"  # the server accepts either casing
    with pytest.raises(MessageError, match="keys differ"):
        validate_client_message(snake, strict=True)
    with pytest.raises(MessageError, match="Extra inputs"):
        validate_client_message({"setup": {"modle": "x"}})
    with pytest.raises(MessageError, match="exactly one"):
        validate_client_message({"setup": {}, "toolResponse": {}})
    with pytest.raises(MessageError, match="Extra inputs"):
        validate_server_message({"toolCall": {"calls": []}})


def test_results_written_into_a_dying_socket_are_sent_again() -> None:
    protocol = ready()
    feed(protocol, fixture("tool_call"))
    protocol.submit_tool_result("function-call-4918", "host:lookup", is_error=False)
    (written,) = sent(protocol)  # written; the server never moved past it
    assert "toolResponse" in written
    protocol.inject_context("[Tool X completed] noted")
    sent(protocol)
    feed(protocol, fixture("spoken_turn"))  # turnComplete + a new handle: both acknowledged
    protocol.submit_tool_result("function-call-4917", "savings", is_error=False)
    sent(protocol)
    protocol.connection_lost("dropped")
    protocol.connection_made()
    sent(protocol)
    feed(protocol, fixture("session"))
    (again,) = (m["clientContent"] for m in sent(protocol))
    text = again["turns"][0]["parts"][0]["text"]
    assert text.startswith("[Tool AskUserQuestion completed]") and text.endswith("savings")
