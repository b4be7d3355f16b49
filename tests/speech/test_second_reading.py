"""SecondReadingRecognizer's rules (scripted readings) and MoonshineReader on real audio."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from voice_hitl.speech import AnswerSpec, MetaAnswer, understand
from voice_hitl.speech._fixtures import load_manifest
from voice_hitl.speech.asr import (
    AudioFormatError,
    Denoiser,
    GatedRecognizer,
    SpeechGate,
    WhisperRecognizer,
    _moonshine,
    load_recognizer,
    read_wav,
)
from voice_hitl.speech.asr._moonshine import (
    MoonshineReader,
    MoonshineSupport,
    MoonshineUnsupportedError,
    moonshine_available,
    moonshine_support,
    probe_moonshine,
)
from voice_hitl.speech.asr._native import cpu_flags
from voice_hitl.speech.asr._second_reading import (
    SECOND_READING_CONFIDENCE,
    SecondReadingRecognizer,
)

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures"
CONFIRM = AnswerSpec.from_tool_call("ConfirmAction", {"action": "transfer five hundred dollars"})
COLOURS = AnswerSpec.choose("Which colour?", ["Red", "Green", "Blue"])
DIGITS = AnswerSpec.digits("Your code?")
FREE = AnswerSpec.from_tool_call("AskUserQuestion", {"question": "Anything else?"})


class ScriptedReader(MoonshineReader):
    """A second reader that returns a scripted transcript and keeps the audio it was given."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.reads = 0
        self.heard: list[tuple[Any, int]] = []

    def read_sync(self, pcm16: Any, sample_rate: int) -> str:
        self.reads += 1
        self.heard.append((pcm16, sample_rate))
        return self.text


def _recognizer(prompted: str, unprompted: str, second: str) -> SecondReadingRecognizer:
    """Whisper with both decoding passes scripted, and a scripted second reader."""
    whisper = WhisperRecognizer()

    def decode(encoded: Any, spec: Any, *, hotwords: bool, words: str | None = None) -> Any:
        if words is not None:
            return "", float("-inf")
        return (prompted if hotwords else unprompted), -0.1

    whisper.encode_sync = lambda pcm16, rate: None  # type: ignore[method-assign,assignment,return-value]
    whisper.decode_sync = decode  # type: ignore[method-assign]
    return SecondReadingRecognizer(whisper, ScriptedReader(second))


def _heard(rec: SecondReadingRecognizer, spec: AnswerSpec, seconds: float = 2.0) -> list[str]:
    pcm = np.zeros(int(16000 * seconds), dtype=np.int16)
    return [h.text for h in rec.recognize_sync(pcm, 16000, spec)]


def _reads(rec: SecondReadingRecognizer) -> int:
    assert isinstance(rec.reader, ScriptedReader)
    return rec.reader.reads


def test_the_second_reader_is_asked_only_about_rejected_answers() -> None:
    # Whisper answered: its answer stands and the second reader is not asked
    rec = _recognizer("blue", "Blue.", "red")
    assert _heard(rec, COLOURS) == ["blue"] and _reads(rec) == 0
    # Whisper rejected: the second reading answers, as heard, with its constant confidence
    rec = _recognizer("", "Thank you very much.", "The green one, please.")
    (best,) = rec.recognize_sync(np.zeros(32000, dtype=np.int16), 16000, COLOURS)
    assert understand(best.text, COLOURS).value == "Green"  # type: ignore[union-attr]
    assert best.transcript == "The green one, please"
    assert best.confidence == SECOND_READING_CONFIDENCE
    assert (rec.second_readings, rec.taken) == (1, 1)
    # open dictation is Whisper's alone
    rec = _recognizer("", "", "anything")
    assert _heard(rec, FREE) == [] and _reads(rec) == 0


def test_a_second_reading_is_never_a_yes() -> None:
    for said in ("Yes.", "Yes, go ahead.", "I confirm."):
        rec = _recognizer("", "Thank you very much.", said)
        assert _heard(rec, CONFIRM) == [], said
        assert _reads(rec) == 1


def test_a_no_needs_whisper_to_have_heard_no_yes() -> None:
    # neither Whisper pass read a yes: the second reading's no is taken
    rec = _recognizer("", "The weather is nice.", "I'd rather not.")
    assert _heard(rec, CONFIRM) == ["I'd rather not."]
    # the unprompted pass heard "go ahead" (a yes that failed its checks): not read again,
    # so "no head" for "go ahead" can never become a no
    rec = _recognizer("you go ahead and then the rest", "Go ahead.", "No head.")
    assert _heard(rec, CONFIRM) == [] and _reads(rec) == 0
    # nor when a pass holds a yes beside a no ("yeah, that's right" heard "yea, not right")
    rec = _recognizer("yea, not right", "Not right.", "Not right.")
    assert _heard(rec, CONFIRM) == [] and _reads(rec) == 0
    # a "not" inside another sentence is no answer to a yes/no question
    for said in ("He's not going to rain to me.", "Still, I don't have to do this."):
        assert _heard(_recognizer("", "", said), CONFIRM) == [], said
    assert _heard(_recognizer("", "", "Absolutely not, sorry."), CONFIRM) != []


class HalvingDenoiser(Denoiser):
    """Stands in for the denoiser: every utterance comes back at half the amplitude."""

    def clean(self, pcm16: Any, sample_rate: int, snr_db: float) -> Any:
        return (pcm16 // 2).astype(np.int16), sample_rate


async def test_whisper_hears_the_denoised_audio_and_moonshine_the_original() -> None:
    audio, rate = read_wav(FIXTURES / "demo" / "03_confirm.wav")
    rec = _recognizer("", "", "4072")
    seen: list[Any] = []
    hear = rec.whisper.hear_sync

    def spy(pcm16: Any, sample_rate: int, spec: Any) -> Any:
        seen.append(pcm16)
        return hear(pcm16, sample_rate, spec)

    rec.whisper.hear_sync = spy  # type: ignore[method-assign]
    gated = GatedRecognizer(rec, SpeechGate(), denoiser=HalvingDenoiser())
    for hypotheses in (
        gated.recognize_sync(audio, rate, DIGITS),
        await gated.recognize(audio, rate, DIGITS),
    ):
        assert [h.text for h in hypotheses] == ["4072"]
        assert hypotheses[0].quality is not None
    assert isinstance(rec.reader, ScriptedReader)
    assert len(seen) == len(rec.reader.heard) == 2
    for denoised, (original, original_rate) in zip(seen, rec.reader.heard, strict=True):
        assert np.array_equal(denoised, audio // 2)
        assert original is audio and original_rate == rate


def test_values_must_be_strict_and_uncontradicted() -> None:
    # every word a number word: taken
    rec = _recognizer("", "", "4072")
    (text,) = _heard(rec, DIGITS)
    assert understand(text, DIGITS).value == "4072"  # type: ignore[union-attr]
    # words around the digits that are not number words: asked again
    assert _heard(_recognizer("", "", "Followed Sam and two."), DIGITS) == []
    assert _heard(_recognizer("", "", "Michael, digit 6519"), DIGITS) == []
    # Whisper read other digits: the two readings disagree, asked again
    assert _heard(_recognizer("three, three, one, three", "3, 3, 1, 4", "3 3 0 1"), DIGITS) == []
    # ... unless Whisper's are the same digits with a spoken "oh" dropped
    rec = _recognizer("it's four seven two, I said", "", "four oh seven two")
    (text,) = _heard(rec, DIGITS)
    assert understand(text, DIGITS).value == "4072"  # type: ignore[union-attr]


def test_requests_loops_and_silence() -> None:
    (text,) = _heard(_recognizer("", "", "Can I talk to a real person?"), COLOURS)
    assert isinstance(understand(text, COLOURS), MetaAnswer)
    # more words than 2 s of speech can hold: a decoding loop
    loop = " ".join(["headphone"] * 12)
    assert _heard(_recognizer("", "", loop), COLOURS) == []
    assert _heard(_recognizer("", "", ""), COLOURS) == []
    # snapping is Whisper's job, not the second reader's: "grin" is not "green"
    assert _heard(_recognizer("", "", "grin"), COLOURS) == []


def test_the_speech_span_is_where_the_vad_hears_speech() -> None:
    gate = SpeechGate()
    assert gate.speech_span(np.zeros(16000, dtype=np.int16), 16000) is None
    audio, rate = read_wav(FIXTURES / "demo" / "03_confirm.wav")
    padded = np.concatenate([np.zeros(rate, np.int16), audio, np.zeros(rate, np.int16)])
    span = gate.speech_span(padded, rate)
    assert span is not None
    start, end = span
    assert rate * 0.9 <= start < end <= len(padded) - rate * 0.9
    with pytest.raises(AudioFormatError, match="int16"):
        gate.speech_span(np.zeros(100, dtype=np.float32), 16000)  # type: ignore[arg-type]


@pytest.fixture
def moonshine() -> None:
    """Skip, with the probe's reason, where the wheel is missing or cannot run on this CPU
    (its child process found out; this worker never loads it then)."""
    support = moonshine_support()
    if not support.usable:
        pytest.skip(support.reason)


needs_moonshine = pytest.mark.usefixtures("moonshine")


def test_the_probe_agrees_with_the_cpu() -> None:
    """The real probe, on whatever CPU runs the suite: the wheel runs where the CPU has
    AVX-512 and stops with SIGILL (in the child, not here) where it has not."""
    if not moonshine_available():
        pytest.skip("moonshine-cpp is not installed (x86-64 Linux only)")
    flags = cpu_flags() or frozenset()
    support = moonshine_support()
    if "avx512f" in flags and "avx512vl" in flags:
        assert support == MoonshineSupport(True, "")
    else:
        assert not support.usable and "SIGILL" in support.reason, support


def test_a_cpu_the_wheel_cannot_run_on_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child killed by SIGILL (here sent by the shell the probe runs under, standing in for
    a CPU without AVX-512) is a reason; loading then refuses with it and never touches the
    wheel in this process."""
    if not moonshine_available():
        pytest.skip("moonshine-cpp is not installed (x86-64 Linux only)")
    support = probe_moonshine(runner=("sh", "-c", "kill -ILL $$"))
    assert not support.usable
    assert "SIGILL (Illegal instruction)" in support.reason and "AVX-512" in support.reason
    monkeypatch.setattr(_moonshine, "_SUPPORT", support)
    monkeypatch.setattr(_moonshine, "_MODEL", None)
    with pytest.raises(MoonshineUnsupportedError, match="SIGILL"):
        asyncio.run(load_recognizer("whisper+moonshine"))
    assert _moonshine._MODEL is None
    failed = probe_moonshine(runner=("sh", "-c", "echo 'no model here' >&2; exit 3"))
    assert failed == MoonshineSupport(
        False, "moonshine-cpp could not load its model (exit 3): no model here"
    )


@needs_moonshine
@pytest.mark.timeout(180)  # ~12 s of CPU: at load 10 on two cores, a minute or more
async def test_moonshine_reads_clean_tuning_answers() -> None:
    """An aggregate floor on the clean tuning fixtures (30 files), not any single file."""
    reader = MoonshineReader()
    await reader.load()
    audio_dir, entries = load_manifest(FIXTURES)
    clean = [e for e in entries if e["condition"] == "clean"][::3][:30]
    right = 0
    for entry in clean:
        pcm, rate = read_wav(audio_dir / entry["file"])
        text = await reader.read(pcm, rate)
        spec = AnswerSpec.from_tool_call(entry["spec"]["tool"], entry["spec"]["arguments"])
        result = understand(text, spec)
        expected = entry["expected"]
        if expected["type"] == "answer":
            right += getattr(result, "value", None) == expected["value"]
        elif expected["type"] == "meta":
            right += getattr(result, "intent", None) == expected["intent"]
        else:
            right += not hasattr(result, "value")
    assert right >= 0.6 * len(clean), f"{right}/{len(clean)}"


@needs_moonshine
async def test_moonshine_reader_names_bad_audio_and_reads_silence_as_nothing() -> None:
    reader = MoonshineReader()
    with pytest.raises(AudioFormatError, match="int16"):
        await reader.read(np.zeros(100, dtype=np.float32), 16000)  # type: ignore[arg-type]
    assert await reader.read(np.zeros(16000, dtype=np.int16), 16000) == ""
    with pytest.raises(ValueError, match="margin_s"):
        MoonshineReader(margin_s=-1.0)


@needs_moonshine
async def test_load_recognizer_builds_the_second_reading_behind_the_gate() -> None:
    recognizer = await load_recognizer("whisper+moonshine")
    assert isinstance(recognizer, GatedRecognizer)
    assert isinstance(recognizer.inner, SecondReadingRecognizer)
    assert recognizer.denoiser is not None  # Whisper hears denoised audio, Moonshine the original
    audio, rate = read_wav(FIXTURES / "demo" / "03_confirm.wav")
    (best,) = await recognizer.recognize(audio, rate, CONFIRM)
    assert best.transcript is not None and "go ahead" in best.transcript.lower()
    assert recognizer.inner.second_readings == 0  # Whisper answered: nothing read twice
