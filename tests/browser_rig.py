"""Chromium from Debian driven by Playwright's Python package (no browser download)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest

__all__ = ["CHROMIUM", "chromium_browser", "chromium_page"]

CHROMIUM = "/usr/bin/chromium"
_HAVE_CHROMIUM = os.path.exists(CHROMIUM)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("VOICE_HITL_REQUIRE_BROWSER") == "1":
        pytest.fail(f"a browser is required here (VOICE_HITL_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(f"no browser: {reason}")


@contextlib.asynccontextmanager
async def chromium_page(width: int = 1100, height: int = 900) -> AsyncIterator[Any]:
    """A page in headless Chromium; skips (or fails under VOICE_HITL_REQUIRE_BROWSER=1) when
    /usr/bin/chromium or the playwright package is missing."""
    if not _HAVE_CHROMIUM:
        _unavailable(f"{CHROMIUM} is missing (Debian package chromium)")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": width, "height": height})
            yield page
        finally:
            await browser.close()


@contextlib.asynccontextmanager
async def chromium_browser() -> AsyncIterator[Any]:
    """Headless Chromium for tests that need several contexts (permissions, storage); skips
    like :func:`chromium_page`."""
    if not _HAVE_CHROMIUM:
        _unavailable(f"{CHROMIUM} is missing (Debian package chromium)")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()
