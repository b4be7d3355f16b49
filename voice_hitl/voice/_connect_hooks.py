"""``ConnectHooks``: code that runs around each provider session a channel opens.

``RealtimeVoiceChannel.add_connect_hook`` and ``ConferenceChannel.add_connect_hook`` take a
hook ``hook(provider, config, connect)`` that must return ``await connect(config)`` (or raise):
it can prepare for the session before it is dialled (a call recorder opens its folder, so the
setup frames have somewhere to go), see it once open, and learn of a failed connect. Hooks
nest in the order they were added, the first outermost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ._provider import ProviderSession, RealtimeProvider, SessionConfig

__all__ = ["ConnectHook", "ConnectHooks"]

Connect = Callable[[SessionConfig], Awaitable[ProviderSession]]

ConnectHook = Callable[[RealtimeProvider, SessionConfig, Connect], Awaitable[ProviderSession]]
"""``hook(provider, config, connect)``: returns ``await connect(config)`` (or raises)."""


class ConnectHooks:
    """The connect hooks of one channel."""

    def __init__(self) -> None:
        self._hooks: list[ConnectHook] = []

    def add(self, hook: ConnectHook) -> Callable[[], None]:
        """Run ``hook`` around each session opened from now on; returns a remover
        (idempotent)."""
        self._hooks.append(hook)

        def remove() -> None:
            if hook in self._hooks:
                self._hooks.remove(hook)

        return remove

    async def connect(self, provider: RealtimeProvider, config: SessionConfig) -> ProviderSession:
        """``provider.connect(config)`` through the hooks.

        Raises:
            ProviderError: The provider could not connect (or what a hook raised).

        Cancellation: safe when the provider's ``connect`` and the hooks are.
        """
        connect: Connect = provider.connect
        for hook in reversed(self._hooks):
            connect = _bind(hook, provider, connect)
        return await connect(config)


def _bind(hook: ConnectHook, provider: RealtimeProvider, inner: Connect) -> Connect:
    async def connect(config: SessionConfig) -> ProviderSession:
        return await hook(provider, config, inner)

    return connect
