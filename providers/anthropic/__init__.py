"""Anthropic's Messages API as a text provider for ``AIChannel`` (extra ``anthropic``).

``_mapping`` is sans-I/O (the channel's model to and from the API's JSON); ``_provider`` drives
the ``anthropic`` SDK; ``_testing`` is the loopback server, whose every request and reply is
checked against the SDK's own types.
"""

from __future__ import annotations

from providers.anthropic._provider import AnthropicAIProvider
from providers.anthropic._testing import AnthropicTestServer, RecordedRequest

__all__ = ["AnthropicAIProvider", "AnthropicTestServer", "RecordedRequest"]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
