"""RealtimeProtocol (sans-I/O) against recorded GA server events: no sockets, no event loop.

Every client message the protocol writes is checked against the ``openai`` SDK's client-event
types (strictly: no field the SDK does not declare).
"""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from doors import ASK, CONFIRM

from providers.base import (
    AudioFormat,
    AudioOutEvent,
    KeypadEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SessionConfig,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallCancelledEvent,
    ToolCallEvent,
    TranscriptionEvent,
)
from providers.openai_realtime import Delivery, RealtimeOptions, RealtimeProtocol
from providers.openai_realtime_testing import validate_client_event, validate_server_event
from voice_hitl import ProviderError

FIXTURES = Path(__file__).parent / "fixtures" / "openai"
AUDIO_480 = base64.b64encode(np.arange(480, dtype="<i2").tobytes()).decode()


def fixture(name: str, **subst: str) -> list[str]:
    events = json.loads((FIXTURES / f"{name}.json").read_text())
    lines = [json.dumps(event) for event in events]
    subst.setdefault("AUDIO_480", AUDIO_480)
    for key, value in subst.items():
        lines = [line.replace(f"${key}", value) for line in lines]
    return lines


def sent(protocol: RealtimeProtocol) -> list[dict[str, Any]]:
    """Drain the protocol's messages, checking each against the GA client shapes."""
    messages = [json.loads(text) for text in protocol.outgoing()]
    for message in messages:
        validate_client_event(message)
    return messages


def feed(protocol: RealtimeProtocol, lines: list[str]) -> list[ProviderEvent]:
    for line in lines:
        protocol.receive(line)
    return protocol.events()


def connected(**config: Any) -> RealtimeProtocol:
    protocol = RealtimeProtocol(
        SessionConfig(instructions="Be brief.", tools=(ASK, CONFIRM), **config)
    )
    protocol.connection_made()
    sent(protocol)
    return protocol


def test_session_update_is_ga_shaped() -> None:
    protocol = RealtimeProtocol(SessionConfig(instructions="Be brief.", tools=(ASK,)))
    protocol.connection_made()
    (update,) = sent(protocol)
    session = update["session"]
    assert update["type"] == "session.update"
    assert session["type"] == "realtime"
    assert session["instructions"] == "Be brief."
    assert session["output_modalities"] == ["audio"]
    audio_in = session["audio"]["input"]
    assert audio_in["format"] == {"type": "audio/pcm", "rate": 24000}
    assert audio_in["transcription"] == {"model": "gpt-4o-mini-transcribe"}
    assert audio_in["turn_detection"]["type"] == "server_vad"
    assert session["audio"]["output"]["voice"] == "marin"
    assert session["tools"] == [
        {
            "type": "function",
            "name": "AskUserQuestion",
            "description": ASK.description,
            "parameters": ASK.parameters,
        }
    ]
    for beta in ("modalities", "input_audio_format", "input_audio_transcription", "voice"):
        assert beta not in session


def test_options_turn_transcription_and_vad_off() -> None:
    options = RealtimeOptions(transcription_model=None, turn_detection=None, voice="cedar")
    protocol = RealtimeProtocol(SessionConfig(), options)
    protocol.connection_made()
    (update,) = sent(protocol)
    assert update["session"]["audio"]["input"]["transcription"] is None
    assert update["session"]["audio"]["input"]["turn_detection"] is None
    assert update["session"]["audio"]["output"]["voice"] == "cedar"


def test_session_events_produce_nothing() -> None:
    protocol = connected()
    assert feed(protocol, fixture("session")) == []
    assert sent(protocol) == []


def test_function_call_emitted_once() -> None:
    protocol = connected()
    events = feed(protocol, fixture("function_call"))
    assert events == [
        ToolCallEvent("call_Q7x2Lm", "AskUserQuestion", '{"question":"Which account?"}')
    ]
    assert protocol.open_calls == ["call_Q7x2Lm"]
    assert protocol.active_response is None


def test_function_call_from_output_item_only() -> None:
    protocol = connected()
    lines = [line for line in fixture("function_call") if "arguments.done" not in line]
    (event,) = feed(protocol, lines)
    assert isinstance(event, ToolCallEvent) and event.call_id == "call_Q7x2Lm"


def test_result_is_output_item_then_response_create() -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.submit_tool_result("call_Q7x2Lm", '{"answer": "savings"}', is_error=False)
    item, create = sent(protocol)
    assert item["type"] == "conversation.item.create"
    assert item["item"] == {
        "type": "function_call_output",
        "call_id": "call_Q7x2Lm",
        "output": '{"answer": "savings"}',
    }
    assert create["type"] == "response.create"
    assert create["response"]["metadata"] == {"client_event_id": create["event_id"]}
    assert protocol.open_calls == []
    with pytest.raises(ProviderError, match="already answered"):
        protocol.submit_tool_result("call_Q7x2Lm", "again", is_error=False)
    with pytest.raises(ProviderError, match="unknown") as info:
        protocol.submit_tool_result("call_nope", "x", is_error=False)
    assert info.value.code == "unknown_call" and sent(protocol) == []


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("the person said no", {"error": "the person said no"}),
        ('{"error": "Human input timed out"}', {"error": "Human input timed out"}),
    ],
)
def test_error_result_is_error_text(output: str, expected: dict[str, str]) -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.submit_tool_result("call_Q7x2Lm", output, is_error=True)
    item, _ = sent(protocol)
    assert json.loads(item["item"]["output"]) == expected


def test_result_during_its_response_waits_for_response_done() -> None:
    protocol = connected()
    lines = fixture("function_call")
    feed(protocol, lines[:-1])  # everything but response.done
    protocol.submit_tool_result("call_Q7x2Lm", "yes", is_error=False)
    (item,) = sent(protocol)
    assert item["item"]["type"] == "function_call_output"
    feed(protocol, lines[-1:])
    (create,) = sent(protocol)
    assert create["type"] == "response.create"


def test_active_response_error_retries_after_response_done() -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.submit_tool_result("call_Q7x2Lm", "yes", is_error=False)
    _, create = sent(protocol)
    lines = fixture("active_response_error", RESPONSE_CREATE=create["event_id"])
    assert feed(protocol, lines[:2]) == []  # the error is handled, not reported
    assert sent(protocol) == []  # nothing resent while the other response runs
    feed(protocol, lines[2:])
    (retry,) = sent(protocol)
    assert retry["type"] == "response.create" and retry["event_id"] != create["event_id"]


def test_unrelated_server_error_is_reported() -> None:
    protocol = connected()
    lines = fixture("active_response_error", RESPONSE_CREATE="evt_not_mine")
    (event,) = feed(protocol, lines[:1])
    assert isinstance(event, ProviderErrorEvent)
    assert event.error.code == "conversation_already_has_active_response"
    assert event.error.recoverable
    error = {"type": "server_error", "code": None, "message": "The server had an error."}
    (event,) = feed(protocol, [json.dumps({"type": "error", "error": error})])
    assert isinstance(event, ProviderErrorEvent) and event.error.code == "server_error"
    assert "The server had an error." in str(event.error)


def test_spoken_response_audio_and_transcripts() -> None:
    protocol = connected(output_format=AudioFormat(16_000))
    events = feed(protocol, fixture("spoken_response"))
    audio = [e for e in events if isinstance(e, AudioOutEvent)]
    assert [a.frame.size for a in audio] == [320, 320]
    texts = [(e.text, e.final) for e in events if isinstance(e, TranscriptionEvent)]
    spoken = "Let me check with you. call:AskUserQuestion{question: Which account?}"
    assert texts == [("Let me check with you. ", False), (spoken, False), (spoken, True)]
    assert all(e.role == "assistant" for e in events if isinstance(e, TranscriptionEvent))


def test_audio_at_the_wire_rate_is_passed_through() -> None:
    protocol = connected()
    events = feed(protocol, fixture("spoken_response"))
    frame = next(e for e in events if isinstance(e, AudioOutEvent)).frame
    assert frame.dtype == np.int16 and np.array_equal(frame, np.arange(480))


def test_user_turn() -> None:
    protocol = connected()
    events = feed(protocol, fixture("user_turn"))
    assert events == [
        SpeechStartedEvent(),
        SpeechStoppedEvent(),
        TranscriptionEvent("user", "Can I get ", final=False),
        TranscriptionEvent("user", "Can I get a refund?", final=False),
        TranscriptionEvent("user", "Can I get a refund?", final=True),
    ]


def test_barge_in_cancelled_call_is_withdrawn() -> None:
    protocol = connected()
    events = feed(protocol, fixture("cancelled_call"))
    assert events[0] == ToolCallEvent("call_Bx9", "ConfirmAction", '{"action":"refund"}')
    assert events[1] == SpeechStartedEvent()
    assert isinstance(events[2], ToolCallCancelledEvent) and events[2].call_id == "call_Bx9"
    assert "cancelled (turn_detected)" in events[2].reason
    with pytest.raises(ProviderError, match="withdrawn"):
        protocol.submit_tool_result("call_Bx9", "yes", is_error=False)


def test_audio_append_resamples_to_24k() -> None:
    protocol = connected(input_format=AudioFormat(16_000))
    assert protocol.append_audio(np.full(320, 1000, dtype=np.int16))
    (append,) = sent(protocol)
    assert append["type"] == "input_audio_buffer.append"
    wire = np.frombuffer(base64.b64decode(append["audio"]), dtype="<i2")
    assert wire.size == 480 and set(wire.tolist()) == {1000}
    with pytest.raises(ValueError, match="int16"):
        protocol.append_audio(np.zeros(10, dtype=np.float32))  # type: ignore[arg-type]


def test_say_inject_and_interrupt() -> None:
    protocol = connected()
    protocol.say("One moment, please.")
    (say,) = sent(protocol)
    assert say["type"] == "response.create"
    assert say["response"]["instructions"].endswith("One moment, please.")
    assert say["response"]["instructions"].startswith("Be brief.")
    assert say["response"]["tool_choice"] == "none"
    protocol.inject_context("[Tool AskUserQuestion completed] savings")
    (item,) = sent(protocol)  # no response.create: the model reads it silently
    assert item["item"] == {
        "type": "message",
        "role": "system",
        "content": [{"type": "input_text", "text": "[Tool AskUserQuestion completed] savings"}],
    }
    assert protocol.interrupt() is False and sent(protocol) == []
    feed(protocol, fixture("function_call")[:1])
    assert protocol.interrupt() is True
    assert sent(protocol) == [{"type": "response.cancel", "response_id": "resp_C1"}]
    cancel_error = {"type": "invalid_request_error", "code": "response_cancel_not_active"}
    cancel_error["message"] = "Cancellation failed: no active response found"
    assert feed(protocol, [json.dumps({"type": "error", "error": cancel_error})]) == []


def test_connection_lost_keeps_open_calls_and_defers_context() -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.append_audio(np.zeros(480, dtype=np.int16))
    protocol.connection_lost("closed with code 1006")
    assert protocol.events() == []  # the call stays answerable: nothing is withdrawn
    assert protocol.outgoing() == []  # the unsent audio belonged to the dead connection
    with pytest.raises(ProviderError, match="not connected") as info:
        protocol.submit_tool_result("call_Q7x2Lm", "yes", is_error=False)
    assert info.value.code == "not_connected" and info.value.recoverable
    assert protocol.append_audio(np.zeros(480, dtype=np.int16)) is False
    protocol.inject_context("[Tool lookup completed] 42")
    protocol.say("Sorry, I lost you for a moment.")
    assert protocol.outgoing() == []
    protocol.connection_made()
    update, context, say = sent(protocol)
    assert update["type"] == "session.update"
    assert context["item"]["content"][0]["text"] == "[Tool lookup completed] 42"
    assert say["type"] == "response.create"
    # The answer to the call of the lost connection reaches the new conversation as context.
    protocol.submit_tool_result("call_Q7x2Lm", '{"answer": "yes"}', is_error=False)
    message, reply = sent(protocol)
    text = message["item"]["content"][0]["text"]
    assert message["item"]["type"] == "message"
    assert "(call call_Q7x2Lm)" in text and text.endswith('{"answer": "yes"}')
    assert reply["type"] == "response.create"
    assert protocol.deliveries.state("call_Q7x2Lm") is Delivery.IN_FLIGHT
    feed(protocol, [json.dumps({"type": "conversation.item.added", "item": message["item"]})])
    assert protocol.deliveries.state("call_Q7x2Lm") is Delivery.TAKEN_AS_CONTEXT


def test_a_result_in_flight_at_a_drop_is_sent_again_as_context() -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.events()
    protocol.submit_tool_result("call_Q7x2Lm", "500", is_error=False)
    output, _ = sent(protocol)
    assert output["item"]["type"] == "function_call_output"
    protocol.connection_lost("closed with code 1006")  # before the server added the item
    protocol.connection_made()
    update, message, reply = sent(protocol)
    assert update["type"] == "session.update" and reply["type"] == "response.create"
    assert "(call call_Q7x2Lm)" in message["item"]["content"][0]["text"]
    feed(protocol, [json.dumps({"type": "conversation.item.done", "item": message["item"]})])
    assert protocol.deliveries.state("call_Q7x2Lm") is Delivery.TAKEN_AS_CONTEXT


def test_a_taken_result_is_not_sent_again() -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.submit_tool_result("call_Q7x2Lm", "500", is_error=False)
    output, _ = sent(protocol)
    feed(protocol, [json.dumps({"type": "conversation.item.added", "item": output["item"]})])
    assert protocol.deliveries.state("call_Q7x2Lm") is Delivery.TAKEN
    protocol.connection_lost("closed with code 1006")
    protocol.connection_made()
    (update,) = sent(protocol)
    assert update["type"] == "session.update"


def test_a_refused_result_is_reported() -> None:
    protocol = connected()
    feed(protocol, fixture("function_call"))
    protocol.events()
    protocol.submit_tool_result("call_Q7x2Lm", "500", is_error=False)
    output, _ = sent(protocol)
    error = {"type": "invalid_request_error", "code": "invalid_value", "message": "bad item"}
    error["event_id"] = output["event_id"]
    (event,) = feed(protocol, [json.dumps({"type": "error", "error": error})])
    assert isinstance(event, ProviderErrorEvent) and "refused" in str(event.error)
    assert protocol.deliveries.state("call_Q7x2Lm") is Delivery.REFUSED


@pytest.mark.parametrize(
    ("code", "kind", "fatal"),
    [
        ("invalid_api_key", "invalid_request_error", True),
        ("insufficient_quota", "insufficient_quota", True),
        (None, "authentication_error", True),
        ("rate_limit_exceeded", "rate_limit_error", False),
        ("invalid_value", "invalid_request_error", False),
    ],
)
def test_server_errors_are_classified(code: str | None, kind: str, fatal: bool) -> None:
    protocol = connected()
    error = {"type": kind, "code": code, "message": "m", "event_id": None}
    (event,) = feed(protocol, [json.dumps({"type": "error", "error": error})])
    assert isinstance(event, ProviderErrorEvent)
    assert event.error.recoverable is not fatal
    assert (protocol.failed is event.error) is fatal


def test_a_failed_response_is_never_silent() -> None:
    protocol = connected()
    details = {
        "type": "failed",
        "error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "pay"},
    }
    response = {"id": "resp_1", "status": "failed", "status_details": details, "output": []}
    (event,) = feed(protocol, [json.dumps({"type": "response.done", "response": response})])
    assert isinstance(event, ProviderErrorEvent)
    assert event.error.code == "insufficient_quota" and not event.error.recoverable
    assert "pay" in str(event.error) and protocol.failed is event.error


def test_malformed_json_is_an_error_event() -> None:
    protocol = connected()
    (event,) = feed(protocol, ['{"type": "response.done", '])
    assert isinstance(event, ProviderErrorEvent)
    assert event.error.code == "malformed_server_event" and event.error.recoverable
    assert "malformed JSON" in str(event.error) and "response.done" in str(event.error)
    (event,) = feed(protocol, ["[1, 2]"])
    assert isinstance(event, ProviderErrorEvent) and "not a JSON object" in str(event.error)
    (event,) = feed(protocol, ['{"no_type": 1}'])
    assert isinstance(event, ProviderErrorEvent) and "'type'" in str(event.error)


def test_known_event_with_wrong_shape_is_an_error_event() -> None:
    protocol = connected()
    bad = {"type": "response.function_call_arguments.done", "name": "x", "arguments": "{}"}
    (event,) = feed(protocol, [json.dumps(bad)])
    assert isinstance(event, ProviderErrorEvent)
    assert event.error.code == "invalid_server_event"
    assert "call_id" in str(event.error)
    audio = {"type": "response.output_audio.delta", "delta": "AAA"}  # 2 bytes + padding issue
    (event,) = feed(protocol, [json.dumps(audio)])
    assert isinstance(event, ProviderErrorEvent) and "base64" in str(event.error)


def test_unknown_events_are_ignored_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    protocol = connected()
    with caplog.at_level(logging.DEBUG, logger="voice_hitl.providers.openai"):
        assert feed(protocol, fixture("unknown_events")) == []
    assert sent(protocol) == []
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert any("unknown server event 'session.brand_new_feature'" in r.message for r in debug)
    assert any("unknown server event 'response.mcp_call.in_progress'" in r.message for r in debug)
    assert all(r.levelno == logging.DEBUG for r in caplog.records)


def test_fields_the_sdk_marks_optional_may_be_missing() -> None:
    """``response.id``, ``response.output`` and a transcription ``delta`` are optional in the
    SDK's types (each passes validate_server_event below); their absence is tolerated."""
    protocol = connected()
    call = fixture("function_call")
    feed(protocol, call)
    no_id = [
        {"type": "response.created", "event_id": "e1", "response": {"status": "in_progress"}},
        {"type": "conversation.item.input_audio_transcription.delta", "event_id": "e2"}
        | {"item_id": "item_u", "delta": None},
        {"type": "response.done", "event_id": "e3", "response": {"status": "completed"}},
    ]
    for event in no_id:
        validate_server_event(event)
    (created, delta, done) = [json.dumps(e) for e in no_id]
    assert feed(protocol, [created]) == []
    assert protocol.active_response is not None  # active, though unnamed
    protocol.submit_tool_result("call_Q7x2Lm", "savings", is_error=False)
    (output,) = sent(protocol)  # the reply waits for the unnamed response to end
    assert output["item"]["type"] == "function_call_output"
    assert protocol.interrupt()
    (cancel,) = sent(protocol)
    assert cancel == {"type": "response.cancel"}  # no id to name
    assert feed(protocol, [delta]) == [TranscriptionEvent("user", "", final=False)]
    assert feed(protocol, [done]) == []
    assert protocol.active_response is None
    (retry,) = sent(protocol)
    assert retry["type"] == "response.create"
    cancelled = {"type": "response.done", "event_id": "e4", "response": {"status": "cancelled"}}
    validate_server_event(cancelled)
    assert feed(protocol, [json.dumps(cancelled)]) == []  # no output list: nothing withdrawn


def test_sip_keypad_events_become_keypad_events() -> None:
    protocol = connected()
    keys = [
        {"type": "input_audio_buffer.dtmf_event_received", "event": key, "received_at": 1}
        for key in ("1", "#", "a")
    ]
    for event in keys:
        validate_server_event(event)
    events = feed(protocol, [json.dumps(e) for e in keys])
    assert events == [KeypadEvent("1"), KeypadEvent("#"), KeypadEvent("A")]
    bad = {"type": "input_audio_buffer.dtmf_event_received", "event": "12", "received_at": 1}
    (error,) = feed(protocol, [json.dumps(bad)])
    assert isinstance(error, ProviderErrorEvent) and error.error.code == "invalid_server_event"
    assert "'12'" in str(error.error) and error.error.recoverable
    assert sent(protocol) == []
