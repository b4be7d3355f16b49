"""VoiceResponder on a voice channel: asking aloud, understanding, re-prompts, barge-in,
cancel, operator, keypad answers, read-back, timeout and settlement."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from responder_rig import Rig

from providers.base import ProviderCapabilities
from voice_hitl import (
    HookContext,
    HookTrigger,
    OperatorRequest,
)
from voice_hitl.speech import Answer, AnswerKind, AnswerSpec
from voice_hitl.speech.dtmf import generate_dtmf

PAY_PROMPT = "Please confirm: pay. To go ahead, say confirm, or press 1. To stop, say no."


async def test_confirm_answered_by_voice() -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(
        session, "ConfirmAction", {"action": "move 500 dollars to savings"}
    )
    said = await rig.said(1)
    assert said == [
        "Please confirm: move 500 dollars to savings. "
        "To go ahead, say confirm, or press 1. To stop, say no."
    ]
    rig.provider.simulate_transcription(session, "yeah, go ahead, I confirm", role="user")
    # a provider's transcript has no confidence and no caller audio reached it here: nothing
    # unmeasured counts as passed, so the challenge is asked a second time
    assert (await rig.said(2))[1] == "To be sure, please say confirm once more, or press 1."
    rig.provider.simulate_transcription(session, "confirm", role="user")
    record = await rig.provider.wait_for_tool_result(call_id)
    assert not record.is_error
    answer = json.loads(record.output)
    assert answer == {
        "answer": True,
        "choice_id": "yes",
        "transcript": "confirm",
        "confidence": answer["confidence"],
        "via": "speech",
        "actor_id": "caller-1",
        "evidence": {
            "risk": "high",
            "via": "speech",
            "challenge": "word",
            "turns": 2,
            "confidence": None,  # the provider's transcript carries none
            "audio": None,
            "layers": {
                "challenge": "passed",
                "confidence": "unmeasured",
                "audio": "unmeasured",
                "speaker": "passed",
                "repeat": "passed",
            },
        },
    }
    assert ("interrupt", session.session_id) in rig.provider.calls  # speech stops on answer
    await rig.close()


async def test_reprompt_then_answer_and_repeat_does_not_count() -> None:
    rig = Rig(reprompts=1)
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(
        session,
        "AskUserQuestion",
        {"question": "Which account", "choices": ["checking", "savings"]},
    )
    assert (await rig.said(1))[0] == "Which account. You can say checking, or savings."
    rig.provider.simulate_transcription(session, "purple monkey", role="user")
    assert (await rig.said(2))[1].startswith("Sorry, I didn't catch that. Which account.")
    rig.provider.simulate_transcription(session, "can you say that again", role="user")
    assert (await rig.said(3))[2] == "Which account. You can say checking, or savings."
    rig.provider.simulate_transcription(session, "um, savings please", role="user")
    record = await rig.provider.wait_for_tool_result(call_id)
    answer = json.loads(record.output)
    assert (answer["answer"], answer["choice_id"]) == ("savings", "savings")
    await rig.close()


async def test_reprompts_exhausted_rejects_with_reason() -> None:
    rig = Rig(reprompts=1)
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    rig.provider.simulate_transcription(session, "banana", role="user")
    await rig.said(2)
    rig.provider.simulate_transcription(session, "maybe", role="user")
    record = await rig.provider.wait_for_tool_result(call_id)
    assert record.is_error
    error = json.loads(record.output)["error"]
    assert error.startswith("Human input rejected: No usable answer after 2 attempts")
    await rig.close()


async def test_barge_in_stops_speech_and_takes_the_answer() -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    rig.provider.simulate_speech(session, started=True)
    rig.provider.simulate_transcription(session, "no", role="user")
    record = await rig.provider.wait_for_tool_result(call_id)
    assert json.loads(record.output)["answer"] is False
    interrupts = [m for m, _ in rig.provider.calls if m == "interrupt"]
    assert len(interrupts) >= 1
    # The interrupt came before the result was submitted: speech stopped, then the answer.
    methods = [m for m, _ in rig.provider.calls]
    assert methods.index("interrupt") < methods.index("submit_tool_result")
    await rig.close()


async def test_cancel_rejects() -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    rig.provider.simulate_transcription(session, "never mind, cancel that", role="user")
    record = await rig.provider.wait_for_tool_result(call_id)
    assert json.loads(record.output) == {
        "error": "Human input rejected: The person cancelled the request"
    }
    await rig.close()


async def test_operator_leaves_request_pending_and_fires_hook() -> None:
    rig = Rig()
    operator: asyncio.Queue[OperatorRequest] = asyncio.Queue()

    @rig.kit.hook(HookTrigger.ON_OPERATOR_REQUESTED)
    async def page_operator(request: OperatorRequest, ctx: HookContext) -> None:
        operator.put_nowait(request)

    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    event = await rig.observed.requests.get()
    await rig.said(1)
    rig.provider.simulate_transcription(session, "let me talk to a human", role="user")
    request = await operator.get()
    assert request.request.pending_id == event.pending_id
    assert request.actor_id == "caller-1"
    assert rig.voice.human_input_handler is not None
    handler = rig.voice.human_input_handler.handler
    assert event.pending_id in handler.pending
    handler.resolve(event.pending_id, '{"answer": true, "via": "operator"}')
    record = await rig.provider.wait_for_tool_result(call_id)
    assert json.loads(record.output)["via"] == "operator"
    await rig.close()


async def test_keypad_answer() -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    tones = generate_dtmf("2", rig.voice.input_format.sample_rate, lead_ms=40, gap_ms=60)
    for start in range(0, len(tones), 480):
        rig.transport.push_caller_audio(session.session_id, tones[start : start + 480])
    record = await rig.provider.wait_for_tool_result(call_id)
    answer = json.loads(record.output)
    assert (answer["answer"], answer["via"]) == (False, "dtmf")
    await rig.close()


async def test_read_back_for_high_stakes_answers() -> None:
    def big_amounts(spec: AnswerSpec, answer: Answer) -> bool:
        return spec.kind is AnswerKind.NUMBER

    rig = Rig(read_back=big_amounts)
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(
        session, "AskUserQuestion", {"question": "How much?", "mode": "number"}
    )
    await rig.said(1)
    rig.provider.simulate_transcription(session, "five hundred dollars", role="user")
    assert (await rig.said(2))[1] == "You said 500. Is that right? Please say yes or no."
    rig.provider.simulate_transcription(session, "no", role="user")
    assert (await rig.said(3))[2] == "How much?"
    rig.provider.simulate_transcription(session, "two hundred", role="user")
    await rig.said(4)
    rig.provider.simulate_transcription(session, "yes", role="user")
    record = await rig.provider.wait_for_tool_result(call_id)
    assert json.loads(record.output)["answer"] == 200
    await rig.close()


@pytest.mark.looptime
async def test_silence_until_timeout_stops_the_dialogue() -> None:
    rig = Rig(timeout=30.0)
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    record = await rig.provider.wait_for_tool_result(call_id)
    assert json.loads(record.output) == {
        "error": "Human input timed out after 30s for tool 'ConfirmAction'"
    }
    await rig.kit.hooks.drain()  # the dialogue task ends (cancelled) once the request settled
    assert rig.provider.said == [PAY_PROMPT]
    await rig.close()


async def test_end_session_mid_question_stops_asking() -> None:
    rig = Rig()
    session = await rig.start()
    rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    event = await rig.observed.requests.get()
    await rig.said(1)
    await rig.voice.end_session(session)
    await rig.kit.hooks.drain()
    assert rig.voice.human_input_handler is not None
    assert rig.voice.human_input_handler.handler.resolve(event.pending_id, "late") is False
    assert rig.provider.tool_results == []
    await rig.close()


async def test_silent_tone_free_audio_is_not_a_key() -> None:
    rig = Rig()
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await rig.said(1)
    noise = (np.random.default_rng(1).normal(0, 300, 24000)).astype(np.int16)
    rig.transport.push_caller_audio(session.session_id, noise)
    await rig.provider.wait_for("send_audio")
    rig.provider.simulate_transcription(session, "yes, confirm", role="user")
    # the noise gave no key; measured, the audio forwarded holds no speech: the keypad
    retry = (await rig.said(2))[1]
    assert retry.startswith("I could not hear that clearly. Press 1")
    assert rig.provider.tool_results == [] and call_id
    await rig.close()


async def test_local_voice_when_the_provider_cannot_say_text() -> None:
    class Beeps:
        def __init__(self) -> None:
            self.texts: list[str] = []
            self.asked = asyncio.Event()

        async def synthesize(self, text: str) -> tuple[np.ndarray, int]:
            self.texts.append(text)
            self.asked.set()
            return np.full(1600, 1000, dtype=np.int16), 16_000

    synthesizer = Beeps()
    rig = Rig(capabilities=ProviderCapabilities(can_say=False), synthesizer=synthesizer)
    provider, transport = rig.provider, rig.transport
    session = await rig.start()
    call_id = provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await synthesizer.asked.wait()  # the question is synthesised locally, not said by the model
    provider.simulate_transcription(session, "confirm", role="user")
    while len(synthesizer.texts) < 2:  # unmeasured: the challenge a second time
        synthesizer.asked.clear()
        await synthesizer.asked.wait()
    provider.simulate_transcription(session, "confirm", role="user")
    record = await provider.wait_for_tool_result(call_id)
    assert json.loads(record.output)["answer"] is True
    assert provider.said == []
    again = "To be sure, please say confirm once more, or press 1."
    assert synthesizer.texts == [PAY_PROMPT, again]
    played = np.concatenate(transport.played(session.session_id))
    assert len(played) == 2 * 2400  # 0.1 s at 16 kHz resampled to the channel's 24 kHz
    await rig.close()


async def test_local_recognizer_hears_a_caller_the_provider_does_not_transcribe() -> None:
    from providers.base import ProviderCapabilities
    from voice_hitl.speech.asr import Hypothesis

    class HearsYes:
        name = "fake"

        def __init__(self) -> None:
            self.seen: list[float] = []

        async def recognize(
            self, pcm16: np.ndarray, sample_rate: int, spec: object
        ) -> list[Hypothesis]:
            self.seen.append(len(pcm16) / sample_rate)
            return [Hypothesis("confirm", 0.9, transcript="I confirm", confidence=0.9)]

    recognizer = HearsYes()
    rig = Rig(capabilities=ProviderCapabilities(user_transcription=False), recognizer=recognizer)
    provider, voice, transport = rig.provider, rig.voice, rig.transport
    session = await rig.start()
    call_id = provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    await provider.wait_for("say")
    rate = voice.input_format.sample_rate
    t = np.arange(rate) / rate
    speech = (6000 * np.sin(2 * np.pi * 200 * t)).astype(np.int16)
    quiet = np.random.default_rng(0).normal(0, 30, rate).astype(np.int16)
    for chunk in np.array_split(np.concatenate([quiet[:4800], speech, quiet]), 50):
        transport.push_caller_audio(session.session_id, chunk)
    await provider.wait_for("say", 2)  # the fake has no audio figures: a second challenge
    for chunk in np.array_split(np.concatenate([quiet[:4800], speech, quiet]), 50):
        transport.push_caller_audio(session.session_id, chunk)
    record = await provider.wait_for_tool_result(call_id)
    answer = json.loads(record.output)
    assert (answer["answer"], answer["transcript"], answer["via"]) == (True, "I confirm", "speech")
    assert len(recognizer.seen) == 2 and all(1.0 < s < 2.0 for s in recognizer.seen)
    await rig.close()
