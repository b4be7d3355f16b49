"""Recorded calls as regression tests.

Record any call of your own agent with :class:`CallRecorder` (one self-contained folder a
call: manifest, provider frames both ways, caller audio, the requests' stories) and replay it
offline against your own code with :func:`replay` (``agent=factory``) or the pytest plugin's
``recorded_call`` fixture (``RecordedCall(agent=factory, strict=...)``).

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
from ._cassette import Divergence
from ._format import FORMAT_VERSION, MANIFEST_SCHEMA, read_manifest, verify_files
from ._manifest import FORMAT, MANIFEST, Recording, RecordingError, read_recording, write_recording
from ._recorded_call import RecordedCall
from ._recorder import CallRecorder
from ._redact import Redaction
from ._replay import ReplayResult, replay_recording
from ._summary import VOLATILE_KEYS, summarise
from ._wire_replay import AgentFactory, CallReplay, replay

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "MANIFEST_SCHEMA",
    "VOLATILE_KEYS",
    "AgentFactory",
    "CallRecorder",
    "CallReplay",
    "Divergence",
    "RecordedCall",
    "Recording",
    "RecordingError",
    "Redaction",
    "ReplayResult",
    "read_manifest",
    "read_recording",
    "replay",
    "replay_recording",
    "summarise",
    "verify_files",
    "write_recording",
]

publish(__name__, globals(), __all__)
