"""Speech test settings.

Overrides the shared ``_no_leaked_tasks`` fixture with the same check, fixed for
pytest-asyncio >= 1.0: there an async fixture's teardown runs in a different task from its
setup, so the shared version counts the teardown task itself as leaked, cancels it and awaits
it (RecursionError, then a 60 s timeout). This version excludes the current task at teardown.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest


@pytest.fixture(autouse=True)
async def _no_leaked_tasks() -> AsyncIterator[None]:
    """Fail a test that leaves asyncio tasks running on its loop."""
    loop = asyncio.get_running_loop()
    loop.set_debug(True)
    before = set(asyncio.all_tasks())
    yield
    await asyncio.sleep(0)
    me = asyncio.current_task()
    leaked = [t for t in asyncio.all_tasks() if t is not me and t not in before and not t.done()]
    for task in leaked:
        task.cancel()
    if leaked:
        await asyncio.gather(*leaked, return_exceptions=True)
        names = ", ".join(repr(t.get_coro()) for t in leaked)
        pytest.fail(f"test leaked {len(leaked)} asyncio task(s): {names}")
