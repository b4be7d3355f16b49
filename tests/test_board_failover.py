"""A Sentinel failover under load keeps "taken means taken" (issue 47).

A master, a replica and three sentinels; two workers and the operator service on the board
with ``min_replicas=1``, the workers journaling on the same Redis. The master is SIGKILLed
while answers are in flight; the sentinels promote the replica; the killed master comes back
as a replica. Careful clients retry 503 / 504 with their ``Idempotency-Key``. Then: no answer
lost, none applied twice, no request the workers settled shown open, no "not taken" said of an
answer the call had, and no journal entry missing without a gap entry.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections import Counter

import httpx
import pytest
from redis_rig import SentinelGroup, _unavailable, start_sentinel_group
from service_rig import ANN, TOKENS, answer_until_final, ask_colour, operator_client

from voice_hitl import HumanInputHandler
from voice_hitl.board import BoardBridge, BoardStatus, RedisBoard
from voice_hitl.journal import Journal, RedisJournalStore, verify_chain
from voice_hitl.service import create_app

pytest.importorskip("redis", reason="the Redis board needs the 'redis' extra")
pytestmark = [
    pytest.mark.timeout(90),
    # A connection redis-py (8.2) dropped when the master was SIGKILLed may reach the garbage
    # collector with its stream open (asyncio's StreamWriter.__del__, the socket's, redis'
    # own Connection.__del__, or a transport closed but not yet let go: one in ~3 runs here).
    # Exactly those are ignored, and only in this test, which collects its garbage before it
    # ends: the warning can never land in a later test.
    pytest.mark.filterwarnings("ignore:unclosed <StreamWriter:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:unclosed transport <_Selector:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:unclosed Connection:ResourceWarning"),
]

KEY = b"failover-journal-key"
REQUESTS = 24


def _group() -> SentinelGroup:
    try:
        return start_sentinel_group(for_failover=True)
    except (FileNotFoundError, TimeoutError, RuntimeError) as exc:
        _unavailable(f"no Sentinel group: {exc}")
        raise


async def test_a_master_killed_under_load_loses_nothing_and_says_nothing_false() -> None:
    group = await asyncio.to_thread(_group)
    url, prefix = group.url, "failover:"
    boards = [
        RedisBoard(url, prefix=prefix, timeout=1.0, min_replicas=1, replica_timeout=0.5)
        for _ in range(3)
    ]
    service_board = boards[2]
    app = create_app(service_board, TOKENS, ack_timeout=1.0)
    journal = Journal.on_redis(url, KEY, prefix="failover-journal", retry_interval=0.05)
    handlers = [HumanInputHandler(), HumanInputHandler()]
    for handler in handlers:
        journal.attach(handler)
    false_not_taken: list[str] = []
    try:
        async with (
            BoardBridge(handlers[0], boards[0], heartbeat=2.0, reconnect_delay=0.05) as w0,
            BoardBridge(handlers[1], boards[1], heartbeat=2.0, reconnect_delay=0.05) as w1,
            operator_client(app, ANN) as ann,
        ):
            bridges = [w0, w1]
            ids = [await ask_colour(bridges[n % 2]) for n in range(REQUESTS)]
            owner = {rid: handlers[n % 2] for n, rid in enumerate(ids)}
            calls = {rid: asyncio.create_task(owner[rid].wait(rid)) for rid in ids}
            seen: dict[str, list[tuple[int, str]]] = {rid: [] for rid in ids}

            async def answer(rid: str) -> int:
                def check(response: httpx.Response) -> None:
                    # "not taken: nothing was delivered" while the call has the answer
                    body = response.json() if response.status_code == 503 else {}
                    taken = owner[rid].get(rid)
                    if body.get("error", {}).get("code") == "not_taken" and (
                        taken is None or taken.status != "pending"
                    ):
                        false_not_taken.append(rid)

                response = await answer_until_final(ann, rid, f"key-{rid}", seen[rid], check=check)
                return response.status_code

            before = await asyncio.gather(*(answer(rid) for rid in ids[: REQUESTS // 2]))
            in_flight = [asyncio.create_task(answer(rid)) for rid in ids[REQUESTS // 2 :]]
            old = group.master.port
            await asyncio.to_thread(group.master.kill)  # SIGKILL, answers in flight
            new = await asyncio.to_thread(group.wait_for_switch, old)
            await asyncio.to_thread(group.master.restart)  # back, as the new master's replica
            await asyncio.to_thread(group.wait_for_replica, new)
            after = await asyncio.gather(*in_flight)
            for bridge in bridges:
                await bridge.wait_connected()
                await bridge.drain()
            finished = await asyncio.wait_for(asyncio.gather(*calls.values()), 10)

            # no answer lost, none applied twice: every call has its one answer
            assert before + after == [200] * REQUESTS, seen
            results = finished  # every call ended with its one answer
            assert [json.loads(r)["answer"] for r in results] == ["red"] * REQUESTS
            assert sum(bridge.delivered for bridge in bridges) == REQUESTS
            # no request a worker settled reads open
            records = [await service_board.get(rid) for rid in ids]
            assert all(r is not None and r.status is BoardStatus.ANSWERED for r in records)
            assert not await service_board.open_requests()
            for handler in handlers:
                await handler.close()
        await asyncio.to_thread(journal.close)
        reader = RedisJournalStore(url, prefix="failover-journal", read_only=True)
        try:
            entries = await asyncio.to_thread(reader.read)
        finally:
            reader.close()
    finally:
        for board in boards:
            await board.aclose()
        await asyncio.to_thread(group.stop)
        gc.collect()  # under this test's filters (see pytestmark), never in a later test
    # no "nothing was delivered" said of an answer the call had
    assert false_not_taken == []
    # the journal: one chain; every answer's settle is in it, or a gap entry says entries are
    # missing (a failover lost what the replica had not received)
    assert verify_chain(entries, KEY) == []
    gaps = [e for e in entries if e.kind == "gap"]
    settled = Counter(e.request_id for e in entries if e.kind == "settled")
    missing = [rid for rid in ids if settled[rid] != 1]
    assert not missing or gaps, (missing, journal.stats)
    assert journal.stats.dropped == 0
