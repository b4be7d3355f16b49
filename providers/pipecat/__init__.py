"""Pipecat pipelines (extra ``pipecat``: ``pip install 'voice-hitl[pipecat]'``).

:func:`human_input_functions` registers the human-input tools on a Pipecat LLM service, so
its function calls ask a person through the same gate as every other door and are withdrawn
when the pipeline is interrupted, ends or is cancelled::

    human_tools = human_input_functions(llm, human, kit=kit, room_id=call_sid)
    context = LLMContext(messages, tools=human_tools.tools)

:class:`PipecatLine` (after the STT service) lets a ``VoiceResponder`` ask the questions aloud
with the pipeline's own TTS and hear the answers from its STT and keypad frames.
"""

from __future__ import annotations

import warnings

with warnings.catch_warnings():
    # Pipecat imports the standard library's audioop, deprecated on Python 3.11 and 3.12.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import pipecat.audio.utils  # noqa: F401

from voice_hitl._public import publish

from ._functions import (
    CALL_INTERRUPTED,
    PIPELINE_CANCELLED,
    PIPELINE_ENDED,
    PipecatHumanInput,
    human_input_functions,
)
from ._line import PipecatLine

__all__ = [
    "CALL_INTERRUPTED",
    "PIPELINE_CANCELLED",
    "PIPELINE_ENDED",
    "PipecatHumanInput",
    "PipecatLine",
    "human_input_functions",
]

publish(__name__, globals(), __all__)
