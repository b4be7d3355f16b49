"""``ConnectHooks``: code that runs at the start and end of each provider session a channel
opens, and on the audio it sends.

The session's start: ``RealtimeVoiceChannel.add_connect_hook`` and
``ConferenceChannel.add_connect_hook`` take a hook ``hook(provider, config, connect)`` that
must return ``await connect(config)`` (or raise): it can prepare for the session before it is
dialled (a call recorder opens its folder, so the setup frames have somewhere to go), see it
once open, and learn of a failed connect. Hooks nest in the order they were added, the first
outermost.

The audio: ``add_sent_audio_tap`` taps ``tap(session_id, frame)`` see each frame of caller
audio (a conference's mixed audio) the channel hands to a provider session, on the event loop,
just before it is sent; they must not block (a call recorder queues the frame).

The end: ``add_session_end_hook`` hooks ``hook(session_id)`` are awaited once a session that
connected is closed, whether or not its close succeeded (a call recorder finishes the call).

A tap or end hook that raises is logged and stays attached; the others still run and the
session goes on (or ends) as it would have.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ._provider import ProviderSession, RealtimeProvider, SessionConfig
from ._provider_events import PCM16

__all__ = ["ConnectHook", "ConnectHooks", "SentAudioTap", "SessionEndHook", "SessionHooked"]

logger = logging.getLogger("voice_hitl.voice")

Connect = Callable[[SessionConfig], Awaitable[ProviderSession]]

ConnectHook = Callable[[RealtimeProvider, SessionConfig, Connect], Awaitable[ProviderSession]]
"""``hook(provider, config, connect)``: returns ``await connect(config)`` (or raises)."""

SentAudioTap = Callable[[str, PCM16], None]
"""``tap(session_id, frame)``: one frame handed to the provider session; must not block."""

SessionEndHook = Callable[[str], Awaitable[None]]
"""``hook(session_id)``: awaited once the provider session of ``session_id`` is closed."""

_T = TypeVar("_T")


def _added(hooks: list[_T], hook: _T) -> Callable[[], None]:
    hooks.append(hook)

    def remove() -> None:
        if hook in hooks:
            hooks.remove(hook)

    return remove


class ConnectHooks:
    """The session hooks of one channel: connect hooks, sent-audio taps and end hooks."""

    def __init__(self) -> None:
        self._hooks: list[ConnectHook] = []
        self._audio_taps: list[SentAudioTap] = []
        self._end_hooks: list[SessionEndHook] = []

    def add(self, hook: ConnectHook) -> Callable[[], None]:
        """Run ``hook`` around each session opened from now on; returns a remover
        (idempotent)."""
        return _added(self._hooks, hook)

    def add_sent_audio_tap(self, tap: SentAudioTap) -> Callable[[], None]:
        """Hand ``tap`` each frame sent to a session from now on; returns a remover
        (idempotent)."""
        return _added(self._audio_taps, tap)

    def add_session_end_hook(self, hook: SessionEndHook) -> Callable[[], None]:
        """Await ``hook`` once each session is closed from now on; returns a remover
        (idempotent)."""
        return _added(self._end_hooks, hook)

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

    async def send_audio(self, session_id: str, session: ProviderSession, frame: PCM16) -> None:
        """Hand ``frame`` to the sent-audio taps, then send it to ``session``.

        Raises:
            ProviderError, ChannelClosedError: What ``session.send_audio`` raised.

        Cancellation: as ``session.send_audio``; the taps have seen the frame.
        """
        for tap in list(self._audio_taps):
            try:
                tap(session_id, frame)
            except Exception:
                logger.exception("sent-audio tap %r failed on session %r", tap, session_id)
        await session.send_audio(frame)

    async def closed(self, session_id: str) -> None:
        """Await the end hooks: the channel has closed the provider session of ``session_id``
        (call it in a ``finally``, so a failed close ends the session too). Raises nothing a
        hook raised (it is logged).

        Cancellation: don't cancel; the hooks after the one running are not run.
        """
        for hook in list(self._end_hooks):
            try:
                await hook(session_id)
            except Exception:
                logger.exception("session end hook %r failed on session %r", hook, session_id)


class SessionHooked:
    """The public session hooks of a channel that opens provider sessions (a voice channel's
    calls, a conference's plugs), over the channel's :class:`ConnectHooks`."""

    _connect_hooks: ConnectHooks

    def add_connect_hook(self, hook: ConnectHook) -> Callable[[], None]:
        """Run ``hook(provider, config, connect)`` around each provider session opened from
        now on; it must return ``await connect(config)`` (or raise). Returns a remover.

        A call recorder uses it to prepare for a session before it is dialled; see
        :class:`~voice_hitl.ConnectHooks`.
        """
        return self._connect_hooks.add(hook)

    def add_sent_audio_tap(self, tap: SentAudioTap) -> Callable[[], None]:
        """Call ``tap(session_id, frame)`` with each frame of audio (a caller's, a
        conference's mix) handed to a provider session from now on, just before it is sent
        (on the event loop; must not block). Returns a remover. A call recorder keeps the
        caller's audio with it."""
        return self._connect_hooks.add_sent_audio_tap(tap)

    def add_session_end_hook(self, hook: SessionEndHook) -> Callable[[], None]:
        """Await ``hook(session_id)`` once each provider session opened from now on is closed
        (whether or not its close succeeded). Returns a remover. A call recorder finishes the
        call's recording there."""
        return self._connect_hooks.add_session_end_hook(hook)


def _bind(hook: ConnectHook, provider: RealtimeProvider, inner: Connect) -> Connect:
    async def connect(config: SessionConfig) -> ProviderSession:
        return await hook(provider, config, inner)

    return connect
