"""DTMF: Goertzel detection, the tone generator and keypad answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voice_hitl.speech import Answer, AnswerSpec, MetaAnswer, MetaIntent, NoMatch, NoMatchReason
from voice_hitl.speech.dtmf import (
    KEYS,
    DtmfDetector,
    dtmf_entry_complete,
    dtmf_to_answer,
    generate_dtmf,
    key_frequencies,
)

RATES = st.sampled_from([8000, 16000, 24000])


def _detect(signal: np.ndarray, rate: int, chunks: int = 1) -> str:
    detector = DtmfDetector(rate)
    keys: list[str] = []
    for chunk in np.array_split(signal, chunks):
        keys += detector.feed(chunk)
    return "".join(keys)


@settings(max_examples=60, deadline=None)
@given(
    keys=st.text(alphabet=KEYS, min_size=6, max_size=6),
    rate=RATES,
    snr=st.floats(min_value=5.0, max_value=40.0),
    twist=st.floats(min_value=-4.0, max_value=4.0),
    level=st.floats(min_value=-30.0, max_value=-8.0),
    chunks=st.integers(min_value=1, max_value=40),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_six_keys_at_5db_snr_or_better_are_all_detected_once(
    keys: str, rate: int, snr: float, twist: float, level: float, chunks: int, seed: int
) -> None:
    signal = generate_dtmf(
        keys, rate, tone_ms=70, gap_ms=60, lead_ms=50, level_dbfs=level, twist_db=twist,
        snr_db=snr, seed=seed,
    )  # fmt: skip
    assert _detect(signal, rate, chunks) == keys


@settings(max_examples=30, deadline=None)
@given(rate=RATES, seed=st.integers(min_value=0, max_value=2**16))
def test_noise_alone_gives_no_key(rate: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, 3000, rate * 2).astype(np.int16)
    assert _detect(noise, rate) == ""


@settings(max_examples=30, deadline=None)
@given(
    rate=RATES,
    f0=st.floats(min_value=80.0, max_value=400.0),
    vibrato=st.floats(min_value=0.0, max_value=0.05),
)
def test_harmonic_voice_like_signals_give_no_key(rate: int, f0: float, vibrato: float) -> None:
    t = np.arange(rate) / rate
    pitch = f0 * (1 + vibrato * np.sin(2 * np.pi * 5 * t))
    phase = 2 * np.pi * np.cumsum(pitch) / rate
    voice = sum(np.sin(k * phase) / k for k in range(1, 25))
    pcm = (voice / np.max(np.abs(voice)) * 12000).astype(np.int16)
    assert _detect(pcm, rate) == ""


def test_single_tones_and_short_blips_are_not_keys() -> None:
    rate = 16000
    t = np.arange(rate) / rate
    single = (np.sin(2 * np.pi * 770 * t) * 10000).astype(np.int16)
    assert _detect(single, rate) == ""
    blip = generate_dtmf("5", rate, tone_ms=20, gap_ms=200)
    assert _detect(blip, rate) == ""


def test_repeated_key_needs_a_gap() -> None:
    rate = 8000
    assert _detect(generate_dtmf("55", rate, tone_ms=80, gap_ms=80), rate) == "55"
    held = generate_dtmf("5", rate, tone_ms=600, gap_ms=0)
    assert _detect(held, rate, chunks=13) == "5"


def test_feed_rejects_bad_audio() -> None:
    detector = DtmfDetector(16000)
    with pytest.raises(TypeError, match="int16"):
        detector.feed(np.zeros(100, dtype=np.float32))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mono"):
        detector.feed(np.zeros((100, 2), dtype=np.int16))
    with pytest.raises(TypeError, match="numpy array"):
        detector.feed([0, 1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sample_rate"):
        DtmfDetector(4000)


def test_generator_validates() -> None:
    with pytest.raises(ValueError, match="not a DTMF key"):
        generate_dtmf("12x", 8000)
    with pytest.raises(ValueError, match="sample_rate"):
        generate_dtmf("1", 4000)
    assert key_frequencies("5") == (770.0, 1336.0)
    out = generate_dtmf("1", 8000, tone_ms=100, gap_ms=50, lead_ms=25)
    assert out.dtype == np.int16 and len(out) == 8000 * 175 // 1000


def test_reset_forgets_state() -> None:
    rate = 8000
    detector = DtmfDetector(rate)
    tone = generate_dtmf("7", rate, tone_ms=200, gap_ms=0)
    assert detector.feed(tone) == ["7"]
    detector.reset()
    assert detector.feed(tone) == ["7"]


CONFIRM = AnswerSpec.confirm("Send it?")
COLOURS = AnswerSpec.choose("Colour?", ["Red", "Green", "Blue"])


@pytest.mark.parametrize(
    ("keys", "spec", "value", "choice_id"),
    [
        ("1", CONFIRM, True, "yes"),
        ("2#", CONFIRM, False, "no"),
        ("3", COLOURS, "Blue", "blue"),
        ("1", COLOURS, "Red", "red"),
        ("123456#", AnswerSpec.digits(length=6), "123456", None),
        ("12*98#", AnswerSpec.digits(), "98", None),
        ("0042#", AnswerSpec.digits(), "0042", None),
        ("250#", AnswerSpec.number(maximum=1000), 250, None),
    ],
)
def test_keys_to_answers(keys: str, spec: AnswerSpec, value: object, choice_id: str | None) -> None:
    out = dtmf_to_answer(keys, spec)
    assert out == Answer(value, choice_id, 1.0, keys, "dtmf")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keys", "spec", "reason"),
    [
        ("3", CONFIRM, NoMatchReason.NOT_UNDERSTOOD),
        ("12", CONFIRM, NoMatchReason.NOT_UNDERSTOOD),
        ("4", COLOURS, NoMatchReason.NOT_UNDERSTOOD),
        ("#", COLOURS, NoMatchReason.EMPTY),
        ("123#", AnswerSpec.digits(length=4), NoMatchReason.WRONG_LENGTH),
        ("12A#", AnswerSpec.digits(), NoMatchReason.NOT_UNDERSTOOD),
        ("12*#", AnswerSpec.digits(), NoMatchReason.EMPTY),
        ("5000#", AnswerSpec.number(maximum=1000), NoMatchReason.OUT_OF_RANGE),
        ("1", AnswerSpec.free_text(), NoMatchReason.UNSUPPORTED),
    ],
)
def test_keys_no_match(keys: str, spec: AnswerSpec, reason: NoMatchReason) -> None:
    out = dtmf_to_answer(keys, spec)
    assert isinstance(out, NoMatch) and out.reason is reason and out.transcript == keys


def test_meta_keys() -> None:
    assert dtmf_to_answer("*", CONFIRM) == MetaAnswer(MetaIntent.REPEAT, 1.0, "*", "dtmf")
    assert dtmf_to_answer("0", COLOURS) == MetaAnswer(MetaIntent.OPERATOR, 1.0, "0", "dtmf")
    assert isinstance(dtmf_to_answer("0#", AnswerSpec.digits()), Answer)
    with pytest.raises(ValueError, match="not DTMF keys"):
        dtmf_to_answer("1x", CONFIRM)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=KEYS, max_size=8))
def test_only_key_1_confirms(keys: str) -> None:
    out = dtmf_to_answer(keys, CONFIRM)
    if isinstance(out, Answer) and out.value is True:
        assert keys.rstrip("#") == "1"


def test_entry_complete() -> None:
    assert dtmf_entry_complete("1", CONFIRM)
    assert not dtmf_entry_complete("", CONFIRM)
    assert not dtmf_entry_complete("12", AnswerSpec.digits())
    assert dtmf_entry_complete("12#", AnswerSpec.digits())
    assert dtmf_entry_complete("1234", AnswerSpec.digits(length=4))
    many = AnswerSpec.choose("Q", [str(i) for i in range(12)])
    assert not dtmf_entry_complete("1", many) and dtmf_entry_complete("11", many)
