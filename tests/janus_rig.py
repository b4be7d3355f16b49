"""A throwaway Janus for the tests that need a real AudioBridge, and the people in its rooms.

The server is :func:`conference.janus.start_local_janus` (a generated configuration: HTTP only
on a free loopback port, the admin API off, only the AudioBridge plugin with its RTP on
127.0.0.1 in a port range of its own, ICE on loopback, its own room secret; stopped by its
PID). The people are :class:`conference.janus.RtpParticipant` (plain RTP with the RFC 6464
audio level, speaking at real time).

When ``janus`` is not installed the tests skip, saying so, unless ``VOICE_HITL_REQUIRE_JANUS=1``
(set by ``.ci/run``), which turns the skip into a failure.

Use it from a test module with ``from janus_rig import janus  # noqa: F401``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest.importorskip("httpx", reason="the Janus backend needs the 'janus' extra")
pytest.importorskip("soxr", reason="the Janus backend needs the 'janus' extra")

from conference.janus import (
    LocalJanus,
    RtpParticipant,
    janus_binary,
    start_local_janus,
)

__all__ = ["JanusServer", "ScriptedParticipant", "janus", "start_janus"]

JanusServer = LocalJanus
ScriptedParticipant = RtpParticipant
start_janus = start_local_janus


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("VOICE_HITL_REQUIRE_JANUS") == "1":
        pytest.fail(f"Janus is required here (VOICE_HITL_REQUIRE_JANUS=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture
def janus() -> Iterator[LocalJanus]:
    """A Janus of this test's own, stopped by its PID afterwards."""
    if janus_binary() is None:
        _skip_or_fail("janus is not installed (apt-get install janus)")
    try:
        server = start_local_janus()
    except FileNotFoundError as exc:
        _skip_or_fail(str(exc))
        raise
    try:
        yield server
    finally:
        server.close()
