"""`SecondReadingRecognizer`: Whisper first; Moonshine reads what Whisper could not.

Whisper tiny.en with its checks (`WhisperRecognizer`) rejects an utterance when neither of its
passes maps onto an answer: the person is asked again. A second model that fails on other
utterances can answer some of those at once ("I'd rather not" in an espeak voice, "4072" in
noise: development held-out set). The second reading (`MoonshineReader`) runs only on those
rejections, and is taken only when it cannot cost what the first reading's rules protect:

* never a yes: a yes is only ever Whisper's own, verified reading;
* for a yes/no question, a no only when neither Whisper pass holds a yes (`affirms`: a
  Whisper yes that failed its checks, or a "yea, not right", is a doubtful yes, not a no,
  by the same rule Whisper's own no follows), and only a plain one
  (`plain_no`: "I'd rather not", not "he's not going to rain");
* for numbers and digits, only a *strict* reading (every word a number word, as
  `WhisperRecognizer.value_reading` maps it) that no Whisper reading contradicts: a Whisper
  value must be the same, or the same digits with zeros Whisper dropped;
* anything else exactly as `understand` reads the text (no snapping onto the nearest answer);
  a transcript longer than the audio could hold is a decoding loop and is rejected.

Its hypotheses carry `SECOND_READING_CONFIDENCE` as calibrated confidence: on the tuning
fixtures 4 of the 4 second readings taken were right, (4 + 1) / (4 + 2) = 0.83 by Laplace's
rule of succession, rounded down.

Measured (bench/results_heldout.txt, 2026-12-04): tuning fixtures 92.7 -> 93.8 %, development
held-out set 91.4 -> 91.7 %, held-out ``heldout2`` 78.9 -> 79.5 % (3 more answers right, one
more wrong: "ninety nine" in babble read as 1999), no yes and no affirmative read as no in any
set; on the adversarial sets the only new answers were requests said as such ("cancel it
please" -> cancel). It costs about 430 MB of memory (ONNX Runtime and the model), hence the
recogniser ``whisper+moonshine`` and the ``moonshine`` extra rather than the default.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._answer import Answer, MetaAnswer
from .._spec import AnswerKind
from .._understand import understand
from ._audio import check_pcm16
from ._grammar import answer_phrases
from ._moonshine import MoonshineReader
from ._plain import plain_no
from ._protocol import Hypothesis
from ._whisper import (
    VALUE_KINDS,
    WhisperHearing,
    WhisperRecognizer,
    affirms,
    loops,
    value_of,
    verbatim,
    zeros_dropped,
)

if TYPE_CHECKING:
    from .._spec import AnswerSpec

__all__ = ["SECOND_READING_CONFIDENCE", "SecondReadingRecognizer"]

SECOND_READING_CONFIDENCE = 0.8
"""Calibrated confidence of a taken second reading (see the module docstring)."""


class SecondReadingRecognizer:
    """`WhisperRecognizer`, with `MoonshineReader` reading the utterances it rejects.

    Args:
        whisper: the first reader (default: a `WhisperRecognizer`).
        reader: the second reader (default: a `MoonshineReader`).
    """

    def __init__(
        self, whisper: WhisperRecognizer | None = None, reader: MoonshineReader | None = None
    ) -> None:
        self.whisper = whisper if whisper is not None else WhisperRecognizer()
        self.reader = reader if reader is not None else MoonshineReader()
        self.name = f"{self.whisper.name}+{self.reader.name}"
        self.second_readings = 0
        """How many utterances the second reader read (for reports)."""
        self.taken = 0
        """How many of those it answered (for reports)."""

    async def load(self) -> None:
        """Load both models off the event loop.

        Raises:
            ModuleNotFoundError: the ``speech`` extra (or ``moonshine-cpp``) is missing.
            MoonshineUnsupportedError: Moonshine cannot run on this CPU (the reason).

        Cancellation:
            Safe: loading finishes in its threads and is kept for later calls.
        """
        await self.reader.load()  # first: it refuses on a CPU Moonshine cannot run on
        await self.whisper.load()

    def recognize_sync(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Blocking form of `recognize`, for worker threads and scripts."""
        return self.recognize_cleaned_sync(pcm16, sample_rate, pcm16, sample_rate, spec)

    def recognize_cleaned_sync(
        self,
        cleaned: npt.NDArray[np.int16],
        cleaned_rate: int,
        original: npt.NDArray[np.int16],
        original_rate: int,
        spec: AnswerSpec | None,
    ) -> list[Hypothesis]:
        """Whisper hears ``cleaned`` (denoised by `GatedRecognizer`), the second reader the
        ``original``: Moonshine reads the denoiser's artefacts as words ("407 kids" for the
        "4072" it reads in the original noise; development held-out set) (blocking)."""
        heard = self.whisper.hear_sync(cleaned, cleaned_rate, spec)
        if heard.hypotheses or not self._worth_reading(heard, spec):
            return heard.hypotheses
        assert spec is not None  # _worth_reading is False for open dictation
        self.second_readings += 1
        text = self.reader.read_sync(original, original_rate)
        hypotheses = self._second(text, heard, spec, len(original) / original_rate)
        self.taken += bool(hypotheses)
        return hypotheses

    def _worth_reading(self, heard: WhisperHearing, spec: AnswerSpec | None) -> bool:
        """Whether a rejected utterance may be read again: a question with answers, and for
        a yes/no question, no Whisper pass that holds a yes."""
        if spec is None or answer_phrases(spec) is None:
            return False
        if spec.kind is AnswerKind.CONFIRM:
            return not any(affirms(said) for said, _ in heard.readings)
        return True

    def _second(
        self, text: str, heard: WhisperHearing, spec: AnswerSpec, seconds: float
    ) -> list[Hypothesis]:
        """The second reading as a hypothesis, when the module docstring's rules allow it."""
        if not text or loops(text, seconds):
            return []
        result = understand(text, spec)
        if isinstance(result, MetaAnswer):
            return [self._hypothesis(text, text)]
        if not isinstance(result, Answer) or result.value is True:
            return []
        if result.value is False and not plain_no(text, spec):
            return []
        if spec.kind in VALUE_KINDS:
            mapped = self._strict_value(text, heard, spec)
            return [] if mapped is None else [self._hypothesis(mapped, text)]
        return [self._hypothesis(text, text)]

    def _strict_value(self, text: str, heard: WhisperHearing, spec: AnswerSpec) -> str | None:
        """The number words to understand, when ``text`` reads strictly as a value that no
        Whisper reading contradicts."""
        reading = self.whisper.value_reading(text, spec)
        if reading is None or not reading[1]:
            return None
        mine = value_of(reading[0], spec)
        for said, _ in heard.readings:
            theirs = self.whisper.value_reading(said, spec)
            other = value_of(theirs[0], spec) if theirs is not None else None
            if other is None or other == mine:
                continue
            digits = isinstance(mine, str) and isinstance(other, str)
            if not (digits and zeros_dropped(str(mine), str(other))):
                return None
        return reading[0]

    @staticmethod
    def _hypothesis(text: str, said: str) -> Hypothesis:
        return Hypothesis(
            text.strip(),
            SECOND_READING_CONFIDENCE,
            transcript=verbatim(said),
            confidence=SECOND_READING_CONFIDENCE,
        )

    async def recognize(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Recognise one utterance in a worker thread (see `Recognizer.recognize`).

        Raises:
            AudioFormatError: bad audio.
            ModuleNotFoundError: the ``speech`` extra (or ``moonshine-cpp``) is missing.

        Cancellation:
            Safe: the caller stops waiting at once; the worker thread finishes the
            utterance in the background and its result is discarded.
        """
        check_pcm16(pcm16, sample_rate)
        return await asyncio.to_thread(self.recognize_sync, pcm16, sample_rate, spec)

    async def recognize_cleaned(
        self,
        cleaned: npt.NDArray[np.int16],
        cleaned_rate: int,
        original: npt.NDArray[np.int16],
        original_rate: int,
        spec: AnswerSpec | None,
    ) -> list[Hypothesis]:
        """`recognize_cleaned_sync` in a worker thread (cancellation as for `recognize`)."""
        check_pcm16(cleaned, cleaned_rate)
        check_pcm16(original, original_rate)
        return await asyncio.to_thread(
            self.recognize_cleaned_sync, cleaned, cleaned_rate, original, original_rate, spec
        )
