"""Recorded calls as regression tests.

Every ``voice-hitl demo --out DIR`` folder is a recording: the caller's turns, the audio of
both sides, the journal, and ``call.json`` with the stories of the requests the call made.
:func:`replay_recording` plays the turns again through a channel on the local provider and
compares the stories; the pytest plugin's ``recorded_call`` fixture fails a test with a
readable diff when they differ::

    def test_transfer_call(recorded_call):
        recorded_call.check("audio_fixtures/recordings/phone_call")
"""

from __future__ import annotations

from .._public import publish
from ._manifest import FORMAT, MANIFEST, Recording, RecordingError, read_recording, write_recording
from ._replay import ReplayResult, replay_recording
from ._summary import VOLATILE_KEYS, summarise

__all__ = [
    "FORMAT",
    "MANIFEST",
    "VOLATILE_KEYS",
    "Recording",
    "RecordingError",
    "ReplayResult",
    "read_recording",
    "replay_recording",
    "summarise",
    "write_recording",
]

publish(__name__, globals(), __all__)
