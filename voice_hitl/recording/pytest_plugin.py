"""The pytest plugin (entry point ``pytest11``): the ``recorded_call`` fixture.

Loaded by every pytest run where voice-hitl is installed, so it imports nothing heavy until
a test uses the fixture.
"""

from __future__ import annotations

import pytest

from ..demo._recorded_call import RecordedCall

__all__ = ["RecordedCall", "recorded_call"]


@pytest.fixture
def recorded_call() -> RecordedCall:
    """Replay recorded calls and compare them with the recording (set ``.agent`` for calls
    recorded from your own agent)."""
    return RecordedCall()
