"""Transports: where a session's caller audio comes from and the agent's audio goes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Protocol, runtime_checkable

import numpy as np

from .._exceptions import AudioFormatError, ChannelClosedError
from ._provider_events import PCM16

__all__ = ["AudioFormatError", "KeypadTransport", "LocalTransport", "Transport", "check_pcm16"]


def check_pcm16(frame: object) -> PCM16:
    """Return ``frame`` if it is mono PCM16 (a 1-D int16 numpy array).

    Raises:
        AudioFormatError: (a ``ValueError``) naming what is wrong: not an array, float32 or
            int32 samples, or more than one dimension.
    """
    if not isinstance(frame, np.ndarray):
        raise AudioFormatError(f"audio frame must be a numpy array, got {type(frame).__name__}")
    if frame.dtype != np.int16:
        hint = " (scale floats by 32767 and convert)" if frame.dtype.kind == "f" else ""
        raise AudioFormatError(
            f"audio frame must have dtype int16 (PCM16), got {frame.dtype}{hint}"
        )
    if frame.ndim != 1:
        raise AudioFormatError(f"audio frame must be mono (1-D), got shape {frame.shape}")
    return frame


@runtime_checkable
class Transport(Protocol):
    """Moves audio between the person on the call and a session."""

    def caller_audio(self, session_id: str) -> AsyncIterator[PCM16]:
        """The caller's audio for a session; ends when the caller hangs up."""
        ...

    async def play(self, session_id: str, frame: PCM16) -> None:
        """Play agent audio to the caller.

        Cancellation: safe; the frame is dropped.
        """

    async def stop_playback(self, session_id: str) -> None:
        """Drop agent audio not yet played (barge-in).

        Cancellation: safe.
        """

    async def close_session(self, session_id: str) -> None:
        """Release the session's audio lanes; idempotent.

        Cancellation: safe.
        """


@runtime_checkable
class KeypadTransport(Protocol):
    """A transport that hears the caller's keys out of band (a phone line's DTMF events).

    A voice line listening on such a transport takes keys from it instead of detecting tones
    in the caller's audio, so a key is never counted twice.
    """

    def add_keypad_listener(
        self, session_id: str, listener: Callable[[str], None]
    ) -> Callable[[], None]:
        """Call ``listener`` with each key the session's caller presses (``0``-``9``, ``*``,
        ``#``, ``A``-``D``); returns a function that removes it. ``listener`` must not block."""
        ...


class _Lane:
    __slots__ = ("closed", "inbound", "played")

    def __init__(self) -> None:
        self.inbound: asyncio.Queue[PCM16 | None] = asyncio.Queue()
        self.played: list[PCM16] = []
        self.closed = False


class LocalTransport:
    """An in-memory transport: push caller frames in, read what the agent played."""

    def __init__(self) -> None:
        self._lanes: dict[str, _Lane] = {}

    def _lane(self, session_id: str) -> _Lane:
        lane = self._lanes.get(session_id)
        if lane is None:
            lane = self._lanes[session_id] = _Lane()
        return lane

    def push_caller_audio(self, session_id: str, frame: PCM16) -> None:
        """Queue a caller frame for the session.

        Raises:
            AudioFormatError: The frame is not mono PCM16 (a ``ValueError``).
            ChannelClosedError: The session's lanes are closed.
        """
        lane = self._lane(session_id)
        if lane.closed:
            raise ChannelClosedError(f"transport lanes of session {session_id!r} are closed")
        lane.inbound.put_nowait(check_pcm16(frame))

    def hang_up(self, session_id: str) -> None:
        """End the caller's audio for the session."""
        self._lane(session_id).inbound.put_nowait(None)

    def played(self, session_id: str) -> list[PCM16]:
        """The agent audio played to the session so far."""
        return list(self._lane(session_id).played)

    async def caller_audio(self, session_id: str) -> AsyncIterator[PCM16]:
        lane = self._lane(session_id)
        while not lane.closed:
            frame = await lane.inbound.get()
            if frame is None:
                return
            yield frame

    async def play(self, session_id: str, frame: PCM16) -> None:
        lane = self._lane(session_id)
        if not lane.closed:
            lane.played.append(check_pcm16(frame))

    async def stop_playback(self, session_id: str) -> None:
        return None

    async def close_session(self, session_id: str) -> None:
        lane = self._lane(session_id)
        if not lane.closed:
            lane.closed = True
            lane.inbound.put_nowait(None)
