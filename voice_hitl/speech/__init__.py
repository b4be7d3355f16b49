"""Spoken answers: turn what a caller said (or keyed) into a typed, trustworthy answer.

The core (this package and `voice_hitl.speech.dtmf`) needs only numpy. Recognisers live in
`voice_hitl.speech.asr` and need the ``speech`` extra (``whisper`` for `WhisperRecognizer`).

Result types: `understand` returns an `Answer`, a `MetaAnswer` (cancel / repeat / operator,
a separate type so it can never be mistaken for an answer) or a `NoMatch` with a reason.

Errors: `AnswerSpecError` (a ``ValueError``) for a bad spec or tool arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._public import lazy_attributes, publish
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
from ._typed import typed_answer
from ._understand import understand

if TYPE_CHECKING:
    from ._streaming import Pause, SpeechStart, StreamingEndpointer, Utterance

# The streaming endpointer works on audio (numpy): it loads on first use, so understanding
# text (``understand``, ``typed_answer``) does not load numpy.
_LAZY: dict[str, str] = {
    "Pause": "voice_hitl.speech._streaming",
    "SpeechStart": "voice_hitl.speech._streaming",
    "StreamingEndpointer": "voice_hitl.speech._streaming",
    "Utterance": "voice_hitl.speech._streaming",
}

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

if not TYPE_CHECKING:  # mypy sees the imports above, not a catch-all __getattr__
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)

publish(__name__, globals(), [name for name in __all__ if name not in _LAZY])
