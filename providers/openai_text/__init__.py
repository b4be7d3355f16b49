"""OpenAI's Responses API as a text provider for ``AIChannel`` (extra ``openai``).

``_mapping`` is sans-I/O (the channel's model to and from the API's JSON); ``_provider`` drives
the ``openai`` SDK; ``_testing`` is the loopback server, whose every request and reply is
checked against the SDK's own types.
"""

from __future__ import annotations

from providers.openai_text._provider import OpenAIResponsesProvider
from providers.openai_text._testing import ResponsesTestServer

__all__ = ["OpenAIResponsesProvider", "ResponsesTestServer"]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
