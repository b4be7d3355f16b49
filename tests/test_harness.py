"""The test harness itself: the leak check must fail a test that leaves a task running."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def test_leak_fixture_fails_a_leaking_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(
        """
        import asyncio

        async def test_leaks():
            asyncio.get_running_loop().create_task(asyncio.Event().wait())

        async def test_clean():
            task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
            await task
        """
    )
    result = pytester.runpytest_inprocess(
        "-p",
        "asyncio",
        "-o",
        "asyncio_mode=auto",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
    )
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*test leaked 1 asyncio task*"])
