"""The OpenAI Realtime provider's implementation.

Import the public names from ``providers.openai_realtime`` (the provider) and
``providers.openai_realtime_testing`` (the loopback test server). ``_protocol`` is sans-I/O;
``_connection`` is the ``websockets`` adapter (extra ``openai``), a thin layer on
:mod:`providers.realtime_ws` (connection lifecycle, reconnect, call ledger, test-server
scaffolding, script player). The test server: ``_testing``
(listening), ``_server_connection`` (one client, driven by a test), ``_server_reactions``
(answers to client events), ``_conversation`` and ``_server_responses`` (sans-I/O state and
event sequences), ``_sdk_types`` (checks against the ``openai`` SDK's types).
"""

from __future__ import annotations

__all__: list[str] = []
