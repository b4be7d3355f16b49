"""The pytest plugin (entry point ``pytest11``): the ``recorded_call`` fixture.

Loaded by every pytest run where voice-hitl is installed, so it imports nothing heavy until
a test uses the fixture.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ._replay import ReplayResult

__all__ = ["RecordedCall", "recorded_call"]


class RecordedCall:
    """Replays recorded calls for a test (see :func:`voice_hitl.recording.replay_recording`)."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self.results: list[ReplayResult] = []

    async def areplay(self, folder: str | Path, *, recognizer: str | None = None) -> ReplayResult:
        """Replay ``folder`` on the running loop and return the comparison."""
        from ._replay import replay_recording

        result = await replay_recording(folder, strict=self.strict, recognizer=recognizer)
        self.results.append(result)
        return result

    async def acheck(self, folder: str | Path, *, recognizer: str | None = None) -> ReplayResult:
        """Replay ``folder``; fail the test with the diff when it differs from the recording."""
        result = await self.areplay(folder, recognizer=recognizer)
        if not result.same:
            pytest.fail(result.report(), pytrace=False)
        return result

    def check(self, folder: str | Path, *, recognizer: str | None = None) -> ReplayResult:
        """:meth:`acheck` from a plain (not async) test."""
        return asyncio.run(self.acheck(folder, recognizer=recognizer))


@pytest.fixture
def recorded_call() -> RecordedCall:
    """Replay recorded calls and compare their requests with the recording."""
    return RecordedCall()
