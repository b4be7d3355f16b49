"""``HumanInputToolHandler``: the tools that ask a person, served by create + wait."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from ._checks import positive_seconds
from ._exceptions import (
    HumanInputRejectedError,
    ToolFailedError,
    ToolRefusedError,
    UnservedToolCallError,
)
from ._human_input import HumanInputHandler
from ._pending import PendingInput
from ._tools import AITool, current_tool_context
from ._types import ChannelType

__all__ = ["HumanInputToolHandler"]

logger = logging.getLogger("voice_hitl.human_input")


class HumanInputToolHandler:
    """Serves the human-input tools (e.g. ``AskUserQuestion``) by asking a person.

    Give it to a channel as ``human_input_handler=``: the channel offers ``tool_definitions``
    to the model and serves ``tool_names`` itself, before its ``tool_handler``, under this
    handler's ``timeout``. Called directly as a tool handler it asks on an AI door.

    Args:
        tool_names: The tools it serves.
        timeout: Seconds to wait for a person before the call fails.
        handler: A shared :class:`HumanInputHandler`; a new one by default.
        tool_definitions: Definitions that put these tools in the model's turn.

    Raises:
        ValueError: ``tool_names`` is empty, a definition names a tool it does not serve, or
            ``timeout`` is not a finite number of seconds above zero.
    """

    def __init__(
        self,
        tool_names: Iterable[str],
        *,
        timeout: float = 300.0,
        handler: HumanInputHandler | None = None,
        tool_definitions: Iterable[AITool] = (),
    ) -> None:
        names = frozenset(tool_names)
        if not names:
            raise ValueError("HumanInputToolHandler needs at least one tool name")
        timeout = positive_seconds("timeout", timeout)
        definitions = tuple(tool_definitions)
        for definition in definitions:
            if definition.name not in names:
                raise ValueError(
                    f"tool definition {definition.name!r} is not among tool_names {sorted(names)}"
                )
        self.tool_names = names
        self.timeout = timeout
        self.handler = handler if handler is not None else HumanInputHandler()
        self.tool_definitions = definitions

    def serves(self, name: str) -> bool:
        """True when this handler serves the tool ``name``."""
        return name in self.tool_names

    async def __call__(self, name: str, arguments: dict[str, Any], /) -> str:
        """Serve a call as a plain tool handler, on an AI channel's door.

        Cancellation: withdraws the request (see :meth:`ask`).
        """
        return await self.ask(name, arguments, channel_type=ChannelType.AI)

    async def ask(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        channel_type: ChannelType | None = None,
        on_created: Callable[[PendingInput], None] | None = None,
    ) -> str:
        """Ask a person and return the answer.

        Room, call id, channel and actor come from :func:`current_tool_context`;
        ``channel_type`` names the door (the context's by default). ``on_created`` is called
        with the request as soon as it exists (already answerable, not yet waited on), so a
        channel can route answers to it.

        Raises:
            UnservedToolCallError: ``name`` is not one of ``tool_names``.
            ToolFailedError: Nobody answered within ``timeout``.
            ToolRefusedError: The request was rejected; the message says why.
            RuntimeError: The handler gave the request up (closed, released).

        Cancellation: withdraws the request; a later answer is not taken.
        """
        if name not in self.tool_names:
            raise UnservedToolCallError(name)
        context = current_tool_context()
        if channel_type is not None and channel_type is not context.channel_type:
            context = replace(context, channel_type=channel_type)
        pending = await self.handler.create(
            name,
            arguments,
            room_id=context.room_id,
            tool_call_id=context.tool_call_id,
            channel_id=context.channel_id,
            channel_type=context.channel_type,
            actor_id=context.actor_id,
            timeout=self.timeout,
            context=context.details,
        )
        if on_created is not None:
            try:
                on_created(pending)
            except BaseException:
                self.handler.release(pending.pending_id)
                raise
        try:
            return await self.handler.wait(pending.pending_id, timeout=self.timeout)
        except TimeoutError:
            raise ToolFailedError(
                f"Human input timed out after {self.timeout:g}s for tool {name!r}"
            ) from None
        except HumanInputRejectedError as rejected:
            raise ToolRefusedError(f"Human input rejected: {rejected.reason}") from rejected

    def __repr__(self) -> str:
        return f"HumanInputToolHandler({sorted(self.tool_names)!r}, timeout={self.timeout:g})"
