"""The OpenAI Realtime API (GA protocol) as a voice-hitl provider (extra ``openai``).

``OpenAIRealtimeProvider`` opens one WebSocket per session with ``websockets``; the protocol
itself lives in the sans-I/O :class:`RealtimeProtocol`, usable with any transport::

    provider = OpenAIRealtimeProvider(api_key=key, model="gpt-realtime")
    channel = RealtimeVoiceChannel("voice", provider=provider, human_input_handler=human)

For Azure OpenAI (GA endpoint) pass
``url="wss://<resource>.openai.azure.com/openai/v1/realtime"``, ``model=<deployment>`` and
``extra_headers={"api-key": key}``.
"""

from __future__ import annotations

from providers.openai._deliveries import Delivery
from providers.openai._errors import is_fatal
from providers.openai._options import RealtimeOptions, ReconnectPolicy, default_turn_detection
from providers.openai._protocol import RealtimeProtocol
from providers.realtime_ws import publish

try:
    from providers.openai._connection import (
        DEFAULT_URL,
        OpenAIRealtimeProvider,
        OpenAIRealtimeSession,
        realtime_url,
    )
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the installed extras
    if exc.name != "websockets":
        raise
    raise ModuleNotFoundError(
        "providers.openai_realtime needs the 'websockets' package: "
        "pip install 'voice-hitl[openai]'",
        name="websockets",
    ) from exc

__all__ = [
    "DEFAULT_URL",
    "Delivery",
    "OpenAIRealtimeProvider",
    "OpenAIRealtimeSession",
    "RealtimeOptions",
    "RealtimeProtocol",
    "ReconnectPolicy",
    "default_turn_detection",
    "is_fatal",
    "realtime_url",
]

publish(globals(), __all__, __name__)
