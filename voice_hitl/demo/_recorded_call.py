"""``RecordedCall``: recorded calls replayed for a test (the ``recorded_call`` fixture's object).

It imports no pytest until a replay differs, so ``voice_hitl.recording`` (and the
``voice-hitl`` command) work where pytest is not installed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._replay import ReplayResult
    from ._wire_replay import AgentFactory, CallReplay

__all__ = ["RecordedCall"]


class RecordedCall:
    """Replays recorded calls for a test and fails it with the first divergence and a diff.

    A folder recorded by :class:`~voice_hitl.recording.CallRecorder` replays against
    ``agent`` (``factory(provider) -> channel``, see :func:`~voice_hitl.recording.replay`);
    a demo recording (format version 1, ``call.json``) replays through the demo's agents.

    Args:
        strict: Also compare the recogniser's figures (confidence, exact transcript).
        agent: The user's agent factory.
        patience: Seconds a wire replay waits for each client frame the recording expects.
    """

    def __init__(
        self, *, strict: bool = False, agent: AgentFactory | None = None, patience: float = 5.0
    ) -> None:
        self.strict = strict
        self.agent = agent
        self.patience = patience
        self.results: list[Any] = []

    async def areplay(
        self, folder: str | Path, *, recognizer: str | None = None
    ) -> CallReplay | ReplayResult:
        """Replay ``folder`` on the running loop and return the comparison.

        Raises:
            RecordingError: The folder is not a usable recording.
            ValueError: A recorded call needs ``agent`` and none was given.

        Cancellation: safe; the replay's agent and test server are closed.
        """
        from ..recording._format import MANIFEST_FILE

        result: CallReplay | ReplayResult
        if (Path(folder) / MANIFEST_FILE).exists():
            if self.agent is None:
                raise ValueError(
                    f"{folder} replays against your agent: RecordedCall(agent=factory) or "
                    "recorded_call.agent = factory"
                )
            from ._wire_replay import replay

            result = await replay(
                folder, agent=self.agent, strict=self.strict, patience=self.patience
            )
        else:
            from ._replay import replay_recording

            result = await replay_recording(folder, strict=self.strict, recognizer=recognizer)
        self.results.append(result)
        return result

    async def acheck(
        self, folder: str | Path, *, recognizer: str | None = None
    ) -> CallReplay | ReplayResult:
        """Replay ``folder``; fail the test with the report when it differs from the recording.

        Cancellation: safe (see :meth:`areplay`).
        """
        result = await self.areplay(folder, recognizer=recognizer)
        if not result.same:
            import pytest  # only inside a test: the library itself does not need pytest

            pytest.fail(result.report(), pytrace=False)
        return result

    def check(
        self, folder: str | Path, *, recognizer: str | None = None
    ) -> CallReplay | ReplayResult:
        """:meth:`acheck` from a plain (not async) test."""
        return asyncio.run(self.acheck(folder, recognizer=recognizer))
