"""A recorder killed mid-call (SIGKILL, a real subprocess): the frames already sent are on
disk within the writer's bound, and the recording reads as incomplete at that frame."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("soundfile", reason="recording caller audio needs soundfile")
pytest.importorskip("openai", reason="the openai extra (openai SDK types) is not installed")

from record_rig import Bank

from voice_hitl._cli import main
from voice_hitl.recording import RecordingError, replay
from voice_hitl.recording._writer import FLUSH_BOUND

CHILD = """
import asyncio, sys
from pathlib import Path
from record_rig import FAST, Bank
from providers.openai_realtime import OpenAIRealtimeProvider
from providers.openai_realtime_testing import RealtimeTestServer
from voice_hitl.recording import CallRecorder

async def main(root):
    async with RealtimeTestServer() as server:
        provider = OpenAIRealtimeProvider(api_key="sk-test", url=server.url, reconnect=FAST)
        seen = []
        provider.wire_taps.add(seen.append)
        recorder = CallRecorder(root)
        bank = Bank(provider)
        async with bank as voice:
            recorder.attach(voice)
            await voice.start_session("branch-7", "caller-1", session_id="killed")
            conn = await server.next_connection()
            await conn.expect("session.update")
            for account in ("checking", "savings", "loan"):
                call = await conn.function_call("get_balance", {"account": account})
                await conn.expect_function_call_output(call)
                await bank.reports.get()
            print(len(seen), recorder.folders[0], flush=True)
            await asyncio.Event().wait()  # the call goes on until the process is killed

asyncio.run(main(Path(sys.argv[1])))
"""


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_a_killed_recorder_leaves_a_recording_incomplete_at_its_last_frame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root.parent), str(root)])}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        report = child.stdout.readline() if child.stdout else ""  # the child's event
        assert report, child.stderr.read() if child.stderr else "the child said nothing"
        sent, folder_name = report.split()
        folder = Path(folder_name)
        # The frames reach the file within FLUSH_BOUND; polled with a generous deadline
        # (a loaded machine may not run the writer thread at once).
        deadline = time.monotonic() + max(30.0, 100 * FLUSH_BOUND)
        while _lines(folder / "wire.jsonl") < int(sent):
            assert time.monotonic() < deadline, f"{sent} frames were never written"
            time.sleep(0.01)
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    frames = _lines(folder / "wire.jsonl")
    assert frames >= int(sent) >= 12  # session.update, 3 tool calls both ways...
    assert main(["recording", "verify", str(folder)]) == 1
    err = capsys.readouterr().err
    assert f"incomplete at frame {frames} of wire.jsonl (t=" in err
    assert "the call was still being recorded (its process stopped first?)" in err
    assert main(["recording", "show", str(folder)]) == 0
    assert f"NOT COMPLETE: incomplete at frame {frames} of wire.jsonl" in capsys.readouterr().out
    with pytest.raises(RecordingError, match=f"incomplete at frame {frames} of wire.jsonl"):
        asyncio.run(replay(folder, agent=Bank))
    last = json.loads((folder / "wire.jsonl").read_text().splitlines()[-1])
    assert last["dir"] in ("in", "out")  # whole lines: the flush never splits one

    with (folder / "wire.jsonl").open("a") as wire:  # a line cut off mid-write
        wire.write('{"t": 9.5, "dir": "in", "co')
    assert main(["recording", "verify", str(folder)]) == 1
    err = capsys.readouterr().err
    assert f"incomplete at frame {frames} of wire.jsonl" in err
    assert f"line {frames + 1} was cut off mid-write" in err
