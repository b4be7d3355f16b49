"""The Gemini Live API as a voice-hitl provider (extra ``gemini``).

``GeminiLiveProvider`` opens one WebSocket per session with ``websockets``; the protocol itself
lives in the sans-I/O :class:`LiveProtocol`, usable with any transport::

    provider = GeminiLiveProvider(api_key=key)
    channel = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human)
"""

from __future__ import annotations

from providers.gemini._options import LiveOptions
from providers.gemini._protocol import LiveProtocol
from providers.realtime_ws import ReconnectPolicy, publish

try:
    from providers.gemini._provider import DEFAULT_MODEL, DEFAULT_URL, GeminiLiveProvider
    from providers.gemini._session import GeminiLiveSession
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    if exc.name != "websockets":
        raise
    raise ModuleNotFoundError(
        "providers.gemini_live needs the 'websockets' package: pip install 'voice-hitl[gemini]'",
        name="websockets",
    ) from exc

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_URL",
    "GeminiLiveProvider",
    "GeminiLiveSession",
    "LiveOptions",
    "LiveProtocol",
    "ReconnectPolicy",
]

publish(globals(), __all__, __name__)
