"""A WebRTC participant for the Janus tests: headless Chromium (Debian ``chromium``) through
Playwright, running Debian's ``janus.js`` (``libjs-janus-gateway``) with no seat.

The page is served at the Janus server's own origin (Playwright answers one path of it), so
``janus.js`` talks to the HTTP API same-origin. Its microphone is a WebAudio graph
(``webrtc_participant.js``): :meth:`WebRtcParticipant.say` plays PCM16 into it at real time.
Chromium's browser sends the RFC 6464 audio level with every packet, so AudioBridge reports
when it talks.

Without Playwright, Chromium or janus.js the tests skip, saying so, unless
``VOICE_HITL_REQUIRE_JANUS=1`` (``.ci/run``), which makes the skip a failure.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conference.janus import LocalJanus
from voice_hitl.voice._audio import resample_pcm16

__all__ = ["WebRtcParticipant", "need_webrtc"]

CHROMIUM = Path("/usr/bin/chromium")
JANUS_JS = Path("/usr/share/javascript/janus-gateway/janus.js")
PAGE_JS = Path(__file__).with_name("webrtc_participant.js")
FLAGS = ["--no-sandbox", "--autoplay-policy=no-user-gesture-required"]


def need_webrtc() -> None:
    """Skip (or fail under ``VOICE_HITL_REQUIRE_JANUS=1``) without the browser's parts."""
    missing = [str(p) for p in (CHROMIUM, JANUS_JS) if not p.exists()]
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package")
    if missing:
        reason = "a WebRTC participant needs " + ", ".join(missing)
        if os.environ.get("VOICE_HITL_REQUIRE_JANUS") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


class WebRtcParticipant:
    """One browser in the room, joined without a seat.

    Args:
        server: The Janus.
        room: The AudioBridge room id.
        display_name: The name the room shows.
    """

    def __init__(self, server: LocalJanus, room: int, display_name: str) -> None:
        self.server = server
        self.room = room
        self.display_name = display_name
        self.participant_id: str | None = None
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None

    async def join(self, timeout: float = 30.0) -> WebRtcParticipant:
        """Start the browser and join; returns once its WebRTC leg is up.

        Cancellation: safe; call :meth:`leave` to close what was opened.
        """
        from playwright.async_api import async_playwright

        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=FLAGS
        )
        page = self._page = await self._browser.new_page()
        origin = self.server.url.rsplit("/janus", 1)[0]
        await page.route(
            f"{origin}/meeting.html",
            lambda route: route.fulfill(content_type="text/html", body="<html></html>"),
        )
        await page.goto(f"{origin}/meeting.html")
        await page.add_script_tag(path=str(JANUS_JS))
        await page.add_script_tag(path=str(PAGE_JS))
        joined = page.evaluate(
            "([url, room, name]) => joinRoom(url, room, name)",
            [self.server.url, self.room, self.display_name],
        )
        self.participant_id = str(await asyncio.wait_for(joined, timeout))
        return self

    async def prepare(self, samples: np.ndarray, rate: int = 16_000) -> None:
        """Hand the page the next utterance (mono PCM16 at ``rate``), ahead of :meth:`play`
        (the transfer takes a while on a loaded machine).

        Cancellation: safe.
        """
        audio = resample_pcm16(samples, rate, 48_000)
        await self._page.evaluate("([s, r]) => prepare(s, r)", [audio.tolist(), 48_000])

    async def play(self, at: float | None = None) -> float:
        """Speak the prepared utterance into the microphone, from the wall-clock time ``at``
        (``time.time()``; browsers on one machine share it) or now; returns once it has
        played, with how many seconds late it started.

        Cancellation: safe; the audio plays on.
        """
        late = await self._page.evaluate("(t) => play(t)", None if at is None else at * 1000.0)
        return float(late)

    async def say(self, samples: np.ndarray, rate: int = 16_000, at: float | None = None) -> float:
        """:meth:`prepare` and :meth:`play`.

        Cancellation: safe; the audio plays on.
        """
        await self.prepare(samples, rate)
        return await self.play(at)

    async def leave(self) -> None:
        """Close the browser (its leg leaves the room). Idempotent.

        Cancellation: safe.
        """
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        try:
            if browser is not None:
                await browser.close()
        finally:
            if playwright is not None:
                await playwright.stop()
