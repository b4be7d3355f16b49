"""Shared test settings: asyncio debug mode, a check that no test leaks tasks, and one that no
Redis-using test leaves a socket for the garbage collector."""

from __future__ import annotations

import asyncio
import gc
import sys
import warnings
from collections.abc import AsyncIterator, Iterator

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


_REDIS_MODULES = ("test_board", "test_journal", "test_redis")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """Fail a test of the Redis-using modules that leaves a socket (or stream) unclosed.

    Garbage is collected once every fixture is torn down and the test's event loop is closed
    (a transport still closing then is let go), so an unclosed client is named in the test
    that made it, never in whichever later test the collector happens to run in.
    """
    result = yield
    module = getattr(item, "module", None)
    if module is None or not module.__name__.startswith(_REDIS_MODULES):
        return result
    leaked: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: leaked.append(
        f"{unraisable.exc_value} (in {unraisable.object!r})"
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            gc.collect()
    finally:
        sys.unraisablehook = hook
    if leaked:
        pytest.fail(f"test left {len(leaked)} unclosed resource(s): " + "; ".join(leaked))
    return result
