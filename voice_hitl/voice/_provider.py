"""The realtime provider interface: a model (config, capabilities) and its sessions."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from ..tools._tools import AITool
from ._provider_events import PCM16, ProviderEvent
from ._wire_taps import WireTaps

__all__ = [
    "AudioFormat",
    "ProviderCapabilities",
    "ProviderSession",
    "RealtimeProvider",
    "SessionConfig",
]


@dataclass(frozen=True, slots=True)
class AudioFormat:
    """PCM16 mono audio at ``sample_rate`` Hz."""

    sample_rate: int = 24_000

    def __post_init__(self) -> None:
        if self.sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {self.sample_rate}")


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """What a session is opened with."""

    instructions: str = ""
    tools: tuple[AITool, ...] = ()
    input_format: AudioFormat = field(default_factory=AudioFormat)
    output_format: AudioFormat = field(default_factory=AudioFormat)
    session_id: str = ""
    room_id: str = ""


@dataclass(frozen=True, slots=True)
class ProviderCapabilities:
    """What a provider can do; channels branch on these flags, never on the provider's type.

    Attributes:
        can_say: ``say()`` speaks arbitrary text in the model's voice.
        speaker_attribution: Transcriptions carry ``speaker_id`` for multi-party audio.
        tool_call_cancellation: The provider emits ``ToolCallCancelledEvent`` (barge-in).
        user_transcription: The provider transcribes the caller's speech.
    """

    can_say: bool = True
    speaker_attribution: bool = False
    tool_call_cancellation: bool = True
    user_transcription: bool = True


class ProviderSession(abc.ABC):
    """One connected conversation with a realtime model.

    Calls after :meth:`aclose` raise ``ChannelClosedError``.
    """

    @abc.abstractmethod
    def events(self) -> AsyncIterator[ProviderEvent]:
        """The session's events, in order; the iterator ends when the session closes."""

    @abc.abstractmethod
    async def send_audio(self, frame: PCM16) -> None:
        """Send caller audio (PCM16 at the session's input rate).

        Raises:
            AudioFormatError: The frame is not mono int16 (check it with
                ``voice_hitl.voice._transport.check_pcm16`` where it enters); the session keeps
                working.

        Cancellation: safe; the frame is sent whole or not at all.
        """

    @abc.abstractmethod
    async def submit_tool_result(
        self, call_id: str, output: str, *, is_error: bool
    ) -> str | None:
        """Return a tool call's result (or error) to the model for ``call_id``.

        Returns:
            None when it went the ordinary way; a note when it reached the model another
            way (e.g. "delivered as context after reconnect"), which the call's report keeps.

        Raises:
            ProviderError: It could not be delivered (the report says so).
            ChannelClosedError: The session is closed.

        Cancellation: safe; the result is sent whole or not at all.
        """

    @abc.abstractmethod
    async def inject_context(self, text: str) -> None:
        """Add text the model reads silently (no reply is triggered).

        Cancellation: safe; the text is added whole or not at all.
        """

    @abc.abstractmethod
    async def say(self, text: str) -> None:
        """Have the model speak ``text``.

        Cancellation: safe; speech may already have started.
        """

    @abc.abstractmethod
    async def interrupt(self) -> None:
        """Stop the model's current response.

        Cancellation: safe.
        """

    def expect_answer(self, spec: object | None) -> None:  # noqa: B027 - optional hook
        """A hint: the caller is now answering a question of this ``AnswerSpec`` (None: no
        question). Providers with their own recogniser use it to constrain recognition;
        the default ignores it."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Disconnect; idempotent. The events iterator ends.

        Cancellation: don't cancel; the connection is released even so.
        """


class RealtimeProvider(abc.ABC):
    """A speech-to-speech model: holds configuration, opens sessions."""

    capabilities: ProviderCapabilities = ProviderCapabilities()
    wire_taps: WireTaps | None = None
    """The provider's wire frames, both ways, for observers (a call recorder); ``None`` for a
    provider without a wire to its model (see :mod:`voice_hitl.voice._wire_taps`)."""

    @abc.abstractmethod
    async def connect(self, config: SessionConfig) -> ProviderSession:
        """Open a session with instructions, tools and audio formats.

        Raises:
            ProviderError: The model could not be reached.

        Cancellation: safe; nothing is left open.
        """
