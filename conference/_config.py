"""``ConferenceRealtimeConfig``: the realtime provider a conference plugs in, and its tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from providers.base import RealtimeProvider
from voice_hitl import AITool, HumanInputToolHandler, ReasoningBackend, ToolHandler
from voice_hitl._checks import positive_seconds

__all__ = ["ConferenceRealtimeConfig"]


@dataclass(frozen=True, eq=False)
class ConferenceRealtimeConfig:
    """What :meth:`~conference.ConferenceChannel.plug_realtime` connects and serves.

    The same options and rules as :class:`~voice_hitl.RealtimeVoiceChannel`: the human-input
    tools are declared in the session and served first, under their own timeout; host tools
    go to ``tool_handler`` under ``tool_timeout_seconds``.

    Args:
        provider: The realtime model that hears the mixed audio.
        tools: Host tool definitions (stored as a tuple).
        tool_handler: Serves host tools.
        human_input_handler: Serves the human-input tools; ``ask`` / ``approvers`` /
            ``quorum`` in their arguments address them to participants.
        tool_timeout_seconds: The bound on each host tool call.
        instructions: The model's instructions.
        reasoning_backend: Takes the bot's turns and may call tools (the reasoning door),
            for a provider without a model of its own (e.g. the local cascade).
        sample_rate: The rate of the mixed audio sent to the provider and of its output.

    Raises:
        ValueError: ``tool_timeout_seconds`` is not a finite number of seconds above zero.
    """

    provider: RealtimeProvider
    _: KW_ONLY
    tools: Sequence[AITool] = ()
    tool_handler: ToolHandler | None = None
    human_input_handler: HumanInputToolHandler | None = None
    tool_timeout_seconds: float = 10.0
    instructions: str = ""
    reasoning_backend: ReasoningBackend | None = None
    sample_rate: int = 24_000

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))
        positive_seconds("tool_timeout_seconds", self.tool_timeout_seconds)
