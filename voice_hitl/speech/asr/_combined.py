"""`CombinedRecognizer`: PocketSphinx's grammar first, Whisper when the grammar is unsure.

The two recognisers fail differently. The grammar decoder is fast and knows only the
question's answers, so it is right when its path explains the audio about as well as free
phones do (the phone-loop ratio, see `PocketsphinxRecognizer`) and wrong when speech lies
outside the grammar or is noisy; Whisper reads noisy and out-of-set speech well and rejects
what does not map onto an answer, but tiny.en mishears some voices. Per utterance:

1. The grammar decodes the audio (RTF ~0.04 with its phone loop, in its worker process). An
   answer or meta-intent that is not a yes, whose ratio reaches ``trust_ratio``, is taken
   as it is and Whisper does not run.
2. Otherwise Whisper decides (`WhisperRecognizer` with its own checks). A yes is only ever
   taken from Whisper, verified by its unprompted second pass.
3. If Whisper rejects the utterance, the grammar's answer (never a yes) is taken when its
   ratio reaches ``accept_ratio`` -- unless Whisper's unprompted pass confidently heard
   words that answer nothing (average token log-probability >= ``confident_miss``, as for
   "Hello there." to a digits question): that is out-of-set speech, and it is rejected.

Narrowband (telephone) audio lowers every phone-loop ratio: the model's 4-8 kHz filters see
nothing, for the grammar and the free phones alike but not equally. Both ratio thresholds
are therefore moved by ``narrowband_shift`` for such audio (`is_narrowband`).

The defaults were chosen on the committed fixtures in the middle of plateaus of equal
accuracy (95.4-95.9 % around the chosen 95.7 %): ``trust_ratio`` 2 to 4 (lower skips Whisper
more often), ``accept_ratio`` -9 to -10 (-11 loses flite's clean answers), ``narrowband_shift``
-3 to -6, and ``confident_miss`` -0.45 (-0.4 and -0.5 lose 0.2-0.5 points; without the veto
93.5 %). Figures in bench/results_speech_combined.txt.
"""

from __future__ import annotations

import asyncio
import math
import threading
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .._answer import Answer, MetaAnswer
from .._understand import understand
from ._audio import check_pcm16, is_narrowband
from ._grammar import answer_phrases
from ._pocketsphinx import PocketsphinxRecognizer
from ._protocol import Hypothesis
from ._whisper import WhisperHearing, WhisperRecognizer

if TYPE_CHECKING:
    from .._spec import AnswerSpec

__all__ = ["CombinedRecognizer"]


class CombinedRecognizer:
    """PocketSphinx grammar recognition backed by Whisper (see the module docstring).

    Construction is cheap; the PocketSphinx decoder and the Whisper model load on first use
    or via `load`.

    Args:
        grammar: the grammar recogniser (default: a `PocketsphinxRecognizer`).
        whisper: the Whisper recogniser (default: a `WhisperRecognizer`).
        trust_ratio: phone-loop ratio from which a grammar result is taken without Whisper.
        accept_ratio: phone-loop ratio from which a grammar result is taken when Whisper
            rejected the utterance; must not exceed ``trust_ratio``.
        narrowband_shift: added to both ratios for band-limited (telephone) audio; <= 0.
        confident_miss: average token log-probability from which Whisper's unprompted
            transcript, answering nothing, vetoes the grammar's answer.

    Raises:
        ValueError: inconsistent thresholds (the message names them).
    """

    name = "pocketsphinx+whisper"

    def __init__(
        self,
        *,
        grammar: PocketsphinxRecognizer | None = None,
        whisper: WhisperRecognizer | None = None,
        trust_ratio: float = 3.0,
        accept_ratio: float = -9.5,
        narrowband_shift: float = -4.0,
        confident_miss: float = -0.45,
    ) -> None:
        if accept_ratio > trust_ratio:
            raise ValueError(
                f"accept_ratio ({accept_ratio}) must not exceed trust_ratio ({trust_ratio})"
            )
        if narrowband_shift > 0:
            raise ValueError(f"narrowband_shift must be <= 0, got {narrowband_shift}")
        if confident_miss > 0:
            raise ValueError(f"confident_miss must be a log-probability <= 0, got {confident_miss}")
        self._grammar = grammar
        self._whisper = whisper if whisper is not None else WhisperRecognizer()
        self._trust = trust_ratio
        self._accept = accept_ratio
        self._shift = narrowband_shift
        self._confident_miss = confident_miss
        self._lock = threading.Lock()
        self.whisper_runs = 0
        """How many utterances needed Whisper (for reports)."""

    def _grammar_recognizer(self) -> PocketsphinxRecognizer:
        with self._lock:
            if self._grammar is None:
                self._grammar = PocketsphinxRecognizer()
            return self._grammar

    async def load(self) -> None:
        """Load the PocketSphinx decoder (and start its worker process) and the Whisper model.

        Raises:
            ModuleNotFoundError: the ``speech`` or ``whisper`` extra is not installed.

        Cancellation:
            Safe: loading finishes in its threads and is kept for later calls.
        """
        grammar = await asyncio.to_thread(self._grammar_recognizer)
        await grammar.load()
        await self._whisper.load()

    def _standing(
        self, text: str, ratio: float | None, spec: AnswerSpec, narrowband: bool
    ) -> float | None:
        """The grammar result's ratio measured against wideband thresholds, or ``None``
        when the result may never be taken alone (nothing heard, a yes, no answer)."""
        if ratio is None or not _answers_without_yes(text, spec):
            return None
        return ratio - (self._shift if narrowband else 0.0)

    def _decide(self, text: str, standing: float | None, heard: WhisperHearing) -> list[Hypothesis]:
        """Steps 2 and 3 of the module docstring, once Whisper has heard the utterance."""
        if heard.hypotheses:
            return heard.hypotheses
        if standing is None or standing < self._accept:
            return []
        said, logprob = heard.unprompted or ("", -math.inf)
        if said.strip() and logprob >= self._confident_miss:
            return []  # Whisper clearly heard something else
        return [Hypothesis(text, _score(standing))]

    def recognize_sync(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Blocking form of `recognize` (everything in the calling thread), for scripts."""
        check_pcm16(pcm16, sample_rate)
        if spec is None or answer_phrases(spec) is None:
            self.whisper_runs += 1
            return self._whisper.recognize_sync(pcm16, sample_rate, spec)
        text, ratio = self._grammar_recognizer().grammar_decode_sync(pcm16, sample_rate, spec)
        standing = self._standing(text, ratio, spec, is_narrowband(pcm16, sample_rate))
        if standing is not None and standing >= self._trust:
            return [Hypothesis(text, _score(standing))]
        self.whisper_runs += 1
        return self._decide(text, standing, self._whisper.hear_sync(pcm16, sample_rate, spec))

    async def recognize(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Recognise one utterance: the grammar in its worker process, Whisper in a thread.

        Args:
            pcm16: mono PCM16 samples (any rate 8-96 kHz).
            sample_rate: their rate in Hz.
            spec: the question; ``None`` or a free-text question goes to Whisper alone.

        Returns:
            One hypothesis, or none when the utterance was rejected.

        Raises:
            AudioFormatError: bad audio.
            ModuleNotFoundError: the ``speech`` or ``whisper`` extra is not installed.
            RecognizerWorkerError: the grammar's worker process died.

        Cancellation:
            Safe: the caller stops waiting at once; work in flight finishes in its worker
            and its result is discarded.
        """
        check_pcm16(pcm16, sample_rate)
        if spec is None or answer_phrases(spec) is None:
            self.whisper_runs += 1
            return await self._whisper.recognize(pcm16, sample_rate, spec)
        grammar = await asyncio.to_thread(self._grammar_recognizer)
        text, ratio = await grammar.grammar_decode(pcm16, sample_rate, spec)
        narrowband = await asyncio.to_thread(is_narrowband, pcm16, sample_rate)
        standing = self._standing(text, ratio, spec, narrowband)
        if standing is not None and standing >= self._trust:
            return [Hypothesis(text, _score(standing))]
        self.whisper_runs += 1
        return self._decide(text, standing, await self._whisper.hear(pcm16, sample_rate, spec))


def _answers_without_yes(text: str, spec: AnswerSpec) -> bool:
    """Whether ``text`` reads as an answer or meta-intent that is not a yes."""
    result = understand(text, spec) if text else None
    if isinstance(result, MetaAnswer):
        return True
    return isinstance(result, Answer) and result.value is not True


def _score(standing: float) -> float:
    """A 0..1 score from a (wideband) phone-loop ratio: 0.5 at 0, rising with the ratio."""
    return 1.0 / (1.0 + math.exp(-standing / 3.0))
