"""The Gemini Live provider's implementation.

Import the public names from ``providers.gemini_live`` (the provider) and
``providers.gemini_live_testing`` (the loopback test server). ``_protocol`` is sans-I/O;
``_provider`` / ``_session`` are the ``websockets`` adapter (extra ``gemini``), a thin layer on
:mod:`providers.realtime_ws` (connection lifecycle, reconnect, call ledger, test-server
scaffolding, script player).
"""

from __future__ import annotations

__all__: list[str] = []
