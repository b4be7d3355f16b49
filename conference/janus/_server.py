"""``start_local_janus``: a throwaway Janus on loopback, for demos, tests and benchmarks.

It writes a configuration folder of its own (the HTTP transport only, on a free loopback port;
the admin API off; only the AudioBridge plugin, with its RTP on 127.0.0.1 in a port range of its
own; ICE gathering on the loopback interface only; a fresh room secret), starts ``janus`` on it
and waits until the HTTP API answers. :meth:`LocalJanus.stop` and :meth:`LocalJanus.kill` end
that process by its PID. Needs the Debian package ``janus``.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LocalJanus", "janus_binary", "start_local_janus"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
class LocalJanus:
    """A ``janus`` process started by :func:`start_local_janus` (stop it with :meth:`stop`)."""

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
        """The process id."""
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

    def freeze(self, frozen: bool = True) -> None:
        """Freeze the server (SIGSTOP: it stops answering, sockets open) or thaw it."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGSTOP if frozen else signal.SIGCONT)

    def stop(self) -> None:
        """Stop the server by its PID and wait for it (idempotent; blocking)."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGCONT)  # a frozen server cannot stop
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def close(self) -> None:
        """Stop the server and delete its configuration folder (idempotent; blocking)."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def _write_config(server: LocalJanus, plugins: Path) -> None:
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


def start_local_janus(timeout: float = 15.0, attempts: int = 3) -> LocalJanus:
    """Start a throwaway Janus on loopback and wait until its HTTP API answers.

    Blocking (it waits for the process): call it off the event loop (``asyncio.to_thread``).
    The free port it picks can be taken before Janus binds it: it tries ``attempts`` times.

    Raises:
        FileNotFoundError: ``janus`` or its AudioBridge plugin is not installed.
        RuntimeError: It exited or did not answer within ``timeout`` seconds (its log attached).
    """
    for _ in range(attempts - 1):
        try:
            return _start(timeout)
        except RuntimeError:
            continue  # the port was taken, or a slow start: a fresh port and folder
    return _start(timeout)


def _start(timeout: float) -> LocalJanus:
    binary = janus_binary()
    if binary is None:
        raise FileNotFoundError("janus is not installed (Debian package janus)")
    plugins = _plugins_folder()
    low = random.randrange(20_000, 59_000, 2)
    server = LocalJanus(
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
            log = server.log
            server.close()
            raise RuntimeError(f"janus started without the AudioBridge plugin:\n{log}")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            server.kill()
            log = server.log
            shutil.rmtree(server.folder, ignore_errors=True)
            raise RuntimeError(f"janus did not answer within {timeout} s:\n{log[-4000:]}")
        time.sleep(0.05)  # a process starting: nothing to wait on but its port
