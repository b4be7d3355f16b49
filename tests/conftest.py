"""Shared test settings: asyncio debug mode and a check that no test leaks tasks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis_rig import (  # noqa: F401  (fixtures for every test module)
    redis_cluster_url,
    redis_prefix,
    redis_sentinel_url,
    redis_url,
)


@pytest.fixture(autouse=True)
async def _no_leaked_tasks() -> AsyncIterator[None]:
    """Fail a test that leaves asyncio tasks running on its loop."""
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    me = asyncio.current_task()
    before = {t for t in asyncio.all_tasks() if t is not me}
    yield
    # Give tasks that are already finishing one loop turn to complete.
    await asyncio.sleep(0)
    now = asyncio.current_task()
    leaked = [
        t
        for t in asyncio.all_tasks()
        if t is not me and t is not now and t not in before and not t.done()
    ]
    for task in leaked:
        task.cancel()
    if leaked:
        await asyncio.gather(*leaked, return_exceptions=True)
        names = ", ".join(repr(t.get_coro()) for t in leaked)
        pytest.fail(f"test leaked {len(leaked)} asyncio task(s): {names}")
