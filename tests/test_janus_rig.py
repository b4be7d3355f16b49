"""The throwaway Janus of ``janus_rig``: loopback only, admin API off, stopped by its PID."""

from __future__ import annotations

import json
import urllib.request

from janus_rig import JanusServer, janus  # noqa: F401


def test_rig_janus_answers_on_loopback_and_stops_by_pid(janus: JanusServer) -> None:  # noqa: F811
    with urllib.request.urlopen(f"{janus.url}/info", timeout=5) as reply:
        info = json.loads(reply.read())
    assert set(info["plugins"]) == {"janus.plugin.audiobridge"}
    assert set(info["transports"]) == {"janus.transport.http"}
    transport = (janus.folder / "janus.transport.http.jcfg").read_text()
    assert "admin_http = false" in transport and 'ip = "127.0.0.1"' in transport
    config = (janus.folder / "janus.plugin.audiobridge.jcfg").read_text()
    assert 'local_ip = "127.0.0.1"' in config
    janus.stop()
    assert janus.process is not None and janus.process.poll() is not None
