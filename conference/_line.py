"""``ConferenceLine``: a conference as a spoken dialogue sees it.

The bot speaks through the plugged provider; it hears the participants through speaker-attributed
transcriptions (the provider's, or the backend's); answers go through the conference's answer
desk, so addressing and quorum apply to spoken answers as to any other.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from providers.base import PCM16
from voice_hitl import Heard, Inbox, PendingInputEvent, answer_json
from voice_hitl.speech import Answer, AnswerSpec
from voice_hitl.speech.asr import Recognizer

from ._backend import ConferenceEvent, SpeakerTranscription

if TYPE_CHECKING:
    from ._channel import ConferenceChannel

__all__ = ["ConferenceLine"]


class ConferenceLine:
    """Speaks to the whole call; hears only the addressed participants.

    Args:
        channel: The conference.
        keypad: Every addressed participant's line carries keypad tones the channel reads
            (per-speaker hearing of phone or SIP legs); otherwise no prompt offers the keypad.
    """

    def __init__(self, channel: ConferenceChannel, *, keypad: bool = False) -> None:
        self.channel = channel
        self.keypad = keypad

    @property
    def can_say(self) -> bool:
        """The plugged provider's ``can_say`` capability (False when unplugged)."""
        config = self.channel.realtime_config
        return config is not None and config.provider.capabilities.can_say

    async def play_audio(self, pcm16: PCM16, sample_rate: int) -> None:
        """Play speech to everyone in the call (the bot's track).

        Cancellation: safe; the rest is not played.
        """
        await self.channel.play_bot_audio(pcm16, sample_rate)

    async def say(self, text: str) -> None:
        """Speak ``text`` through the plugged provider (nothing when unplugged).

        Cancellation: safe; speech may already have started.
        """
        session = self.channel.provider_session
        if session is not None:
            await session.say(text)

    async def stop_speaking(self) -> None:
        """Interrupt the plugged provider.

        Cancellation: safe.
        """
        session = self.channel.provider_session
        if session is not None:
            await session.interrupt()

    def listen(
        self,
        addressed: Collection[str] | None = None,
        expecting: AnswerSpec | None = None,
        recognizer: Recognizer | None = None,
    ) -> Inbox:
        """Hear attributed speech of ``addressed`` participants (anyone's when None). A local
        ``recognizer`` is not used here: the channel's per-speaker hearing (or the provider)
        recognises."""
        inbox = Inbox(addressed if addressed is not None else None)
        self.channel.expect_answer(expecting)
        inbox.on_close(lambda: self.channel.expect_answer(None))

        def from_backend(event: ConferenceEvent) -> None:
            if isinstance(event, SpeakerTranscription) and event.final:
                inbox.offer(Heard("speech", event.text, event.participant_id))

        inbox.on_close(self.channel.backend.add_listener(from_backend))
        inbox.on_close(self.channel.add_speech_listener(inbox.offer))
        return inbox

    def deliver(
        self,
        event: PendingInputEvent,
        answer: Answer,
        actor_id: str | None,
        *,
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Hand one participant's answer to the desk: a vote for an approval (it counts
        toward the quorum; its ``evidence`` is journaled beside the vote's receipt), else the
        answer JSON. Ignored (False) without a speaker."""
        if actor_id is None:
            return False
        text = answer_json(answer, actor_id, evidence)
        if self.channel.approval(event.pending_id) is not None and isinstance(answer.value, bool):
            text = "approve" if answer.value else "deny"
        return self.channel.answer(
            event.pending_id, actor_id, text, via=answer.via, evidence=evidence
        )
