"""Whisper with its passes scripted: `hear_sync`'s rules on given readings, no model."""

from __future__ import annotations

from typing import Any

import numpy as np

from voice_hitl.speech import AnswerSpec
from voice_hitl.speech.asr import WhisperRecognizer


def scripted_hearing(
    rec: WhisperRecognizer,
    spec: AnswerSpec,
    prompted: str,
    unprompted: str,
    third: str | None = None,
) -> list[str]:
    """`hear_sync` on 2 s of silence with every pass scripted: ``prompted`` for the passes with
    hotwords, ``unprompted`` for the pass without, ``third`` (default: ``prompted``) for the
    pass prompted with given words. No encoder, so no near-miss scoring and no audio rule.
    Returns the texts `understand` would be given."""

    def decode(encoded: Any, spec: Any, *, hotwords: bool, words: str | None = None) -> Any:
        if words is not None and third is not None:
            return third, -0.1
        return (prompted if hotwords else unprompted), -0.1

    rec.encode_sync = lambda pcm16, rate: None  # type: ignore[method-assign,assignment]
    rec.decode_sync = decode  # type: ignore[method-assign]
    hearing = rec.hear_sync(np.zeros(32000, dtype=np.int16), 16000, spec)
    return [h.text for h in hearing.hypotheses]
