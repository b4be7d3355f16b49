"""Spoken answers: turn what a caller said (or keyed) into a typed, trustworthy answer.

The core (this package and `voice_hitl.speech.dtmf`) needs only numpy. Recognisers live in
`voice_hitl.speech.asr` and need the ``speech`` extra (``whisper`` for `WhisperRecognizer`).

Result types: `understand` returns an `Answer`, a `MetaAnswer` (cancel / repeat / operator,
a separate type so it can never be mistaken for an answer) or a `NoMatch` with a reason.

Errors: `AnswerSpecError` (a ``ValueError``) for a bad spec or tool arguments.
"""

from __future__ import annotations

from .._public import publish
from ._answer import (
    Answer,
    AnswerValue,
    MetaAnswer,
    MetaIntent,
    NoMatch,
    NoMatchReason,
    Understood,
    Via,
)
from ._audio_quality import AudioQuality
from ._spec import AnswerKind, AnswerSpec, AnswerSpecError, Choice
from ._streaming import Pause, SpeechStart, StreamingEndpointer, Utterance
from ._typed import typed_answer
from ._understand import understand

__all__ = [
    "AudioQuality",
    "Pause",
    "SpeechStart",
    "StreamingEndpointer",
    "Utterance",
    "Answer",
    "AnswerKind",
    "AnswerSpec",
    "AnswerSpecError",
    "AnswerValue",
    "Choice",
    "MetaAnswer",
    "MetaIntent",
    "NoMatch",
    "NoMatchReason",
    "Understood",
    "Via",
    "typed_answer",
    "understand",
]

publish(__name__, globals(), __all__)
