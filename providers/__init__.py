"""Realtime model providers that a voice-hitl channel drives.

``providers.base`` defines the interface; ``providers.mock`` is a scripted provider for tests;
the real providers live in their own modules (``providers.openai_realtime``,
``providers.gemini_live``, ``providers.livekit``) so that importing this package pulls in no
optional dependency. ``providers.realtime_ws`` is the base the websocket realtime providers
(OpenAI, Gemini) share, and the one a new websocket provider starts from.
"""

from __future__ import annotations

__all__: list[str] = []
