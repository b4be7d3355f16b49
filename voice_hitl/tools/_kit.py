"""``VoiceKit``: hook registry and the place channels are registered."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from .._types import ChannelType
from ..human._human_input import HumanInputHandler
from ..human._pending import PendingInputEvent
from ._approval_policy import ApprovalPolicy
from ._approvals import ToolApprovals
from ._gate import ToolGate
from ._hooks import (
    Hook,
    HookContext,
    HookEngine,
    HookExecution,
    HookRegistration,
    HookTrigger,
)

__all__ = ["KitChannel", "VoiceKit"]


@runtime_checkable
class KitChannel(Protocol):
    """What :meth:`VoiceKit.register_channel` needs of a channel."""

    @property
    def channel_id(self) -> str: ...

    def bind_kit(self, kit: VoiceKit) -> None:
        """Called once on registration: wire hooks and the human-input scope."""

    async def close(self) -> None:
        """Close the channel, settling what it owns."""


class VoiceKit:
    """Registers hooks and channels; channels run the hooks through :attr:`hooks`.

    Args:
        hook_timeout: The budget of each sync hook, in seconds.

    Raises:
        ValueError: ``hook_timeout`` is not a finite number of seconds above zero.
    """

    def __init__(self, *, hook_timeout: float = 30.0) -> None:
        self.hooks = HookEngine(hook_timeout=hook_timeout)
        self.approvals = ToolApprovals()
        """Regular tools that need a person's yes on every channel of the kit."""
        self._channels: dict[str, KitChannel] = {}

    def require_approval(
        self, tool: str | None = None, policy: ApprovalPolicy | None = None, **options: Any
    ) -> ApprovalPolicy:
        """Declare that ``tool`` (or any call a ``when=`` rule picks) needs a person's yes
        before its handler runs, on every channel of the kit (see
        :meth:`ToolApprovals.require <voice_hitl.ToolApprovals.require>`).

        Raises:
            ValueError: An inconsistent policy, or a tool declared twice.
            ApprovalSetupError: A registered channel could not ask for it (no human-input
                handler; named approvers where nobody can tell who is speaking; a runtime
                that would run the tool unasked); the policy is not kept.
        """
        return self.approvals.require(tool, policy, **options)

    def hook(
        self,
        trigger: HookTrigger,
        *,
        execution: HookExecution = HookExecution.SYNC,
        priority: int = 0,
        channel_types: Iterable[ChannelType] | None = None,
        fail_closed: bool = False,
    ) -> Callable[[Hook], Hook]:
        """Decorator registering ``async (event, ctx) -> HookResult | None`` for ``trigger``."""

        def decorate(fn: Hook) -> Hook:
            self.hooks.register(
                HookRegistration(
                    trigger,
                    fn,
                    execution,
                    priority,
                    None if channel_types is None else frozenset(channel_types),
                    fail_closed,
                )
            )
            return fn

        return decorate

    def context(self, room_id: str, channel_id: str, channel_type: ChannelType) -> HookContext:
        """The context hooks receive for a call in that room and channel."""
        return HookContext(self, room_id, channel_id, channel_type)

    def register_channel(self, channel: KitChannel) -> None:
        """Register a channel so its doors run this kit's hooks and approval policies.

        A channel serving host tools must be registered (or carry its own
        ``gate.approvals``) before it serves calls: until then its sessions do not start
        and its calls are refused (see :mod:`voice_hitl.tools._approval_setup`).

        Raises:
            ValueError: Another channel with that id is registered.
            ApprovalSetupError: The channel could not ask for a policy the kit declares.
        """
        if channel.channel_id in self._channels:
            raise ValueError(f"a channel with id {channel.channel_id!r} is already registered")
        self._channels[channel.channel_id] = channel
        channel.bind_kit(self)

    def unregister_channel(self, channel: KitChannel) -> None:
        """Forget a channel, so the kit does not keep it alive; a channel calls this itself
        when it closes. Idempotent (another channel registered under that id stays)."""
        if self._channels.get(channel.channel_id) is channel:
            del self._channels[channel.channel_id]
        gate = getattr(channel, "gate", None)
        if isinstance(gate, ToolGate):  # a closed channel no longer holds later policies back
            self.approvals.detach(gate)

    @property
    def channels(self) -> dict[str, KitChannel]:
        """The registered channels by id (a copy)."""
        return dict(self._channels)

    def attach_human_input(self, channel_id: str, handler: HumanInputHandler) -> None:
        """Route the handler's notifications for ``channel_id`` to ``ON_USER_INPUT_REQUIRED``.

        A sync hook that blocks denies the request.
        """
        handler.set_notifier(channel_id, self.notify_input_required)

    async def notify_input_required(self, event: PendingInputEvent) -> str | None:
        """Run ``ON_USER_INPUT_REQUIRED`` for a request: the denial's reason when a sync
        hook blocks it, else None (the notifier :meth:`attach_human_input` installs).

        Cancellation: safe; hooks not yet run do not run.
        """
        ctx = HookContext(self, event.room_id, event.channel_id, event.channel_type)
        result, _ = await self.hooks.run_sync(HookTrigger.ON_USER_INPUT_REQUIRED, event, ctx)
        return result.reason if result.blocked else None

    async def aclose(self) -> None:
        """Close every registered channel, then cancel hook tasks still running. Idempotent.

        Cancellation: don't cancel; a cancelled close may leave channels open.
        """
        for channel in list(self._channels.values()):
            await channel.close()
        await self.hooks.aclose()

    async def __aenter__(self) -> VoiceKit:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
