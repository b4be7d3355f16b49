"""Keypad (DTMF) answers: detect tones in PCM16 audio and map keys to answers.

Needs only numpy. `DtmfDetector` finds keys in streamed audio, `generate_dtmf` makes test
tones, and `dtmf_to_answer` turns an entry into an `Answer`, `MetaAnswer` or `NoMatch`.
"""

from __future__ import annotations

from ..._public import publish
from ._detect import DtmfDetector
from ._keys import dtmf_entry_complete, dtmf_to_answer
from ._tones import COLUMN_FREQS, KEYS, ROW_FREQS, generate_dtmf, key_frequencies

__all__ = [
    "COLUMN_FREQS",
    "KEYS",
    "ROW_FREQS",
    "DtmfDetector",
    "dtmf_entry_complete",
    "dtmf_to_answer",
    "generate_dtmf",
    "key_frequencies",
]

publish(__name__, globals(), __all__)
