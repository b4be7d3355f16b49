"""Replaying a recorded call and comparing what it did with what it does now."""

from __future__ import annotations

import asyncio
import difflib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..journal import SqliteJournalStore
from ..recording._manifest import Recording, read_recording
from ..recording._summary import relaxed, summarise
from ._figures import machine_steps, within_tolerance

__all__ = ["ReplayResult", "replay_recording"]


def _lines(stories: list[dict[str, Any]]) -> list[str]:
    return json.dumps(stories, indent=2, sort_keys=True).splitlines()


@dataclass(frozen=True)
class ReplayResult:
    """The recorded stories beside the replayed ones."""

    recording: Recording
    expected: list[dict[str, Any]]
    actual: list[dict[str, Any]]

    kernels: str = ""
    """The kernels the replay's recogniser ran on (`NativeKernels.describe`)."""

    @property
    def same(self) -> bool:
        """True when the replay made and settled the same requests the same way (near-miss
        gaps within `GAP_TOLERANCE` of the recorded ones)."""
        return self.expected == within_tolerance(self.expected, self.actual)

    def machine_steps(self) -> list[str]:
        """The steps of a differing replay that depend on the machine (`_figures`)."""
        return [] if self.same else machine_steps(self.expected, self.actual)

    def diff(self) -> str:
        """A unified diff of the stories (``-`` recorded, ``+`` replayed); empty when same."""
        if self.same:
            return ""
        return "\n".join(
            difflib.unified_diff(
                _lines(self.expected),
                _lines(self.actual),
                fromfile=f"recorded ({self.recording.folder})",
                tofile="replayed",
                lineterm="",
            )
        )

    def report(self) -> str:
        """What a failing test prints: which call, how many requests, and the diff."""
        if self.same:
            return f"{self.recording.folder}: {len(self.actual)} requests, as recorded"
        steps = "".join(f"- {step}\n" for step in self.machine_steps())
        return (
            f"{self.recording.folder}: the replay differs from the recording "
            f"({len(self.expected)} requests recorded, {len(self.actual)} replayed; "
            f"Whisper ran on {self.kernels or 'unknown kernels'})\n"
            + steps
            + self.diff()
        )


def _recorded_stories(root: Path) -> list[dict[str, Any]]:
    """The stories the demo's CallRecorder kept of its one call (checked, complete)."""
    from ..recording._folder import load_call

    (folder,) = root.iterdir()
    return load_call(folder).stories


async def replay_recording(
    folder: str | Path, *, strict: bool = False, recognizer: str | None = None
) -> ReplayResult:
    """Play a recorded call's turns again through the embedded default and compare.

    The caller's turns go through a voice channel (``phone``) or a conference (``meeting``)
    on the local provider, with the demo's agent, the recogniser the call was recorded with
    (or ``recognizer``) and a fresh journal; the requests' stories are compared with the
    recorded ones (without the recogniser's confidence and exact transcript unless
    ``strict``; a near-miss gap within `GAP_TOLERANCE` nats of the recorded one is the same).
    Whisper runs on pinned kernels (`pin_native_kernels`); a differing replay's report says
    which of its steps depend on the machine.

    Raises:
        RecordingError: The folder is not a usable recording.
    """
    from ..journal import verify_chain
    from ..speech.asr._native import pin_native_kernels
    from ._demo import DEMO_JOURNAL_KEY, JOURNAL_FILE, run_demo

    recording = await asyncio.to_thread(read_recording, folder)
    with tempfile.TemporaryDirectory(prefix="voice-hitl-replay-") as scratch:
        out = Path(scratch)
        await run_demo(
            speed=0,
            out_dir=out,
            conference=recording.kind == "meeting",
            turns=recording.turns,
            timeout=recording.timeout,
            printing=False,
            recognizer=recognizer or recording.recognizer,
        )
        store = SqliteJournalStore(out / JOURNAL_FILE)
        try:
            entries = await asyncio.to_thread(store.read)
        finally:
            store.close()
        # the demo records itself through CallRecorder: read its stories back
        recorded = await asyncio.to_thread(_recorded_stories, out / "call")
    problems = verify_chain(entries, DEMO_JOURNAL_KEY)
    if problems:  # the replay's own journal: a broken chain is a bug, not a difference
        raise RuntimeError(f"the replay's journal does not verify: {problems[0]}")
    if recorded != summarise(entries, strict=True):
        raise RuntimeError("the demo's CallRecorder and its journal tell different stories")
    expected = recording.requests if strict else relaxed(recording.requests)
    kernels = pin_native_kernels().describe()
    return ReplayResult(recording, expected, summarise(entries, strict=strict), kernels)
