"""A loopback Gemini Live server for testing code built on the Gemini Live provider.

::

    async with LiveTestServer() as server:
        provider = GeminiLiveProvider(api_key="test", url=server.url)
        session = await channel.start_session("room")     # channel built on ``provider``
        conn = await server.next_connection()
        call_id = await conn.function_call("AskUserQuestion", {"question": "Which account?"})
        response = await conn.expect_tool_response(call_id)

Needs the ``websockets`` and ``google-genai`` packages (extra ``gemini``): every client
message is checked against the SDK's ``LiveClientMessage``.
"""

from __future__ import annotations

from providers.gemini._script import (
    Cancel,
    Close,
    Drop,
    ExpectResponse,
    FunctionCall,
    GoAway,
    Interrupt,
    ScriptStep,
    SendRaw,
    Speak,
    UserSays,
    play,
)
from providers.gemini._sdk_types import (
    MessageError,
    validate_client_message,
    validate_server_message,
)
from providers.gemini._testing import (
    InvalidClientMessage,
    LiveServerConnection,
    LiveTestServer,
    ToolResponse,
)
from providers.realtime_ws import publish

__all__ = [
    "Cancel",
    "Close",
    "Drop",
    "ExpectResponse",
    "FunctionCall",
    "GoAway",
    "Interrupt",
    "InvalidClientMessage",
    "LiveServerConnection",
    "LiveTestServer",
    "MessageError",
    "ScriptStep",
    "SendRaw",
    "Speak",
    "ToolResponse",
    "UserSays",
    "play",
    "validate_client_message",
    "validate_server_message",
]

publish(globals(), __all__, __name__)
