"""``PhoneCall``: one call on a Twilio Media Stream, between the socket and a voice session.

Caller audio is decoded, resampled to the session's input rate and queued for the channel;
keys go to keypad listeners; agent audio is resampled to 8 kHz and queued for Twilio, where one
writer task (:meth:`PhoneCall.write`) sends everything in order. The call also keeps, per
open question, whether the caller has heard it: the question counts as heard once Twilio has
played (by our marks) the agent's first turn that ends after the question was asked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from voice_hitl.voice._provider_events import PCM16

from ._protocol import (
    PHONE_RATE,
    AudioPlayed,
    CallerAudio,
    KeyPressed,
    MediaStream,
    StreamStarted,
    StreamStopped,
)
from ._resample import StreamResampler

__all__ = ["PhoneCall", "Question"]

logger = logging.getLogger("voice_hitl.providers.twilio")


@dataclass(slots=True)
class Question:
    """An open request asked on the call, and how much of it the caller has heard."""

    pending_id: str
    tool_call_id: str
    asked_at: int
    """Agent audio sent (8 kHz samples) when the request opened."""
    ends_at: int | None = None
    """Agent audio sent when the first agent turn after it ended (None: not yet)."""
    heard: bool = False


class PhoneCall:
    """One Media Stream call (see the module docstring).

    Args:
        send: Sends one text message on the socket.
        input_rate: The session's caller-audio rate.
        output_rate: The rate of the agent audio the session plays.
        on_heard: Called with a question once the caller has heard it (must not block).
    """

    def __init__(
        self,
        send: Callable[[str], Awaitable[None]],
        *,
        input_rate: int,
        output_rate: int,
        on_heard: Callable[[Question], None] | None = None,
    ) -> None:
        self.stream = MediaStream()
        self.started: StreamStarted | None = None
        self._send = send
        self._to_session = StreamResampler(PHONE_RATE, input_rate)
        self._to_phone = StreamResampler(output_rate, PHONE_RATE)
        self._inbound: asyncio.Queue[PCM16 | None] = asyncio.Queue()
        self._keypad: list[Callable[[str], None]] = []
        self._questions: dict[str, Question] = {}
        self._on_heard = on_heard
        self._wakeup = asyncio.Event()
        self._lanes_closed = False
        self.hang_up_requested = asyncio.Event()
        """Set when the session ended on our side: the socket should close (Twilio then goes
        on with the TwiML after ``<Connect>``)."""
        self.last_frame_in: float = 0.0
        """``time.perf_counter()`` when the last caller frame was queued (for benchmarks)."""

    # -- from Twilio -------------------------------------------------------------------------

    def receive(self, text: str | bytes) -> None:
        """Take one message from the socket and act on it.

        Raises:
            StreamProtocolError: The message cannot be used (see ``MediaStream.receive``).
        """
        self.stream.receive(text)
        for event in self.stream.events():
            if isinstance(event, CallerAudio):
                if not self._lanes_closed:
                    self._inbound.put_nowait(self._to_session(event.frame))
                    self.last_frame_in = time.perf_counter()
            elif isinstance(event, KeyPressed):
                for listener in list(self._keypad):
                    try:
                        listener(event.digit)
                    except Exception:
                        logger.exception("keypad listener failed on key %r", event.digit)
            elif isinstance(event, AudioPlayed):
                self._played(event.position)
            elif isinstance(event, StreamStarted):
                self.started = event
            elif isinstance(event, StreamStopped):
                self.close_lanes()
        self._wake()

    def _played(self, position: int) -> None:
        for question in list(self._questions.values()):
            if question.heard or question.ends_at is None or position < question.ends_at:
                continue
            question.heard = True
            if self._on_heard is not None:
                try:
                    self._on_heard(question)
                except Exception:
                    logger.exception("on_heard failed for request %s", question.pending_id)

    # -- the session's side (through TwilioTransport) ----------------------------------------

    async def caller_audio(self) -> AsyncIterator[PCM16]:
        """The caller's audio at the session's rate; ends when the call's lanes close.

        Cancellation: safe; no frame is lost.
        """
        while True:
            frame = await self._inbound.get()
            if frame is None:
                return
            yield frame

    def play(self, frame: PCM16) -> None:
        """Queue agent audio for the caller."""
        if not self._lanes_closed:
            self.stream.send_audio(self._to_phone(frame))
            self._wake()

    def clear(self) -> None:
        """Barge-in: drop the agent audio the caller has not heard yet."""
        if not self._lanes_closed:
            self.stream.clear()
            self._to_phone.reset()
            self._wake()

    def add_keypad_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener`` with each key pressed; returns its remover."""
        self._keypad.append(listener)
        return lambda: self._keypad.remove(listener) if listener in self._keypad else None

    def close_lanes(self) -> None:
        """End the caller's audio and drop later agent audio; idempotent."""
        if not self._lanes_closed:
            self._lanes_closed = True
            self._inbound.put_nowait(None)
            self._wake()

    def end_from_session(self) -> None:
        """The session ended on our side: close the lanes and ask for the socket to close."""
        self.close_lanes()
        self.hang_up_requested.set()

    # -- what the caller heard ---------------------------------------------------------------

    def question_asked(self, pending_id: str, tool_call_id: str) -> None:
        """A request opened on this call: its question is spoken from here on."""
        self._questions[pending_id] = Question(pending_id, tool_call_id, self.stream.sent_samples)

    def question_settled(self, pending_id: str) -> None:
        """A request settled (answered, timed out, withdrawn): stop tracking it."""
        self._questions.pop(pending_id, None)

    def agent_turn_ended(self) -> None:
        """The agent finished a turn: send the tail of its audio, and each open question
        whose audio has been sent since it was asked ends here."""
        self.stream.flush()
        for question in self._questions.values():
            if question.ends_at is None and self.stream.sent_samples > question.asked_at:
                question.ends_at = self.stream.sent_samples
        self._played(self.stream.played_samples)
        self._wake()

    @property
    def open_questions(self) -> list[Question]:
        """Requests asked on this call and not settled, oldest first."""
        return list(self._questions.values())

    # -- the writer ----------------------------------------------------------------------------

    def _wake(self) -> None:
        self._wakeup.set()

    async def write(self) -> None:
        """Send what the stream has queued, in order, until cancelled (the call's one writer).

        Cancellation: safe; unsent messages stay queued.
        """
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            for message in self.stream.outgoing():
                await self._send(message)
