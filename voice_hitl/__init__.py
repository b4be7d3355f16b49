"""voice-hitl: human-in-the-loop tools for realtime voice agents and conference bots.

A tool call such as ``AskUserQuestion`` pauses, a person is asked, and the call resumes with
the answer, a refusal or a timeout the model can read.

The public names live here; the code behind them is in private modules grouped by role
(``human``, ``tools``, ``voice``, ``responder``, ``text``, ``demo``) and is imported on first
use of a name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._exceptions import (
    ApprovalSetupError,
    AudioFormatError,
    ChannelClosedError,
    HumanInputRejectedError,
    ProviderError,
    ToolArgumentsError,
    ToolError,
    ToolFailedError,
    ToolRefusedError,
    ToolTimeoutError,
    UnservedToolCallError,
    VoiceHitlError,
)
from ._public import lazy_attributes, publish
from ._types import ChannelType

if TYPE_CHECKING:
    from .human._answer_json import answer_json
    from .human._deadline import DeadlinePolicy, Escalation
    from .human._human_input import DeadlineClock, HumanInputHandler
    from .human._human_input_tools import HumanInputToolHandler
    from .human._lifecycle import (
        RequestDelivered,
        RequestEvent,
        RequestNoted,
        RequestNotified,
        RequestObserver,
        RequestOpened,
        RequestSettled,
        SettledOutcome,
    )
    from .human._pending import PendingInput, PendingInputEvent, PendingInputStatus
    from .human._standard_tools import ASK_USER_QUESTION, CONFIRM_ACTION
    from .responder._call_line import CallLine, Heard, Inbox, SpeechSynthesizer
    from .responder._responder import AnswerableChannel, OperatorRequest, VoiceResponder
    from .responder._risk import EvidencePolicy
    from .text._ai_channel import AIChannel
    from .text._ai_external import ExternalToolHandler, ToolDecision
    from .text._ai_policy import PolicyExternalToolHandler
    from .text._ai_round import current_tool_actor_id
    from .text._ai_types import AIContext, AIMessage, AIProvider, AIResponse, AIToolCall, ServedCall
    from .tools._approval_policy import ApprovalPolicy, ApprovalRule, canonical_arguments
    from .tools._approvals import AlwaysGrant, ApprovalDecision, ToolApprovals, read_decision
    from .tools._calls import Door, ToolCall, ToolCallReport, ToolResult, ToolUseEvent
    from .tools._gate import ToolGate
    from .tools._hooks import HookContext, HookExecution, HookResult, HookTrigger
    from .tools._kit import VoiceKit
    from .tools._tools import (
        AITool,
        ToolCallContext,
        ToolHandler,
        compose_tool_handlers,
        current_tool_context,
        tool_context,
    )
    from .voice._caller_transport import CallerTurn, ScriptedCallerTransport
    from .voice._connect_hooks import ConnectHook, ConnectHooks, SentAudioTap, SessionEndHook
    from .voice._driver import EventListener, SessionDriver
    from .voice._reasoning import (
        ReasoningBackend,
        ReasoningReply,
        ReasoningTurn,
        ScriptedReasoningBackend,
        ScriptedTurn,
        ToolCaller,
        TranscriptEntry,
    )
    from .voice._recovery import RecoveredCall, recover_tool_call
    from .voice._transport import KeypadTransport, LocalTransport, Transport
    from .voice._voice_channel import RealtimeVoiceChannel, VoiceSession
    from .voice._voice_line import VoiceLine
    from .voice._wire_taps import WireDirection, WireFrame, WireTap, WireTaps

# Every other public name loads its module on first use (``__getattr__``): ``import voice_hitl``
# stays light, and what a text agent or an operator tool never touches (numpy, the speech
# package, JSON Schema, pydantic) is not loaded for it.
_LAZY: dict[str, str] = {
    "answer_json": "voice_hitl.human._answer_json",
    "DeadlinePolicy": "voice_hitl.human._deadline",
    "Escalation": "voice_hitl.human._deadline",
    "DeadlineClock": "voice_hitl.human._human_input",
    "HumanInputHandler": "voice_hitl.human._human_input",
    "HumanInputToolHandler": "voice_hitl.human._human_input_tools",
    "RequestDelivered": "voice_hitl.human._lifecycle",
    "RequestEvent": "voice_hitl.human._lifecycle",
    "RequestNoted": "voice_hitl.human._lifecycle",
    "RequestNotified": "voice_hitl.human._lifecycle",
    "RequestObserver": "voice_hitl.human._lifecycle",
    "RequestOpened": "voice_hitl.human._lifecycle",
    "RequestSettled": "voice_hitl.human._lifecycle",
    "SettledOutcome": "voice_hitl.human._lifecycle",
    "PendingInput": "voice_hitl.human._pending",
    "PendingInputEvent": "voice_hitl.human._pending",
    "PendingInputStatus": "voice_hitl.human._pending",
    "ASK_USER_QUESTION": "voice_hitl.human._standard_tools",
    "CONFIRM_ACTION": "voice_hitl.human._standard_tools",
    "CallLine": "voice_hitl.responder._call_line",
    "Heard": "voice_hitl.responder._call_line",
    "Inbox": "voice_hitl.responder._call_line",
    "SpeechSynthesizer": "voice_hitl.responder._call_line",
    "AnswerableChannel": "voice_hitl.responder._responder",
    "OperatorRequest": "voice_hitl.responder._responder",
    "VoiceResponder": "voice_hitl.responder._responder",
    "EvidencePolicy": "voice_hitl.responder._risk",
    "AIChannel": "voice_hitl.text._ai_channel",
    "ExternalToolHandler": "voice_hitl.text._ai_external",
    "ToolDecision": "voice_hitl.text._ai_external",
    "PolicyExternalToolHandler": "voice_hitl.text._ai_policy",
    "current_tool_actor_id": "voice_hitl.text._ai_round",
    "AIContext": "voice_hitl.text._ai_types",
    "AIMessage": "voice_hitl.text._ai_types",
    "AIProvider": "voice_hitl.text._ai_types",
    "AIResponse": "voice_hitl.text._ai_types",
    "AIToolCall": "voice_hitl.text._ai_types",
    "ServedCall": "voice_hitl.text._ai_types",
    "ApprovalPolicy": "voice_hitl.tools._approval_policy",
    "ApprovalRule": "voice_hitl.tools._approval_policy",
    "canonical_arguments": "voice_hitl.tools._approval_policy",
    "AlwaysGrant": "voice_hitl.tools._approvals",
    "ApprovalDecision": "voice_hitl.tools._approvals",
    "ToolApprovals": "voice_hitl.tools._approvals",
    "read_decision": "voice_hitl.tools._approvals",
    "Door": "voice_hitl.tools._calls",
    "ToolCall": "voice_hitl.tools._calls",
    "ToolCallReport": "voice_hitl.tools._calls",
    "ToolGate": "voice_hitl.tools._gate",
    "ToolResult": "voice_hitl.tools._calls",
    "ToolUseEvent": "voice_hitl.tools._calls",
    "HookContext": "voice_hitl.tools._hooks",
    "HookExecution": "voice_hitl.tools._hooks",
    "HookResult": "voice_hitl.tools._hooks",
    "HookTrigger": "voice_hitl.tools._hooks",
    "VoiceKit": "voice_hitl.tools._kit",
    "AITool": "voice_hitl.tools._tools",
    "ToolCallContext": "voice_hitl.tools._tools",
    "ToolHandler": "voice_hitl.tools._tools",
    "compose_tool_handlers": "voice_hitl.tools._tools",
    "current_tool_context": "voice_hitl.tools._tools",
    "tool_context": "voice_hitl.tools._tools",
    "CallerTurn": "voice_hitl.voice._caller_transport",
    "ScriptedCallerTransport": "voice_hitl.voice._caller_transport",
    "ConnectHook": "voice_hitl.voice._connect_hooks",
    "ConnectHooks": "voice_hitl.voice._connect_hooks",
    "SentAudioTap": "voice_hitl.voice._connect_hooks",
    "SessionEndHook": "voice_hitl.voice._connect_hooks",
    "EventListener": "voice_hitl.voice._driver",
    "SessionDriver": "voice_hitl.voice._driver",
    "ReasoningBackend": "voice_hitl.voice._reasoning",
    "ReasoningReply": "voice_hitl.voice._reasoning",
    "ReasoningTurn": "voice_hitl.voice._reasoning",
    "ScriptedReasoningBackend": "voice_hitl.voice._reasoning",
    "ScriptedTurn": "voice_hitl.voice._reasoning",
    "ToolCaller": "voice_hitl.voice._reasoning",
    "TranscriptEntry": "voice_hitl.voice._reasoning",
    "RecoveredCall": "voice_hitl.voice._recovery",
    "recover_tool_call": "voice_hitl.voice._recovery",
    "KeypadTransport": "voice_hitl.voice._transport",
    "LocalTransport": "voice_hitl.voice._transport",
    "Transport": "voice_hitl.voice._transport",
    "RealtimeVoiceChannel": "voice_hitl.voice._voice_channel",
    "VoiceSession": "voice_hitl.voice._voice_channel",
    "VoiceLine": "voice_hitl.voice._voice_line",
    "WireDirection": "voice_hitl.voice._wire_taps",
    "WireFrame": "voice_hitl.voice._wire_taps",
    "WireTap": "voice_hitl.voice._wire_taps",
    "WireTaps": "voice_hitl.voice._wire_taps",
}

__all__ = [
    "AlwaysGrant",
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalRule",
    "ToolApprovals",
    "canonical_arguments",
    "read_decision",
    "AIChannel",
    "AIContext",
    "AIMessage",
    "AIProvider",
    "AIResponse",
    "AIToolCall",
    "ExternalToolHandler",
    "PolicyExternalToolHandler",
    "ServedCall",
    "ToolDecision",
    "current_tool_actor_id",
    "SpeechSynthesizer",
    "ASK_USER_QUESTION",
    "CONFIRM_ACTION",
    "CallerTurn",
    "ScriptedCallerTransport",
    "CallLine",
    "Heard",
    "Inbox",
    "AnswerableChannel",
    "OperatorRequest",
    "VoiceResponder",
    "EvidencePolicy",
    "answer_json",
    "VoiceLine",
    "ConnectHook",
    "ConnectHooks",
    "SentAudioTap",
    "SessionEndHook",
    "WireDirection",
    "WireFrame",
    "WireTap",
    "WireTaps",
    "EventListener",
    "SessionDriver",
    "ReasoningBackend",
    "ReasoningReply",
    "ReasoningTurn",
    "ScriptedReasoningBackend",
    "ScriptedTurn",
    "ToolCaller",
    "TranscriptEntry",
    "RecoveredCall",
    "recover_tool_call",
    "RequestDelivered",
    "RequestEvent",
    "RequestNoted",
    "RequestNotified",
    "RequestObserver",
    "RequestOpened",
    "RequestSettled",
    "SettledOutcome",
    "KeypadTransport",
    "LocalTransport",
    "Transport",
    "RealtimeVoiceChannel",
    "VoiceSession",
    "AITool",
    "AudioFormatError",
    "ChannelClosedError",
    "ChannelType",
    "Door",
    "HookContext",
    "HookExecution",
    "HookResult",
    "HookTrigger",
    "HumanInputHandler",
    "HumanInputRejectedError",
    "HumanInputToolHandler",
    "DeadlineClock",
    "DeadlinePolicy",
    "Escalation",
    "PendingInput",
    "PendingInputEvent",
    "PendingInputStatus",
    "ProviderError",
    "ToolArgumentsError",
    "ApprovalSetupError",
    "ToolCall",
    "ToolCallContext",
    "ToolCallReport",
    "ToolError",
    "ToolFailedError",
    "ToolGate",
    "ToolHandler",
    "ToolRefusedError",
    "ToolResult",
    "ToolTimeoutError",
    "ToolUseEvent",
    "UnservedToolCallError",
    "VoiceHitlError",
    "VoiceKit",
    "compose_tool_handlers",
    "current_tool_context",
    "tool_context",
]


if not TYPE_CHECKING:  # mypy sees the imports above, not a catch-all __getattr__
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), _LAZY)

publish(__name__, globals(), [name for name in __all__ if name not in _LAZY])
