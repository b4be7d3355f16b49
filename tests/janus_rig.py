"""A throwaway Janus for the tests that need a real AudioBridge.

:func:`start_janus` writes a configuration folder of its own (HTTP transport only, on a free
loopback port; the admin API off; only the AudioBridge plugin; its RTP on 127.0.0.1 in a port
range of its own; ICE gathering on the loopback interface only), starts ``janus`` on it and waits
until the HTTP API answers. :meth:`JanusServer.stop` and :meth:`JanusServer.kill` end that
process by its PID. Every room a test creates carries :attr:`JanusServer.room_secret`.

When ``janus`` is not installed the tests skip, saying so, unless ``VOICE_HITL_REQUIRE_JANUS=1``
(set by ``.ci/run``), which turns the skip into a failure.

Use it from a test module with ``from janus_rig import janus  # noqa: F401``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from redis_rig import free_port

from conference.janus import JanusSession, RtpSender, audio_level, parse_rtp, read_events
from conference.janus._media import open_udp
from conference.janus._wire import OwnJoin, room_join
from providers.twilio import mulaw_to_pcm16
from voice_hitl._audio import resample_pcm16

__all__ = ["JanusServer", "ScriptedParticipant", "janus", "janus_binary", "start_janus"]

PLUGINS = "/usr/lib/x86_64-linux-gnu/janus"
_UNWANTED_PLUGINS = (
    "libjanus_echotest.so,libjanus_videoroom.so,libjanus_streaming.so,libjanus_sip.so,"
    "libjanus_nosip.so,libjanus_recordplay.so,libjanus_textroom.so,libjanus_videocall.so,"
    "libjanus_voicemail.so,libjanus_duktape.so,libjanus_lua.so"
)
_UNWANTED_TRANSPORTS = (
    "libjanus_websockets.so,libjanus_pfunix.so,libjanus_mqtt.so,libjanus_nanomsg.so,"
    "libjanus_rabbitmq.so"
)


def janus_binary() -> str | None:
    """The ``janus`` executable, or None when it is not installed."""
    return shutil.which("janus") or (
        "/usr/bin/janus" if os.access("/usr/bin/janus", os.X_OK) else None
    )


def _plugins_folder() -> Path:
    for candidate in (Path(PLUGINS), Path("/usr/lib/janus"), Path("/usr/local/lib/janus")):
        if (candidate / "plugins" / "libjanus_audiobridge.so").exists():
            return candidate
    raise FileNotFoundError("the Janus AudioBridge plugin (libjanus_audiobridge.so) is missing")


@dataclass
class JanusServer:
    """A ``janus`` process this test run started (and must stop)."""

    http_port: int
    rtp_ports: tuple[int, int]
    room_secret: str
    folder: Path
    process: subprocess.Popen[bytes] | None = None
    args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The Janus HTTP API root."""
        return f"http://127.0.0.1:{self.http_port}/janus"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def log(self) -> str:
        """What Janus logged so far."""
        path = self.folder / "janus.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self) -> None:
        """Kill the server at once by its PID (a crash). Idempotent."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """Stop the server by its PID and wait for it (idempotent)."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


def _write_config(server: JanusServer, plugins: Path) -> None:
    low, high = server.rtp_ports
    folder = server.folder
    (folder / "janus.jcfg").write_text(
        f"""general: {{
    configs_folder = "{folder}"
    plugins_folder = "{plugins}/plugins"
    transports_folder = "{plugins}/transports"
    events_folder = "{plugins}/events"
    loggers_folder = "{plugins}/loggers"
    debug_level = 4
    session_timeout = 60
    protected_folders = ["/bin", "/boot", "/dev", "/etc", "/lib", "/proc", "/sbin", "/sys"]
}}
media: {{
    rtp_port_range = "{low}-{high}"
}}
nat: {{
    ice_enforce_list = "lo"
    ignore_mdns = true
}}
plugins: {{
    disable = "{_UNWANTED_PLUGINS}"
}}
transports: {{
    disable = "{_UNWANTED_TRANSPORTS}"
}}
events: {{
    broadcast = false
}}
"""
    )
    (folder / "janus.transport.http.jcfg").write_text(
        f"""general: {{
    json = "plain"
    base_path = "/janus"
    http = true
    ip = "127.0.0.1"
    port = {server.http_port}
    https = false
}}
admin: {{
    admin_http = false
    admin_https = false
}}
"""
    )
    (folder / "janus.plugin.audiobridge.jcfg").write_text(
        f"""general: {{
    rtp_port_range = "{low}-{high}"
    local_ip = "127.0.0.1"
    events = false
}}
"""
    )


def start_janus(timeout: float = 15.0) -> JanusServer:
    """Start a throwaway Janus on loopback and wait until its HTTP API answers.

    Raises:
        FileNotFoundError: ``janus`` or its AudioBridge plugin is not installed.
        RuntimeError: It exited or did not answer within ``timeout`` seconds (its log attached).
    """
    binary = janus_binary()
    if binary is None:
        raise FileNotFoundError("janus is not installed (Debian package janus)")
    plugins = _plugins_folder()
    low = random.randrange(20_000, 59_000, 2)
    server = JanusServer(
        http_port=free_port(),
        rtp_ports=(low, low + 400),
        room_secret=secrets.token_urlsafe(12),
        folder=Path(tempfile.mkdtemp(prefix="voice-hitl-janus-")),
    )
    _write_config(server, plugins)
    server.args = [
        binary,
        "-F", str(server.folder),
        "-C", str(server.folder / "janus.jcfg"),
        "-N", "-L", str(server.folder / "janus.log"),
        "-o",
    ]  # fmt: skip
    server.process = subprocess.Popen(
        server.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            log = server.log
            shutil.rmtree(server.folder, ignore_errors=True)
            raise RuntimeError(f"janus exited with {server.process.returncode}:\n{log[-4000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/info", timeout=1) as reply:
                info = json.loads(reply.read())
            if "janus.plugin.audiobridge" in info.get("plugins", {}):
                return server
            server.stop()
            raise RuntimeError(f"janus started without the AudioBridge plugin:\n{server.log}")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"janus did not answer within {timeout} s:\n{server.log[-4000:]}")
        time.sleep(0.05)  # a process starting: nothing to wait on but its port


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("VOICE_HITL_REQUIRE_JANUS") == "1":
        pytest.fail(f"Janus is required here (VOICE_HITL_REQUIRE_JANUS=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture
def janus() -> Iterator[JanusServer]:
    """A Janus of this test's own, stopped by its PID afterwards."""
    if janus_binary() is None:
        _skip_or_fail("janus is not installed (apt-get install janus)")
    try:
        server = start_janus()
    except FileNotFoundError as exc:
        _skip_or_fail(str(exc))
        raise
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


class ScriptedParticipant:
    """A plain-RTP participant for tests: joins under a name, speaks PCM16 at real time with
    the RFC 6464 audio-level extension (as browsers send it), hears the room, leaves on cue.

    Between utterances it sends silence (level 127), as a browser with an open microphone
    does. ``heard`` keeps the room mix it received (8 kHz PCM16 per packet).
    """

    def __init__(self, url: str, room: int, display: str, seat: Any = None) -> None:
        self.url = url
        self.room = room
        self.display = display
        self.seat = seat
        self.heard: list[Any] = []
        self.messages: list[Mapping[str, Any]] = []
        self._queue: deque[Any] = deque()
        self._spoken: asyncio.Event = asyncio.Event()
        self._heard_more: asyncio.Event = asyncio.Event()
        self._session: Any = None
        self._handle = 0
        self._socket: asyncio.DatagramTransport | None = None
        self._task: asyncio.Task[None] | None = None
        self.participant_id: str | None = None
        self.sent_speech = 0
        self.sent: list[tuple[float, int]] = []
        """(send time, RFC 6464 level) of each packet of speech sent."""

    async def join(self) -> ScriptedParticipant:

        self._sender = RtpSender(level_id=1)
        self._session = JanusSession(
            self.url, on_message=self.messages.append, on_lost=lambda reason: None
        )
        await self._session.open()
        self._handle = await self._session.attach()

        def heard(data: bytes) -> None:
            self.heard.append(mulaw_to_pcm16(parse_rtp(data).payload))
            self._heard_more.set()

        self._socket = await open_udp(heard)
        port = int(self._socket.get_extra_info("sockname")[1])
        reply = await self._session.call_async(
            self._handle,
            room_join(
                self.room,
                self.display,
                rtp_port=port,
                participant_id=None if self.seat is None else self.seat.participant_id,
                group=None if self.seat is None else self.seat.group,
                audiolevel_ext=1,
            ),
        )
        own = [e for e in read_events(reply) if isinstance(e, OwnJoin)]
        assert own, f"{self.display} could not join: {reply}"
        self.participant_id = own[0].participant_id
        self._task = asyncio.create_task(self._pace((own[0].rtp_host, own[0].rtp_port)))
        return self

    async def _pace(self, remote: tuple[str, int]) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        silence = np.zeros(160, dtype=np.int16)
        while True:
            if self._queue:
                frame = self._queue.popleft()
                voice = True
                self.sent_speech += 1
            else:
                frame, voice = silence, False
                self._spoken.set()
            assert self._socket is not None
            self._socket.sendto(self._sender.packet(frame, voice=voice), remote)
            if voice:
                self.sent.append((loop.time(), audio_level(frame)))
            due += 0.02
            await asyncio.sleep(max(0.0, due - loop.time()))

    async def say(self, samples: Any, rate: int = 8000) -> None:
        """Speak ``samples`` (mono PCM16 at ``rate``) at real time; returns when sent."""
        audio = resample_pcm16(samples, rate, 8000)
        self._spoken.clear()
        for start in range(0, len(audio), 160):
            self._queue.append(audio[start : start + 160])
        await self._spoken.wait()

    def say_later(self, samples: Any, rate: int = 8000) -> None:
        """Queue speech without waiting (to overlap with someone else)."""
        audio = resample_pcm16(samples, rate, 8000)
        self._spoken.clear()
        for start in range(0, len(audio), 160):
            self._queue.append(audio[start : start + 160])

    async def hears_loud(self, since: int, packets: int, level: int = 3000) -> None:
        """Wait until ``packets`` packets received after index ``since`` peak above ``level``."""
        while sum(1 for h in self.heard[since:] if int(np.abs(h).max()) > level) < packets:
            self._heard_more.clear()
            await self._heard_more.wait()

    async def leave(self) -> None:
        """Leave the room and close everything (idempotent)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._session is not None:
            if self._session.lost is None and self._handle:
                with contextlib.suppress(Exception):
                    await self._session.call(self._handle, {"request": "leave"})
            await self._session.aclose()
            self._session = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
