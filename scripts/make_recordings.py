"""Record the demo calls as regression recordings in audio_fixtures/recordings.

Runs the phone call and the meeting on the embedded default and keeps each call's
``call.json`` with its turns, as FLAC inside the folder: every recording is self-contained.
Run it again when the agent's behaviour changes on purpose, and review the diff of the
call.json files.

    python scripts/make_recordings.py
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from voice_hitl.demo._demo import FIXTURES, MEETING, PHONE_CALL, load_turns, run_demo
from voice_hitl.recording import MANIFEST

OUT = FIXTURES.parent / "recordings"
CALLS = {"phone_call": (PHONE_CALL, False), "meeting": (MEETING, True)}


async def record(name: str) -> Path:
    script, conference = CALLS[name]
    turns = await asyncio.to_thread(load_turns, script)
    folder = OUT / name
    with tempfile.TemporaryDirectory() as scratch:
        await run_demo(
            speed=0, out_dir=Path(scratch), conference=conference, turns=turns, printing=False
        )
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        shutil.copyfile(Path(scratch) / MANIFEST, folder / MANIFEST)
        shutil.copytree(Path(scratch) / "turns", folder / "turns")
    return folder / MANIFEST


async def main() -> None:
    for name in CALLS:
        print("wrote", await record(name))


if __name__ == "__main__":
    asyncio.run(main())
