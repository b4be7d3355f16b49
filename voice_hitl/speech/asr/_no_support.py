"""A no must rest on speech: `no_rests_on_speech`.

Whisper writes noise and babble as words, and a negation is among its favourites ("nah, nah,
nah"; "please, no, no, no" for a noisy "please do"). A no refuses what the person may have
wanted, so a no is taken only when the audio under its negation word is the person's speech.

The words of the reading are aligned with the audio (Whisper's cross-attention alignment, the
way faster-whisper times words: `word_timings`), and each negation word's time span is
measured with the speech gate's VAD windows (`SpeechGate.windows`):

* some window of the span (widened by a window each side: the aligner's edges are rough)
  must reach ``min_probability`` (Silero calls it speech);
* the span's loudest window must stand within ``max_drop_db`` of the utterance's speech
  (the median level of its speech windows): a word the aligner put on quiet noise or on the
  babble between the person's words sits far below the person's own level;
* and it must rise ``min_snr_db`` above the noise floor (the quietest tenth of the non-speech
  windows, as the gate's SNR estimate took it before issue 32 item 2; this check was tuned on
  it and keeps it): a negation Whisper wrote into babble or hiss barely rises above it.

On the development sets (``heldout3``'s yes/no questions, every second file of
``adversarial``) every true no's negation rose at least 10.7 dB above the floor, except a
"nay, no, no, no" in 0 dB babble that the repeated-unit rule asks again anyway; the negations
of babble and of misheard requests ("It's not even mine." for a cancel) rose 5-9 dB.

When no negation word of the reading passes both, the no "rests on noise" and the person is
asked again (`WhisperRecognizer`), rather than refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._text import tokens
from .._vocab import NEGATION_WORDS
from ._snr import quietest_tenth

__all__ = ["WordTiming", "no_rests_on_speech", "word_timings"]


@dataclass(frozen=True, slots=True)
class WordTiming:
    """One word of a reading and where it lies in the utterance, in seconds."""

    word: str
    start: float
    end: float


def word_timings(
    model: Any, lock: AbstractContextManager[Any], encoded: Any, text: str, seconds: float
) -> list[WordTiming]:
    """The words of ``text`` timed against an encoded utterance of ``seconds`` (blocking).

    Args:
        model: a faster-whisper ``WhisperModel``.
        lock: held while the model aligns.
        encoded: its encoder's output for the utterance.
        text: the reading to align.
        seconds: the utterance's length.
    """
    from faster_whisper.tokenizer import Tokenizer

    tokenizer = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
    )
    ids = [t for t in tokenizer.encode(" " + text.strip()) if t < tokenizer.eot]
    if not ids:
        return []
    frames = max(1, min(3_000, round(seconds * 100)))
    with lock:
        aligned = model.find_alignment(tokenizer, [ids], encoded, frames)[0]
    return [WordTiming(str(w["word"]), float(w["start"]), float(w["end"])) for w in aligned]


def no_rests_on_speech(
    timings: Sequence[WordTiming],
    probabilities: npt.NDArray[np.float64],
    power: npt.NDArray[np.float64],
    window_s: float,
    *,
    threshold: float = 0.5,
    min_probability: float = 0.5,
    max_drop_db: float = 10.0,
    min_snr_db: float = 8.0,
) -> bool:
    """Whether some negation word of ``timings`` lies on the person's speech.

    Args:
        timings: the reading's words, timed (`word_timings`).
        probabilities: the VAD's speech probability per window.
        power: each window's mean power.
        window_s: the windows' length in seconds.
        threshold: probability above which a window is speech (the gate's).
        min_probability: the probability some window of the span must reach.
        max_drop_db: how far below the utterance's speech level the span may lie.
        min_snr_db: how far above the noise floor (the quietest tenth of the non-speech
            windows, not the gate's SNR noise estimate `_snr`) the span's loudest window
            must rise.

    Returns:
        True when a negation word passes both checks, or when the reading holds no timed
        negation word or the audio no speech window (nothing to judge by).
    """
    negations = [t for t in timings if set(tokens(t.word)) & NEGATION_WORDS]
    speech = probabilities > threshold
    if not negations or not speech.any() or len(probabilities) == 0:
        return True
    speech_level = 10.0 * math.log10(float(np.median(power[speech])) + 1e-12)
    floor_level = 10.0 * math.log10(quietest_tenth(power, speech) + 1e-12)
    for timing in negations:
        # the aligner's edges are rough (a first word starts at 0.0, leading silence
        # included): the span holds the person's speech when some window of it does
        first = max(0, min(len(power) - 1, int(timing.start / window_s) - 1))
        last = max(first + 1, min(len(power), math.ceil(timing.end / window_s) + 1))
        span_probability = float(np.max(probabilities[first:last]))
        span_level = 10.0 * math.log10(float(np.max(power[first:last])) + 1e-12)
        if (
            span_probability >= min_probability
            and span_level >= speech_level - max_drop_db
            and span_level >= floor_level + min_snr_db
        ):
            return True
    return False
