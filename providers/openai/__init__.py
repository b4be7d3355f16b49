"""The OpenAI Realtime provider's implementation.

Import the public names from ``providers.openai_realtime`` (the provider) and
``providers.openai_realtime_testing`` (the loopback test server). ``_protocol`` is sans-I/O;
``_connection`` is the ``websockets`` adapter (extra ``openai``).
"""

from __future__ import annotations

__all__: list[str] = []
