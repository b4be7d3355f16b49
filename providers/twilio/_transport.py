"""``TwilioTransport``: the ``Transport`` of a voice channel whose callers phone in."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from voice_hitl import ChannelClosedError
from voice_hitl.voice._provider_events import PCM16
from voice_hitl.voice._transport import check_pcm16

from ._call import PhoneCall

__all__ = ["TwilioTransport"]


class TwilioTransport:
    """Connects each phone call's Media Stream (served by :class:`PhoneServer`) to its
    session of a ``RealtimeVoiceChannel``: caller audio in, agent audio out, keypad presses
    as events (a :class:`~voice_hitl.KeypadTransport`), barge-in as ``clear``."""

    def __init__(self) -> None:
        self._calls: dict[str, PhoneCall] = {}

    def attach(self, session_id: str, call: PhoneCall) -> None:
        """Serve ``session_id`` from ``call`` (the server does this before the session starts).

        Raises:
            ValueError: The session already has a call.
        """
        if session_id in self._calls:
            raise ValueError(f"session {session_id!r} already has a phone call")
        self._calls[session_id] = call

    def detach(self, session_id: str) -> None:
        """Forget the session's call; idempotent."""
        self._calls.pop(session_id, None)

    def call(self, session_id: str) -> PhoneCall | None:
        """The session's call, or None."""
        return self._calls.get(session_id)

    async def caller_audio(self, session_id: str) -> AsyncIterator[PCM16]:
        """The caller's audio at the channel's input rate; ends when the caller hangs up.

        Raises:
            ChannelClosedError: No call serves this session.

        Cancellation: safe; no frame is lost.
        """
        call = self._calls.get(session_id)
        if call is None:
            raise ChannelClosedError(f"no phone call serves session {session_id!r}")
        async for frame in call.caller_audio():
            yield frame

    async def play(self, session_id: str, frame: PCM16) -> None:
        """Queue agent audio for the caller (dropped once the call has ended).

        Raises:
            AudioFormatError: The frame is not mono PCM16.

        Cancellation: safe; the frame is queued whole or not at all.
        """
        call = self._calls.get(session_id)
        if call is not None:
            call.play(check_pcm16(frame))

    async def stop_playback(self, session_id: str) -> None:
        """Send ``clear``: the caller stops hearing audio not yet played.

        Cancellation: safe.
        """
        call = self._calls.get(session_id)
        if call is not None:
            call.clear()

    async def close_session(self, session_id: str) -> None:
        """The session ended: close the caller's lanes and hang up the stream; idempotent.

        Cancellation: safe.
        """
        call = self._calls.pop(session_id, None)
        if call is not None:
            call.end_from_session()

    def add_keypad_listener(
        self, session_id: str, listener: Callable[[str], None]
    ) -> Callable[[], None]:
        """Call ``listener`` with each key the session's caller presses; returns its remover
        (a no-op when no call serves the session)."""
        call = self._calls.get(session_id)
        if call is None:
            return lambda: None
        return call.add_keypad_listener(listener)
