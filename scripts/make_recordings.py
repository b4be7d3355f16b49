"""Record the demo calls as regression recordings in audio_fixtures/recordings.

Runs the phone call and the meeting on the embedded default, then keeps each call's
``call.json`` with its turns pointing at the committed demo audio (no copies). Run it again
when the agent's behaviour changes on purpose, and review the diff of the call.json files.

    python scripts/make_recordings.py
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

from voice_hitl._demo import FIXTURES, MEETING, PHONE_CALL, load_turns, run_demo
from voice_hitl.recording import MANIFEST

OUT = FIXTURES.parent / "recordings"
CALLS = {"phone_call": (PHONE_CALL, False), "meeting": (MEETING, True)}


def _relative(target: Path, folder: Path) -> str:
    return os.path.relpath(target, folder)


async def record(name: str) -> Path:
    script, conference = CALLS[name]
    turns = await asyncio.to_thread(load_turns, script)
    with tempfile.TemporaryDirectory() as scratch:
        await run_demo(
            speed=0, out_dir=Path(scratch), conference=conference, turns=turns, printing=False
        )
        manifest = json.loads((Path(scratch) / MANIFEST).read_text())
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    for turn, (_, file_name, _) in zip(manifest["turns"], script, strict=True):
        turn["file"] = _relative(FIXTURES / file_name, folder)
    path = folder / MANIFEST
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


async def main() -> None:
    for name in CALLS:
        print("wrote", await record(name))


if __name__ == "__main__":
    asyncio.run(main())
