"""A crash mid-burst: what each durability loses, and what ``verify`` says about it.

A worker process answers requests as fast as it can (``--width`` calls in flight), journaled in
a SQLite file with ``fast`` or ``sync`` durability, and prints the id of every request whose
call has read its answer (an acknowledged request). After ``--seconds`` it is killed with
SIGKILL. Then: how many acknowledged requests have no ``settled`` entry (lost), and what
``voice-hitl journal verify`` says (exit code and its lines).

Run: ``python bench/bench_journal_crash.py [--seconds 2] [--width 64]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from voice_hitl import HumanInputHandler
from voice_hitl.journal import Journal, SqliteJournalStore

KEY = b"bench-crash-key"


async def burst(path: str, durability: str, width: int) -> None:
    """The worker: calls until killed, printing ``ack ID`` lines."""
    handler = HumanInputHandler(retention=0)
    journal = Journal.open(path, KEY, durability=durability)
    journal.attach(handler)
    acked: list[str] = []
    out = sys.stdout

    async def calls() -> None:
        while True:
            pending = await handler.create("ConfirmAction", {"action": "pay"}, timeout=60)
            handler.resolve(pending.pending_id, "yes", by="ann", via="api")
            await handler.wait(pending.pending_id, timeout=60)
            acked.append(pending.pending_id)
            if len(acked) >= 200:
                out.write("".join(f"ack {a}\n" for a in acked))
                out.flush()
                acked.clear()

    assert await asyncio.to_thread(journal.flush)  # schema and anchor in place
    print("ready", flush=True)
    async with asyncio.TaskGroup() as group:
        for _ in range(width):
            group.create_task(calls())


def crash(durability: str, seconds: float, width: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "j.sqlite3"
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(path), durability, str(width)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        acked: list[str] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                acked.append(line.split()[1])

        reader = threading.Thread(target=read)
        reader.start()
        start = time.perf_counter()
        time.sleep(seconds)
        proc.send_signal(signal.SIGKILL)
        took = time.perf_counter() - start
        proc.wait()
        reader.join()
        proc.stdout.close()
        store = SqliteJournalStore(path, read_only=True)
        settled = {e.request_id for e in store.iterate() if e.kind == "settled"}
        store.close()
        lost = len(set(acked) - settled)
        env = {**os.environ, "VOICE_HITL_JOURNAL_KEY": KEY.decode()}
        cli = "import sys; from voice_hitl._cli import main; sys.exit(main(sys.argv[1:]))"
        verify = subprocess.run(
            [sys.executable, "-c", cli, "journal", "verify", "--journal", str(path)],
            capture_output=True,
            text=True,
            env=env,
        )
        rate = len(acked) / took
        print(
            f"{durability:<5} {len(acked):7d} acknowledged in {took:.1f} s ({rate:,.0f}/s), "
            f"{len(settled):7d} settled entries stored, lost {lost}"
        )
        print(f"      verify exit {verify.returncode}:")
        for line in (verify.stderr + verify.stdout).strip().splitlines():
            print(f"        {line}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        asyncio.run(burst(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=2.0, help="burst length before SIGKILL")
    parser.add_argument("--width", type=int, default=64, help="calls in flight")
    args = parser.parse_args()
    for durability in ("fast", "sync"):
        crash(durability, args.seconds, args.width)


if __name__ == "__main__":
    main()
