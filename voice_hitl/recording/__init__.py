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

The replays run calls on concrete providers or the demo's agents, so their code lives in
``voice_hitl.demo`` (above the library); this package presents their names and loads them on
first use, like every other name here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._public import lazy_attributes

if TYPE_CHECKING:
    from ..demo._recorded_call import RecordedCall
    from ..demo._replay import ReplayResult, replay_recording
    from ..demo._wire_replay import AgentFactory, CallReplay, replay
    from ._cassette import Divergence
    from ._format import FORMAT_VERSION, MANIFEST_SCHEMA, read_manifest, verify_files
    from ._manifest import (
        FORMAT,
        MANIFEST,
        Recording,
        RecordingError,
        read_recording,
        write_recording,
    )
    from ._recorder import CallRecorder
    from ._redact import Redaction
    from ._summary import summarise
    from ._volatile import VOLATILE_FIELDS

# Every name loads its module on first use: the ``voice-hitl`` command line reaches the
# recording's sub-commands without loading numpy, the recorder or the replays.
_LAZY: dict[str, str] = {
    "Divergence": "voice_hitl.recording._cassette",
    "FORMAT_VERSION": "voice_hitl.recording._format",
    "MANIFEST_SCHEMA": "voice_hitl.recording._format",
    "read_manifest": "voice_hitl.recording._format",
    "verify_files": "voice_hitl.recording._format",
    "FORMAT": "voice_hitl.recording._manifest",
    "MANIFEST": "voice_hitl.recording._manifest",
    "Recording": "voice_hitl.recording._manifest",
    "RecordingError": "voice_hitl.recording._manifest",
    "read_recording": "voice_hitl.recording._manifest",
    "write_recording": "voice_hitl.recording._manifest",
    "RecordedCall": "voice_hitl.demo._recorded_call",
    "CallRecorder": "voice_hitl.recording._recorder",
    "Redaction": "voice_hitl.recording._redact",
    "ReplayResult": "voice_hitl.demo._replay",
    "replay_recording": "voice_hitl.demo._replay",
    "VOLATILE_FIELDS": "voice_hitl.recording._volatile",
    "summarise": "voice_hitl.recording._summary",
    "AgentFactory": "voice_hitl.demo._wire_replay",
    "CallReplay": "voice_hitl.demo._wire_replay",
    "replay": "voice_hitl.demo._wire_replay",
}

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "MANIFEST_SCHEMA",
    "VOLATILE_FIELDS",
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

if not TYPE_CHECKING:  # mypy sees the imports above, not a catch-all __getattr__
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)
