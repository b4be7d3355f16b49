"""voice-hitl: human-in-the-loop tools for realtime voice agents and conference bots.

A tool call such as ``AskUserQuestion`` pauses, a person is asked, and the call resumes with
the answer, a refusal or a timeout the model can read.
"""

from __future__ import annotations

from ._exceptions import (
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
from ._public import publish
from ._types import ChannelType
from .human._answer_json import answer_json
from .human._deadline import DeadlinePolicy, Escalation
from .human._human_input import HumanInputHandler
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
from .text._ai_channel import AIChannel
from .text._ai_external import ExternalToolHandler, ToolDecision
from .text._ai_round import current_tool_actor_id
from .text._ai_types import AIContext, AIMessage, AIProvider, AIResponse, AIToolCall, ServedCall
from .tools._approval_policy import ApprovalPolicy, ApprovalRule, canonical_arguments
from .tools._approvals import AlwaysGrant, ApprovalDecision, ToolApprovals, read_decision
from .tools._gate import Door, ToolCall, ToolCallReport, ToolGate, ToolResult, ToolUseEvent
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
    "DeadlinePolicy",
    "Escalation",
    "PendingInput",
    "PendingInputEvent",
    "PendingInputStatus",
    "ProviderError",
    "ToolArgumentsError",
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


publish(__name__, globals(), __all__)
