"""The `Recognizer` protocol and its result type `Hypothesis`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from .._audio_quality import AudioQuality
    from .._near_miss import Competition
    from .._spec import AnswerSpec

__all__ = ["Hypothesis", "Recognizer"]


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """One recognition hypothesis.

    Attributes:
        text: what to understand: the words recognised, or the answer phrase they were
            mapped onto ("" when the recogniser rejected the audio as out of set).
        score: 0..1, higher is better; comparable only between hypotheses of one call.
        transcript: the words as heard, verbatim, when the recogniser has them (an
            open-vocabulary recogniser); ``None`` for a grammar's phrase, which the person may
            not have said word for word.
        confidence: the calibrated probability that ``text`` reads as what was said, when the
            recogniser has one (``None``: uncalibrated; use ``score`` with care).
        quality: the utterance's audio figures, when a `GatedRecognizer` measured them.
        competition: for a challenge answer, how the words heard scored against their
            near-misses ("conform" for "confirm"), when the recogniser can score them.
    """

    text: str
    score: float
    transcript: str | None = None
    confidence: float | None = None
    quality: AudioQuality | None = None
    competition: Competition | None = None

    def with_quality(self, quality: AudioQuality) -> Hypothesis:
        """This hypothesis with ``quality`` attached."""
        return replace(self, quality=quality)


@runtime_checkable
class Recognizer(Protocol):
    """Speech in, n-best text out. Implementations run their work off the event loop: in a
    worker thread when their native code releases the GIL, else in a worker process."""

    name: str
    """A short name for reports, e.g. ``"pocketsphinx-grammar"``."""

    async def recognize(
        self, pcm16: npt.NDArray[np.int16], sample_rate: int, spec: AnswerSpec | None
    ) -> list[Hypothesis]:
        """Recognise one utterance.

        Args:
            pcm16: mono PCM16 samples.
            sample_rate: their rate in Hz (resampled as the recogniser needs).
            spec: the question being answered, used to constrain recognition; ``None`` for
                open dictation.

        Returns:
            Hypotheses, best first; empty when nothing was recognised.

        Cancellation:
            Safe: the caller stops waiting at once; the worker (thread or process)
            finishes the utterance in the background and its result is discarded.
        """
        ...
