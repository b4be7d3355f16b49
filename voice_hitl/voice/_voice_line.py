"""``VoiceLine``: the call line of one voice session (its caller, its provider's voice)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._exceptions import ChannelClosedError
from ..human._answer_json import answer_json
from ..human._pending import PendingInputEvent
from ..responder._call_line import DtmfTap, Heard, Inbox, RecognizingTap
from ..speech import Answer, AnswerSpec
from ..speech.asr._protocol import Recognizer
from ._audio import resample_pcm16
from ._provider_events import PCM16
from ._transport import KeypadTransport
from ._turn_audio import TurnAudio

if TYPE_CHECKING:
    from ._voice_channel import RealtimeVoiceChannel, VoiceSession

__all__ = ["VoiceLine"]


class VoiceLine:
    """Speaks through the session's provider and hears its caller (speech and keypad)."""

    def __init__(self, channel: RealtimeVoiceChannel, session: VoiceSession) -> None:
        self.channel = channel
        self.session = session

    @property
    def can_say(self) -> bool:
        """The provider's ``can_say`` capability."""
        return self.channel.provider.capabilities.can_say

    async def play_audio(self, pcm16: PCM16, sample_rate: int) -> None:
        """Play speech into the session's transport at the channel's output rate.

        Raises:
            ChannelClosedError: The channel has no transport to play into.

        Cancellation: safe; the rest is not played.
        """
        transport = self.channel.transport
        if transport is None:
            raise ChannelClosedError(
                f"voice channel {self.channel.channel_id!r} has no transport to play speech into"
            )
        rate = self.channel.output_format.sample_rate
        audio = resample_pcm16(pcm16, sample_rate, rate)
        step = max(1, rate // 10)
        for start in range(0, len(audio), step):
            await transport.play(self.session.session_id, audio[start : start + step])

    async def say(self, text: str) -> None:
        """Speak ``text`` with the provider's voice.

        Cancellation: safe; speech may already have started.
        """
        await self.session.provider_session.say(text)

    async def stop_speaking(self) -> None:
        """Interrupt the provider and drop unplayed audio.

        Cancellation: safe.
        """
        await self.session.provider_session.interrupt()
        if self.channel.transport is not None:
            await self.channel.transport.stop_playback(self.session.session_id)

    def deliver(
        self,
        event: PendingInputEvent,
        answer: Answer,
        actor_id: str | None,
        *,
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Resolve the request with the answer's JSON (with ``evidence``, when given)."""
        human = self.channel.human_input_handler
        if human is None:
            return False
        return human.handler.resolve(
            event.pending_id, answer_json(answer, actor_id, evidence), by=actor_id, via=answer.via
        )

    def listen(
        self,
        addressed: Collection[str] | None = None,
        expecting: AnswerSpec | None = None,
        recognizer: Recognizer | None = None,
    ) -> Inbox:
        """Hear the session's caller: the provider's transcripts, keypad presses (events from a
        :class:`KeypadTransport`, else tones detected in the audio) and, with a ``recognizer``,
        their audio recognised locally — whichever comes first (a voice session has one
        caller; ``addressed`` is ignored). The provider's transcriptions come with the
        audio figures of the caller audio forwarded to it (`TurnAudio`)."""
        inbox = Inbox(None)
        provider_session = self.session.provider_session
        provider_session.expect_answer(expecting)
        inbox.on_close(lambda: provider_session.expect_answer(None))
        rate = self.channel.input_format.sample_rate
        # the caller audio forwarded to the provider measures the provider's transcriptions
        turn = TurnAudio(inbox, rate)
        inbox.on_close(self.session.add_audio_tap(turn))
        inbox.on_close(self.session.add_listener(turn.feed))
        transport = self.channel.transport
        if isinstance(transport, KeypadTransport):  # keys arrive as events, not as tones
            inbox.on_close(
                transport.add_keypad_listener(
                    self.session.session_id, lambda key: inbox.offer(Heard("dtmf", key, None))
                )
            )
        else:
            inbox.on_close(self.session.add_audio_tap(DtmfTap(inbox, rate)))
        if recognizer is not None:
            tap = RecognizingTap(inbox, recognizer, rate, expecting)
            inbox.on_close(self.session.add_audio_tap(tap))
        return inbox
