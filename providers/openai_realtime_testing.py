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

import contextlib

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

for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith("providers.openai."):
        with contextlib.suppress(AttributeError, TypeError):  # a type alias
            _obj.__module__ = __name__
del _name, _obj
