"""A loopback OpenAI Realtime server for testing code built on the OpenAI provider.

::

    async with RealtimeTestServer() as server:
        provider = OpenAIRealtimeProvider(api_key="test", url=server.url)
        session = await channel.start_session("room")     # channel built on ``provider``
        conn = await server.next_connection()
        call_id = await conn.function_call("AskUserQuestion", {"question": "Which account?"})
        output = await conn.expect_function_call_output(call_id)

Needs the ``websockets`` package (extra ``openai``).
"""

from __future__ import annotations

from providers.openai._script import (
    Drop,
    ExpectOutput,
    FunctionCall,
    Keypad,
    ScriptStep,
    SendError,
    SendRaw,
    Speak,
    UserSays,
    play,
)
from providers.openai._sdk_types import (
    ClientEventError,
    ServerEventError,
    validate_client_event,
    validate_server_event,
)
from providers.openai._testing import InvalidClientEvent, RealtimeTestServer, ServerConnection
from providers.realtime_ws import publish

__all__ = [
    "ClientEventError",
    "Drop",
    "ExpectOutput",
    "FunctionCall",
    "InvalidClientEvent",
    "Keypad",
    "RealtimeTestServer",
    "ScriptStep",
    "SendError",
    "SendRaw",
    "ServerConnection",
    "ServerEventError",
    "Speak",
    "UserSays",
    "play",
    "validate_client_event",
    "validate_server_event",
]

publish(globals(), __all__, __name__)
