"""OpenAI's Responses and Chat Completions APIs as text providers for ``AIChannel`` (extra
``openai``).

``_mapping`` and ``_chat_mapping`` are sans-I/O (the channel's model to and from each API's
JSON); ``_provider`` drives the ``openai`` SDK; ``_testing`` and ``_chat_testing`` are the
loopback servers, whose every request and reply is checked against the SDK's own types.
"""

from __future__ import annotations

from providers.openai_text._chat_testing import ChatTestServer
from providers.openai_text._provider import OpenAIChatProvider, OpenAIResponsesProvider
from providers.openai_text._testing import ResponsesTestServer

__all__ = ["ChatTestServer", "OpenAIChatProvider", "OpenAIResponsesProvider", "ResponsesTestServer"]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
