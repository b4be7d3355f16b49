"""The exceptions voice-hitl raises.

Every exception has one root, :class:`VoiceHitlError`. Where a built-in base says what kind of
failure it is, the exception keeps it too, so ``except TimeoutError`` and ``except RuntimeError``
catch what they would expect::

    VoiceHitlError
    ├── HumanInputRejectedError (also RuntimeError)  a person or a hook refused the request
    ├── ToolError                                     a tool call ended without a result
    │   ├── ToolFailedError                           the tool ran and failed (is_error)
    │   │   └── ToolTimeoutError (also TimeoutError)  the tool overran its bound
    │   └── ToolRefusedError                          the call was refused (policy, a person)
    ├── UnservedToolCallError                         a handler does not serve that tool name
    ├── ToolArgumentsError (also ValueError)          arguments do not match the tool's schema
    ├── ApprovalSetupError (also ValueError)          a setup that could run a gated tool unasked
    ├── ChannelClosedError (also RuntimeError)        the channel or session is closed
    ├── speech.AnswerSpecError (also ValueError)      a question spec / its tool arguments
    ├── AudioFormatError (also ValueError)            audio that is not mono PCM16 (or a bad rate)
    └── ProviderError                                 the provider failed (code, recoverable)

A tool error's ``str()`` is exactly the text the model reads inside ``{"error": ...}``.
"""

from __future__ import annotations

__all__ = [
    "ApprovalSetupError",
    "AudioFormatError",
    "ChannelClosedError",
    "HumanInputRejectedError",
    "ProviderError",
    "ToolArgumentsError",
    "ToolError",
    "ToolFailedError",
    "ToolRefusedError",
    "ToolTimeoutError",
    "UnservedToolCallError",
    "VoiceHitlError",
]


class VoiceHitlError(Exception):
    """Root of every voice-hitl exception."""


class HumanInputRejectedError(VoiceHitlError, RuntimeError):
    """The request was rejected, by the person or by an ``ON_USER_INPUT_REQUIRED`` hook."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class ToolError(VoiceHitlError):
    """A tool call ended without a result; ``str()`` is what the model reads."""


class ToolFailedError(ToolError):
    """The tool ran and failed; the model reads the message as an error result."""


class ToolTimeoutError(ToolFailedError, TimeoutError):
    """The tool did not finish within its bound."""


class ToolRefusedError(ToolError):
    """The call was refused (a hook, a person, a policy); the model reads why."""


class UnservedToolCallError(VoiceHitlError):
    """This handler does not serve that tool; a composed handler passes the call on."""

    def __init__(self, tool_name: str) -> None:
        super().__init__(f"Tool {tool_name!r} is not served by this handler")
        self.tool_name = tool_name


class ToolArgumentsError(VoiceHitlError, ValueError):
    """Tool arguments are not valid JSON or do not match the tool's JSON Schema."""


class ApprovalSetupError(VoiceHitlError, ValueError):
    """A setup that could not satisfy an approval policy, refused when it is built (a channel
    not registered with a kit, no human-input handler to ask through, named approvers on a
    channel that cannot tell who is speaking, a runtime that would run the tool unasked); the
    message names the missing step."""


class AudioFormatError(VoiceHitlError, ValueError):
    """Audio is not in a form voice-hitl accepts (dtype, shape, rate, file format); raised
    where audio enters (a transport, ``send_audio``, a recogniser), naming what is wrong."""


class ChannelClosedError(VoiceHitlError, RuntimeError):
    """The channel, session or provider was used after it was closed."""


class ProviderError(VoiceHitlError):
    """A realtime provider failed.

    Attributes:
        code: A short machine-readable code (the provider's own where it gives one).
        recoverable: True when the session can go on (the provider reconnects or retries).
    """

    def __init__(self, message: str, *, code: str = "provider_error", recoverable: bool = False):
        super().__init__(message)
        self.code = code
        self.recoverable = recoverable
