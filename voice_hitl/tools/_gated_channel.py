"""``GatedChannel``: what a channel that serves its calls through its own ``ToolGate`` shares.

``AIChannel`` (a text agent's tool loop) and ``RealtimeVoiceChannel`` (a speech-to-speech
session per caller) each own one :class:`~voice_hitl.ToolGate`. The gate's accessors, the
kit's wiring, the open/closed state and the last steps of ``close()`` (close the channel's
human-input scope, leave the kit) are the same for both and live here; each channel keeps its
own turns or sessions, its own ``tool_handler`` and its own ``close()``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import ClassVar, Self

from .._exceptions import ChannelClosedError
from .._types import ChannelType
from ..human._human_input_tools import HumanInputToolHandler
from ._gate import ToolGate
from ._kit import VoiceKit
from ._tools import AITool, ToolHandler

__all__ = ["GatedChannel"]


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class GatedChannel:
    """The base of a channel owning one gate; a subclass calls :meth:`_open` in ``__init__``
    and :meth:`_leave` at the end of its ``close()``."""

    channel_type: ClassVar[ChannelType]
    kind: ClassVar[str]
    """How errors name the channel (``AI channel``, ``voice channel``)."""

    _channel_id: str
    _gate: ToolGate
    _kit: VoiceKit | None
    _state: _State

    def _open(
        self,
        channel_id: str,
        *,
        tools: Iterable[AITool],
        tool_handler: ToolHandler | None,
        human_input: HumanInputToolHandler | None,
        tool_timeout_seconds: float,
    ) -> ToolGate:
        """Make the channel's gate (it checks the tools and the bound) and open the channel.

        Raises:
            ValueError: As :class:`ToolGate`.
        """
        self._gate = ToolGate(
            channel_id,
            self.channel_type,
            tools=tools,
            tool_handler=tool_handler,
            human_input=human_input,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        self._channel_id = channel_id
        self._kit = None
        self._state = _State.OPEN
        return self._gate

    @property
    def channel_id(self) -> str:
        """The channel's id."""
        return self._channel_id

    @property
    def gate(self) -> ToolGate:
        """The gate every tool call of this channel goes through."""
        return self._gate

    @property
    def human_input_handler(self) -> HumanInputToolHandler | None:
        """The human-input tools this channel serves first."""
        return self._gate.human_input

    @property
    def tools(self) -> list[AITool]:
        """The turn's toolset: host tools plus the human-input definitions."""
        return list(self._gate.toolset.values())

    def bind_kit(self, kit: VoiceKit) -> None:
        """Wire the kit's hooks into the gate and the human-input notifications."""
        self._kit = kit
        self._gate.kit = kit
        human = self._gate.human_input
        if human is not None:
            kit.attach_human_input(self._channel_id, human.handler)

    def _check_open(self) -> None:
        if self._state is _State.CLOSED:
            raise ChannelClosedError(f"{self.kind} {self._channel_id!r} is closed")

    def _mark_closed(self) -> None:
        self._state = _State.CLOSED

    async def _leave(self) -> None:
        """Close this channel's human-input scope and leave the kit (the end of ``close()``)."""
        human = self._gate.human_input
        if human is not None:
            await human.handler.close(channel_id=self._channel_id)
        if self._kit is not None:
            self._kit.unregister_channel(self)

    async def close(self) -> None:
        """Close the channel (each channel says what it settles)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
