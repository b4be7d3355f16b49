"""How a conference serves its human-input tools: addressed, tracked, then asked.

The gate serves the human-input tools first (toolset, schema, ``BEFORE_TOOL_USE``, then this
handler under its own timeout). Here the arguments' ``ask`` / ``approvers`` / ``quorum`` are
resolved against the roster before anyone is asked: a name that matches nobody fails the call
with a message the model reads. The created request is handed to the channel's desk so answers
are routed to it, and it is removed from the desk however the call ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from voice_hitl import (
    ChannelType,
    Escalation,
    HumanInputToolHandler,
    PendingInput,
    ToolFailedError,
    UnservedToolCallError,
)

from ._exceptions import AddressingError
from ._roster import Addressing

__all__ = ["ConferenceHumanInput", "QuestionDesk"]


class QuestionDesk(Protocol):
    """What the conference channel does for each request its handler creates."""

    def address(self, arguments: Mapping[str, Any]) -> Addressing | None:
        """Resolve who must answer (raises :class:`AddressingError`)."""
        ...

    def open_question(
        self, pending: PendingInput, addressing: Addressing | None, handler: HumanInputToolHandler
    ) -> None:
        """Start routing answers to ``pending``."""
        ...

    def close_question(self, pending_id: str) -> None:
        """Stop routing answers to ``pending_id``."""
        ...

    def readdress(self, pending_id: str, names: tuple[str, ...]) -> tuple[str, ...]:
        """Route ``pending_id`` to the named participants instead; returns their ids.

        Raises:
            AddressingError: A name matches nobody present, or the request cannot be
                re-addressed (a quorum approval).
        """
        ...


class ConferenceHumanInput(HumanInputToolHandler):
    """The application's human-input tools, served the conference way.

    Shares the wrapped handler's tool names, timeout, definitions and
    :class:`~voice_hitl.HumanInputHandler`, so ``resolve`` / ``reject`` on it still work.
    """

    names_approvers = True  # it addresses named approvers and counts a quorum

    def __init__(self, inner: HumanInputToolHandler, desk: QuestionDesk) -> None:
        super().__init__(
            inner.tool_names,
            timeout=inner.timeout,
            handler=inner.handler,
            tool_definitions=inner.tool_definitions,
        )
        self.policies = inner.policies
        self.inner = inner
        self._desk = desk

    def escalate(self, pending: PendingInput, escalation: Escalation, remaining: float) -> None:
        """Re-address the question to the escalation's participants (by name or id).

        When they are not in the conference (or the request is a quorum approval), the
        question stays with whoever it was for, and the note says why.
        """
        try:
            ids = self._desk.readdress(pending.pending_id, escalation.targets)
        except AddressingError as exc:
            self.note_escalation(pending, escalation, remaining, readdressed=(), problem=str(exc))
        else:
            self.note_escalation(pending, escalation, remaining, readdressed=ids)

    async def ask(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        channel_type: ChannelType | None = None,
        on_created: Callable[[PendingInput], None] | None = None,
    ) -> str:
        """Resolve who must answer, then ask (see :meth:`HumanInputToolHandler.ask`).

        Raises:
            ToolFailedError: The arguments name someone not in the conference (the model
                reads who is), or nobody answered in time.

        Cancellation: withdraws the request; a later answer is not taken.
        """
        if not self.serves(name):
            raise UnservedToolCallError(name)
        try:
            addressing = self._desk.address(arguments)
        except AddressingError as exc:
            raise ToolFailedError(f"Cannot ask: {exc}") from None
        opened: list[str] = []

        def created(pending: PendingInput) -> None:
            opened.append(pending.pending_id)
            self._desk.open_question(pending, addressing, self)
            if on_created is not None:
                on_created(pending)

        try:
            return await super().ask(name, arguments, channel_type=channel_type, on_created=created)
        finally:
            for pending_id in opened:
                self._desk.close_question(pending_id)
