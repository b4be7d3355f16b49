"""Risk tiers: a high-risk spoken yes needs the challenge word and, where measured, a
confident reading of clean, attributed audio; the keypad always works; the evidence is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from responder_rig import Rig

from voice_hitl import HookContext, HookResult, HookTrigger
from voice_hitl.human._standard_tools import CONFIRM_ACTION
from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._risk import (
    SPOKEN_OFF,
    EvidencePolicy,
    evidence_json,
    risk_of,
    weigh_yes,
)
from voice_hitl.speech import AudioQuality
from voice_hitl.speech.dtmf import generate_dtmf

CLEAN = AudioQuality(speech_ms=600, speech_probability=0.95, snr_db=30.0, clipped=0.0)
NOISY = AudioQuality(speech_ms=600, speech_probability=0.9, snr_db=2.0, clipped=0.0)
CHALLENGE = "Please confirm: move 500 dollars to savings. To go ahead, say confirm, or press 1."


def test_risk_comes_from_the_call_then_the_tool_then_the_default() -> None:
    assert CONFIRM_ACTION.risk == "high"
    assert risk_of("ConfirmAction", {}, {}, None) == "high"
    assert risk_of("AskUserQuestion", {"question": "ok?"}, {}, None) == "low"
    assert risk_of("AskUserQuestion", {"question": "ok?", "quorum": 2}, {}, None) == "high"
    assert risk_of("Deploy", {}, {}, "high") == "high"
    assert risk_of("ConfirmAction", {}, {}, "low") == "low"
    assert risk_of("ConfirmAction", {}, {"risk": "low"}, "high") == "low"
    assert risk_of("AskUserQuestion", {}, {"risk": "high"}, None) == "high"
    with pytest.raises(ValueError, match="risk must be 'low' or 'high', got 'medium'"):
        risk_of("ConfirmAction", {}, {"risk": "medium"}, None)


def test_each_layer_of_evidence() -> None:
    good = Heard("speech", "yes confirm", transcript="Yes, confirm", confidence=0.95, quality=CLEAN)
    verdict = weigh_yes(good)
    assert verdict.accepted and set(verdict.layers.values()) == {"passed"}

    bare = weigh_yes(Heard("speech", "yes", transcript="yes", confidence=0.95, quality=CLEAN))
    assert (bare.accepted, bare.retry, bare.layers["challenge"]) == (False, "challenge", "failed")

    doubted = weigh_yes(Heard("speech", "confirm", transcript="confirm", confidence=0.6))
    assert (doubted.accepted, doubted.retry) == (False, "again")
    assert doubted.layers["audio"] == "unmeasured"

    noisy = weigh_yes(
        Heard("speech", "confirm", transcript="confirm", confidence=0.99, quality=NOISY)
    )
    assert (noisy.accepted, noisy.retry) == (False, "keypad")
    assert "SNR 2.0 dB" in noisy.reason

    mixed = Heard("speech", "confirm", "bob", transcript="confirm", attribution=0.5)
    assert weigh_yes(mixed).retry == "speaker"

    # a provider's transcript with no figures: nothing unmeasured counts as passed
    text_only = weigh_yes(Heard("speech", "I confirm"))
    assert (text_only.accepted, text_only.retry) == (False, "repeat")
    assert text_only.layers == {
        "challenge": "passed",
        "confidence": "unmeasured",
        "audio": "unmeasured",
        "speaker": "passed",
    }
    assert text_only.reason == (
        "confidence, audio not measured: a second challenge answer is needed"
    )
    second = weigh_yes(Heard("speech", "I confirm"), repeated=True)
    assert second.accepted and second.layers["repeat"] == "passed"
    keypad = weigh_yes(Heard("speech", "I confirm"), EvidencePolicy(unmeasured="keypad"))
    assert (keypad.accepted, keypad.retry) == (False, "keypad")
    assert not weigh_yes(
        Heard("speech", "I confirm"), EvidencePolicy(unmeasured="keypad"), repeated=True
    ).accepted
    with pytest.raises(ValueError, match="unmeasured must be"):
        EvidencePolicy(unmeasured="pass")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_confidence"):
        EvidencePolicy(min_confidence=2.0)
    evidence = evidence_json("high", good, verdict=verdict, turns=2)
    assert evidence["audio"] == CLEAN.as_json() and evidence["turns"] == 2


async def _ask(rig: Rig, **arguments: Any) -> tuple[Any, str]:
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(
        session, "ConfirmAction", {"action": "move 500 dollars to savings", **arguments}
    )
    return session, call_id


async def test_a_bare_yes_is_asked_for_the_challenge_word() -> None:
    rig = Rig()
    session, call_id = await _ask(rig)
    assert (await rig.said(1))[0].startswith(CHALLENGE)
    rig.provider.simulate_transcription(
        session, "yeah, go ahead", role="user", confidence=0.97, quality=CLEAN
    )
    retry = (await rig.said(2))[1]
    assert retry == "To go ahead, please say the word confirm, or press 1."
    rig.provider.simulate_transcription(
        session, "Confirm.", role="user", confidence=0.96, quality=CLEAN
    )
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert (answer["answer"], answer["transcript"], answer["via"]) == (True, "Confirm.", "speech")
    evidence = answer["evidence"]
    assert evidence["risk"] == "high" and evidence["turns"] == 2
    assert evidence["confidence"] == 0.96 and evidence["audio"]["snr_db"] == 30.0
    assert set(evidence["layers"].values()) == {"passed"}
    await rig.close()


async def test_poor_audio_asks_for_the_keypad_and_the_keypad_confirms() -> None:
    rig = Rig()
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(
        session, "confirm", role="user", confidence=0.99, quality=NOISY
    )
    assert (await rig.said(2))[1].startswith("I could not hear that clearly. Press 1")
    tones = generate_dtmf("1", rig.voice.input_format.sample_rate, lead_ms=40, gap_ms=60)
    for start in range(0, len(tones), 480):
        rig.transport.push_caller_audio(session.session_id, tones[start : start + 480])
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert (answer["answer"], answer["via"]) == (True, "dtmf")
    assert answer["evidence"]["layers"] == {"keypad": "passed"}
    await rig.close()


async def test_a_no_needs_no_evidence() -> None:
    rig = Rig()
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(session, "no, don't", role="user", confidence=0.55)
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert answer["answer"] is False and len(rig.provider.said) == 1
    await rig.close()


async def test_yeses_without_evidence_end_in_a_refusal_not_an_approval() -> None:
    rig = Rig(reprompts=1)
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(session, "good", role="user", confidence=0.9)
    await rig.said(2)
    rig.provider.simulate_transcription(session, "indeed", role="user", confidence=0.9)
    record = await rig.provider.wait_for_tool_result(call_id)
    assert record.is_error
    assert "without the evidence a high-risk confirmation needs" in record.output
    await rig.close()


async def test_a_hook_sets_the_risk_of_one_call() -> None:
    rig = Rig()

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    def small_amounts_are_low_risk(event: Any, ctx: HookContext) -> HookResult | None:
        if "5 dollars" in event.arguments.get("action", ""):
            return HookResult.modify(risk="low")
        return None

    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(
        session, "ConfirmAction", {"action": "move 5 dollars to savings"}
    )
    assert (await rig.said(1))[0].endswith("Please say yes or no.")
    rig.provider.simulate_transcription(session, "yes", role="user")
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert answer["answer"] is True and answer["evidence"]["risk"] == "low"
    await rig.close()


async def test_a_hook_with_a_bad_risk_fails_the_call_naming_it() -> None:
    rig = Rig()

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    def bad(event: Any, ctx: HookContext) -> HookResult:
        return HookResult.modify(risk="medium")

    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(session, "ConfirmAction", {"action": "pay"})
    record = await rig.provider.wait_for_tool_result(call_id)
    assert record.is_error and "'medium': use 'low' or 'high'" in record.output
    await rig.close()


async def test_the_word_inside_a_sentence_re_prompts_then_offers_the_keypad() -> None:
    rig = Rig(reprompts=1)
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(
        session, "I'd like to confirm it tomorrow", role="user", confidence=0.99, quality=CLEAN
    )
    retry = (await rig.said(2))[1]
    assert retry == "I could not take that as a yes. Press 1 to confirm, or 2 to cancel."
    tones = generate_dtmf("1", rig.voice.input_format.sample_rate, lead_ms=40, gap_ms=60)
    for start in range(0, len(tones), 480):
        rig.transport.push_caller_audio(session.session_id, tones[start : start + 480])
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert (answer["answer"], answer["via"]) == (True, "dtmf")
    await rig.close()


KEYPAD_ONLY = EvidencePolicy(spoken=False)


def _press(rig: Rig, session: Any, keys: str) -> None:
    tones = generate_dtmf(keys, rig.voice.input_format.sample_rate, lead_ms=40, gap_ms=60)
    for start in range(0, len(tones), 480):
        rig.transport.push_caller_audio(session.session_id, tones[start : start + 480])


def test_with_spoken_approvals_off_a_perfect_challenge_answer_is_no_approval() -> None:
    perfect = Heard("speech", "confirm", transcript="Confirm.", confidence=0.99, quality=CLEAN)
    spoken_on = weigh_yes(perfect)
    assert spoken_on.accepted and set(spoken_on.layers) == {
        "challenge", "confidence", "audio", "speaker"
    }
    verdict = weigh_yes(perfect, KEYPAD_ONLY)
    assert (verdict.accepted, verdict.retry) == (False, "keypad")
    # every layer still measured, as with spoken approvals on; the switch recorded beside them
    assert verdict.layers == {**spoken_on.layers, "spoken": "failed"}
    assert verdict.reason == f"{SPOKEN_OFF}; please press 1"
    # nor twice in a row, where a second answer would stand in for unmeasured layers
    twice = weigh_yes(Heard("speech", "I confirm"), KEYPAD_ONLY, repeated=True)
    assert (twice.accepted, twice.retry) == (False, "keypad") and "repeat" not in twice.layers
    assert EvidencePolicy().spoken is True


async def test_with_spoken_approvals_off_only_the_keypad_approves() -> None:
    rig = Rig(evidence=KEYPAD_ONLY, reprompts=3)
    session, call_id = await _ask(rig)
    question = (await rig.said(1))[0]
    assert question == (
        "Please confirm: move 500 dollars to savings. To go ahead, press 1. To stop, say no."
    )
    rig.provider.simulate_transcription(
        session, "Confirm.", role="user", confidence=0.99, quality=CLEAN
    )
    retry = (await rig.said(2))[1]
    assert retry == "A spoken yes cannot approve this. To go ahead, press 1. To stop, say no."
    assert rig.provider.tool_results == []  # the spoken "confirm" was not taken
    rig.provider.simulate_transcription(session, "mumble", role="user", confidence=0.9)
    reprompt = (await rig.said(3))[2]
    assert reprompt == f"Sorry, I didn't catch that. {question}"
    assert rig.provider.tool_results == []
    _press(rig, session, "1")
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert (answer["answer"], answer["via"]) == (True, "dtmf")
    assert answer["evidence"]["layers"] == {"keypad": "passed"}
    await rig.close()


async def test_with_spoken_approvals_off_a_spoken_no_still_refuses() -> None:
    rig = Rig(evidence=KEYPAD_ONLY)
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(session, "no, don't", role="user", confidence=0.55)
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert (answer["answer"], answer["via"]) == (False, "speech") and len(rig.provider.said) == 1
    await rig.close()


async def test_with_spoken_approvals_off_the_low_tier_still_takes_a_spoken_yes() -> None:
    rig = Rig(evidence=KEYPAD_ONLY)

    @rig.kit.hook(HookTrigger.BEFORE_TOOL_USE)
    def low_risk(event: Any, ctx: HookContext) -> HookResult:
        return HookResult.modify(risk="low")

    session, call_id = await _ask(rig)
    assert (await rig.said(1))[0].endswith("Please say yes or no.")
    rig.provider.simulate_transcription(session, "yes", role="user")
    answer = json.loads((await rig.provider.wait_for_tool_result(call_id)).output)
    assert (answer["answer"], answer["via"]) == (True, "speech")
    await rig.close()
