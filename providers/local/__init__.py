"""The embedded default: an offline realtime provider (endpointing, a local recogniser, a
local synthesiser) for demos, tests and air-gapped deployments. Needs the ``speech`` extra."""

from __future__ import annotations

from voice_hitl._public import publish
from voice_hitl.speech import Pause, SpeechStart, StreamingEndpointer, Utterance

from ._provider import LocalCascadeProvider
from ._session import LocalCascadeSession
from ._synth import EspeakSynthesizer, PiperSynthesizer, Synthesizer, default_synthesizer

__all__ = [
    "StreamingEndpointer",
    "EspeakSynthesizer",
    "LocalCascadeProvider",
    "LocalCascadeSession",
    "Pause",
    "PiperSynthesizer",
    "SpeechStart",
    "Synthesizer",
    "Utterance",
    "default_synthesizer",
]

publish(__name__, globals(), __all__)
