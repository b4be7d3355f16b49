"""voice-hitl for the OpenAI Agents SDK's realtime sessions (extra ``agents``).

:class:`AgentsRealtimeBridge` answers a session's ``tool_approval_required`` events through
voice-hitl (the caller aloud by risk tier or keypad, an operator, a quorum) with
``approve_tool_call`` / ``reject_tool_call``, and offers voice-hitl's human-input tools as the
SDK's function tools. :class:`AgentsLine` is the session as a call line a responder speaks on.
"""

from __future__ import annotations

from voice_hitl._public import publish

from ._bridge import AgentsRealtimeBridge
from ._line import AgentsLine

__all__ = ["AgentsLine", "AgentsRealtimeBridge"]

publish(__name__, globals(), __all__)
