"""voice-hitl: human-in-the-loop tools for realtime voice agents and conference bots.

A tool call such as ``AskUserQuestion`` pauses, a person is asked, and the call resumes with
the answer, a refusal or a timeout the model can read.
"""

from __future__ import annotations

from ._ai_channel import AIChannel
from ._ai_external import ExternalToolHandler, ToolDecision
from ._ai_round import current_tool_actor_id
from ._ai_types import AIContext, AIMessage, AIProvider, AIResponse, AIToolCall, ServedCall
from ._answer_json import answer_json
from ._approval_policy import ApprovalPolicy, ApprovalRule, canonical_arguments
from ._approvals import AlwaysGrant, ApprovalDecision, ToolApprovals, read_decision
from ._call_line import CallLine, Heard, Inbox, SpeechSynthesizer
from ._caller_transport import CallerTurn, ScriptedCallerTransport
from ._connect_hooks import ConnectHook, ConnectHooks
from ._deadline import DeadlinePolicy, Escalation
from ._driver import EventListener, SessionDriver
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
from ._gate import Door, ToolCall, ToolCallReport, ToolGate, ToolResult, ToolUseEvent
from ._hooks import HookContext, HookExecution, HookResult, HookTrigger
from ._human_input import HumanInputHandler
from ._human_input_tools import HumanInputToolHandler
from ._kit import VoiceKit
from ._lifecycle import (
    RequestDelivered,
    RequestEvent,
    RequestNoted,
    RequestNotified,
    RequestObserver,
    RequestOpened,
    RequestSettled,
    SettledOutcome,
)
from ._pending import PendingInput, PendingInputEvent, PendingInputStatus
from ._public import publish
from ._reasoning import (
    ReasoningBackend,
    ReasoningReply,
    ReasoningTurn,
    ScriptedReasoningBackend,
    ScriptedTurn,
    ToolCaller,
    TranscriptEntry,
)
from ._recovery import RecoveredCall, recover_tool_call
from ._responder import AnswerableChannel, OperatorRequest, VoiceResponder
from ._standard_tools import ASK_USER_QUESTION, CONFIRM_ACTION
from ._tools import (
    AITool,
    ToolCallContext,
    ToolHandler,
    compose_tool_handlers,
    current_tool_context,
    tool_context,
)
from ._transport import KeypadTransport, LocalTransport, Transport
from ._types import ChannelType
from ._voice_channel import RealtimeVoiceChannel, VoiceSession
from ._voice_line import VoiceLine
from ._wire_taps import WireDirection, WireFrame, WireTap, WireTaps

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
