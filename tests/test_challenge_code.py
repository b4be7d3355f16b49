"""``EvidencePolicy(challenge="code")`` in the dialogue and in a conference (issue 32).

The key tests run under both challenges: whatever the challenge, the right answer approves
with its evidence, anything else re-prompts and then offers the keypad, a "no" refuses, and an
unmeasured layer asks for a second answer (under the code, to a new code).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conference_rig import make_rig
from responder_rig import Rig

from voice_hitl import EvidencePolicy, VoiceResponder
from voice_hitl.responder._risk import Challenge
from voice_hitl.speech import AudioQuality
from voice_hitl.speech.dtmf import generate_dtmf

CLEAN = AudioQuality(speech_ms=600, speech_probability=0.95, snr_db=30.0, clipped=0.0)
ACTION = "Please confirm: move 500 dollars to savings."
CODES = ("472", "518", "903")


def codes() -> Callable[[], str]:
    """The codes a test's requests draw, in order."""
    drawn: Iterator[str] = iter(CODES)
    return lambda: next(drawn)


def policy(challenge: Challenge, **options: Any) -> EvidencePolicy:
    return EvidencePolicy(challenge=challenge, codes=codes(), **options)


QUESTION = {
    "word": f"{ACTION} To go ahead, say confirm, or press 1. To stop, say no.",
    "code": f"{ACTION} To go ahead, say the code four, seven, two, or press 1. To stop, say no.",
}
ANSWER = {"word": "Confirm.", "code": "Four, seven, two."}
SECOND = {"word": "confirm", "code": "five one eight"}
"""The second challenge answer, after one short only of unmeasured layers."""
AGAIN = {
    "word": "To be sure, please say confirm once more, or press 1.",
    "code": "To be sure, please say a new code: five, one, eight, or press 1.",
}
WRONG = {"word": "yeah, go ahead", "code": "four seven three"}
SENTENCE = {"word": "confirm it tomorrow", "code": "four seven two, tomorrow"}
QUESTION_BACK = {"word": "Confirm?", "code": "Is it four seven two?"}
SAY_IT = {
    "word": "To go ahead, please say the word confirm, or press 1.",
    "code": "To go ahead, please say the code four, seven, two, or press 1.",
}
KEYPAD = "I could not take that as a yes. Press 1 to confirm, or 2 to cancel."


async def _ask(rig: Rig) -> tuple[Any, str]:
    session = await rig.start()
    call_id = rig.provider.simulate_tool_call(
        session, "ConfirmAction", {"action": "move 500 dollars to savings"}
    )
    return session, call_id


def _press(rig: Rig, session: Any, keys: str) -> None:
    tones = generate_dtmf(keys, rig.voice.input_format.sample_rate, lead_ms=40, gap_ms=60)
    for start in range(0, len(tones), 480):
        rig.transport.push_caller_audio(session.session_id, tones[start : start + 480])


async def _answer(rig: Rig, call_id: str) -> Any:
    record = await rig.provider.wait_for_tool_result(call_id)
    assert not record.is_error, record.output
    return json.loads(record.output)


@pytest.mark.parametrize("challenge", ["word", "code"])
async def test_the_right_answer_approves_with_its_evidence(challenge: Challenge) -> None:
    rig = Rig(evidence=policy(challenge))
    session, call_id = await _ask(rig)
    assert (await rig.said(1)) == [QUESTION[challenge]]
    rig.provider.simulate_transcription(
        session, ANSWER[challenge], role="user", confidence=0.96, quality=CLEAN
    )
    answer = await _answer(rig, call_id)
    assert (answer["answer"], answer["via"], answer["transcript"]) == (
        True, "speech", ANSWER[challenge]
    )  # fmt: skip
    evidence = answer["evidence"]
    assert (evidence["risk"], evidence["challenge"], evidence["turns"]) == ("high", challenge, 1)
    assert evidence["layers"] == {
        "challenge": "passed", "confidence": "passed", "audio": "passed", "speaker": "passed"
    }  # fmt: skip
    await rig.close()


@pytest.mark.parametrize("challenge", ["word", "code"])
async def test_anything_else_re_prompts_then_the_keypad_approves(challenge: Challenge) -> None:
    rig = Rig(evidence=policy(challenge), reprompts=3)
    session, call_id = await _ask(rig)
    await rig.said(1)
    said = rig.provider.simulate_transcription
    said(session, WRONG[challenge], role="user", confidence=0.97, quality=CLEAN)
    assert (await rig.said(2))[1] == SAY_IT[challenge]
    said(session, QUESTION_BACK[challenge], role="user", confidence=0.97, quality=CLEAN)
    # a question back is no answer: asked again (understood as no yes at all, or weighed)
    reprompt = f"Sorry, I didn't catch that. {QUESTION[challenge]}"
    assert (await rig.said(3))[2] in (SAY_IT[challenge], reprompt)
    said(session, SENTENCE[challenge], role="user", confidence=0.97, quality=CLEAN)
    assert (await rig.said(4))[3] == KEYPAD  # the last chance: the keypad, said plainly
    assert rig.provider.tool_results == []
    _press(rig, session, "1")
    answer = await _answer(rig, call_id)
    assert (answer["answer"], answer["via"]) == (True, "dtmf")
    assert answer["evidence"]["layers"] == {"keypad": "passed"}
    await rig.close()


async def test_the_code_said_inside_a_sentence_asks_for_it_alone() -> None:
    rig = Rig(evidence=policy("code"))
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(
        session, "472, but ask Bob first", role="user", confidence=0.97, quality=CLEAN
    )
    assert (await rig.said(2))[1] == (
        "To go ahead, please say just the code four, seven, two, on its own, or press 1."
    )
    rig.provider.simulate_transcription(
        session, "the code is 472", role="user", confidence=0.97, quality=CLEAN
    )
    answer = await _answer(rig, call_id)
    assert answer["answer"] is True and answer["evidence"]["turns"] == 2
    await rig.close()


async def test_the_word_said_twice_approves() -> None:
    rig = Rig(evidence=policy("word"))
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(
        session, "Confirm, confirm.", role="user", confidence=0.97, quality=CLEAN
    )
    answer = await _answer(rig, call_id)
    assert answer["answer"] is True and answer["evidence"]["layers"]["challenge"] == "passed"
    await rig.close()


@pytest.mark.parametrize("challenge", ["word", "code"])
async def test_a_no_refuses(challenge: Challenge) -> None:
    rig = Rig(evidence=policy(challenge))
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(session, "no, don't", role="user", confidence=0.55)
    answer = await _answer(rig, call_id)
    assert (answer["answer"], answer["via"]) == (False, "speech")
    assert len(rig.provider.said) == 1
    await rig.close()


@pytest.mark.parametrize("challenge", ["word", "code"])
async def test_unmeasured_layers_ask_for_a_second_answer(challenge: Challenge) -> None:
    # a provider's transcript: no confidence, and no caller audio reached the line here
    rig = Rig(evidence=policy(challenge))
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(session, ANSWER[challenge], role="user")
    assert (await rig.said(2))[1] == AGAIN[challenge]
    rig.provider.simulate_transcription(session, SECOND[challenge], role="user")
    answer = await _answer(rig, call_id)
    assert answer["answer"] is True
    assert answer["evidence"]["layers"]["repeat"] == "passed"
    assert answer["evidence"]["layers"]["confidence"] == "unmeasured"
    await rig.close()


async def test_after_a_new_code_the_old_one_no_longer_counts() -> None:
    rig = Rig(evidence=policy("code"))
    session, call_id = await _ask(rig)
    await rig.said(1)
    said = rig.provider.simulate_transcription
    said(session, "472", role="user")
    assert (await rig.said(2))[1] == AGAIN["code"]
    said(session, "472", role="user")  # the first code again: not the code any more
    assert (await rig.said(3))[2] == (
        "To go ahead, please say the code five, one, eight, or press 1."
    )
    assert rig.provider.tool_results == []
    await rig.close()


async def test_unmeasured_under_the_keypad_policy_asks_for_the_keypad() -> None:
    rig = Rig(evidence=policy("code", unmeasured="keypad"))
    session, call_id = await _ask(rig)
    await rig.said(1)
    rig.provider.simulate_transcription(session, "472", role="user")
    assert (await rig.said(2))[1].startswith("I could not hear that clearly. Press 1")
    _press(rig, session, "1")
    assert (await _answer(rig, call_id))["via"] == "dtmf"
    await rig.close()


async def test_keypad_only_is_unchanged_by_the_code() -> None:
    rig = Rig(evidence=policy("code", spoken=False))
    session, call_id = await _ask(rig)
    assert (await rig.said(1)) == [f"{ACTION} To go ahead, press 1. To stop, say no."]
    rig.provider.simulate_transcription(session, "472", role="user", confidence=0.99, quality=CLEAN)
    # no code was asked for: digits are no answer to "press 1"
    assert (await rig.said(2))[1] == f"Sorry, I didn't catch that. {rig.provider.said[0]}"
    _press(rig, session, "1")
    answer = await _answer(rig, call_id)
    assert answer["via"] == "dtmf" and "challenge" not in answer["evidence"]
    await rig.close()


async def test_a_conference_quorum_votes_with_the_request_s_code() -> None:
    evidence = policy("code")
    rig = await make_rig(evidence=evidence)
    responder = VoiceResponder(rig.kit, evidence=evidence)
    responder.serve(rig.conf)
    reading = rig.call(
        "ConfirmAction",
        {"action": "ship the release", "approvers": ["alice", "bob"], "quorum": 2},
    )
    await rig.provider.wait_for("say")
    # A meeting has no keypad the bot can hear: no prompt offers one.
    assert rig.provider.said == [
        "Please confirm: ship the release. "
        "To go ahead, say the code four, seven, two. To stop, say no."
    ]
    (pending_id,) = rig.conf.open_requests
    assert rig.conf.challenge_code(pending_id) == "472"  # one code per request, shared
    said = rig.provider.simulate_transcription
    # Carol is not addressed; Alice's word is not the code. The line has no confidence or
    # audio figures: each approver's code is followed by a new one, said by them.
    said(rig.conf, "four seven two", role="user", speaker_id="carol")
    said(rig.conf, "confirm", role="user", speaker_id="alice")
    said(rig.conf, "four seven two", role="user", speaker_id="alice")
    await rig.provider.wait_for("say", 3)
    assert rig.provider.said[-1] == AGAIN["code"].replace(", or press 1", "")
    assert rig.conf.challenge_code(pending_id) == "518"
    said(rig.conf, "5 1 8", role="user", speaker_id="alice")
    said(rig.conf, "518", role="user", speaker_id="bob")
    await rig.provider.wait_for("say", 4)
    assert rig.provider.said[-1] == "To be sure, please say a new code: nine, zero, three."
    said(rig.conf, "nine oh three", role="user", speaker_id="bob")
    read = await reading
    assert not read.is_error, read.text
    summary = json.loads(read.text)
    assert summary["approved"] is True
    assert sorted(summary["approvers"]) == ["Alice", "Bob"]
    await responder.aclose()
    await rig.kit.aclose()


async def test_the_desk_alone_weighs_votes_against_the_code() -> None:
    # no responder: the application asks (with the channel's code), the desk hears the votes
    rig = await make_rig(evidence=policy("code"))
    reading = rig.call(
        "ConfirmAction",
        {"action": "ship the release", "approvers": ["alice", "bob"], "quorum": 2},
    )
    event = await rig.observed.requests.get()
    assert rig.conf.challenge_code(event.pending_id) == "472"
    said = rig.provider.simulate_transcription
    measured: dict[str, Any] = {"role": "user", "confidence": 0.99, "quality": CLEAN}
    said(rig.conf, "473", speaker_id="bob", **measured)  # a wrong code: not counted
    said(rig.conf, "472, ask Carol", speaker_id="bob", **measured)  # not alone: not counted
    said(rig.conf, "Confirm.", speaker_id="bob", **measured)  # the word: not counted
    said(rig.conf, "four, seven, two", speaker_id="alice", **measured)  # counted
    # had any of Bob's counted, the quorum was reached and this "no" came too late
    said(rig.conf, "no", role="user", speaker_id="bob")
    read = await reading
    assert read.is_error and "bob" in read.text.lower(), read.text
    await rig.kit.aclose()


async def test_a_code_source_that_returns_no_code_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rig = Rig(evidence=EvidencePolicy(challenge="code", codes=lambda: "4 7"))
    await _ask(rig)
    await rig.observed.requests.get()
    await rig.kit.hooks.drain()
    assert rig.provider.said == []  # not asked with a code nobody could say back
    assert "a challenge code must be 3 digits (0-9), got '4 7'" in caplog.text
    await rig.close()
