"""The hearing half of :class:`~conference.ConferenceChannel`: what it hears, and whose it is.

With per-speaker hearing (``hearing=``), each utterance comes from the participant's own
stream (:class:`~conference.SpeakerEars`) and is theirs; without it, the provider's
transcription of the mix is attributed by the speakers the backend names in the mix's frames
(the one participant heard during the utterance, else nobody).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from providers.base import ProviderEvent, SpeechStartedEvent, TranscriptionEvent
from voice_hitl import Heard
from voice_hitl.speech import AnswerSpec

from ._attribution import TurnAttribution, attribution
from ._backend import ConferenceBackend, MixedFrame
from ._desk import AnswerDesk
from ._hearing import HeardSpan, PerSpeakerHearing, SpeakerEars
from ._plug import RealtimePlug

__all__ = ["HearingApi"]

logger = logging.getLogger("conference.channel")


class HearingApi:
    """Speech heard in the call: per speaker, or from the mix; its listeners."""

    _channel_id: str
    backend: ConferenceBackend
    hearing: PerSpeakerHearing | None
    _plug: RealtimePlug | None
    _turn: TurnAttribution
    _utterance: set[str | None]
    _desk: AnswerDesk
    _speech_listeners: list[Callable[[Heard], None]]
    _provider_listeners: list[Callable[[ProviderEvent], None]]

    @property
    def ears(self) -> SpeakerEars | None:
        """What hears each participant while a provider is plugged (None without
        ``hearing=``)."""
        return None if self._plug is None else self._plug.ears

    def expect_answer(self, spec: AnswerSpec | None) -> None:
        """The answer the participants are asked for (None: open dictation), for the
        per-speaker recogniser and the plugged provider."""
        plug = self._plug
        if plug is not None:
            plug.provider_session.expect_answer(spec)
            if plug.ears is not None:
                plug.ears.expect(spec)

    def _heard(self, span: HeardSpan) -> None:
        """One participant's utterance, key or start of speech, heard on their own stream."""
        heard = span.heard
        speaker = heard.speaker_id
        if speaker is None or speaker not in self.backend.participants:
            logger.info(
                "conference %r: %s of %r, who left, ignored", self._channel_id, heard.kind, speaker
            )
            return
        if heard.kind == "speech":
            self._turn.heard(speaker)
        self._hear(heard)
        if heard.kind == "speech":
            self._desk.spoken(speaker, heard.text, heard)

    def _on_frame(self, frame: MixedFrame) -> None:
        if self.hearing is not None:
            return  # attributed per speaker, never from the mix
        for speaker in frame.speakers:
            who = speaker if speaker in self.backend.participants else None
            self._turn.heard(who)
            self._utterance.add(who)

    def add_speech_listener(self, listener: Callable[[Heard], None]) -> Callable[[], None]:
        """Call ``listener`` with what the plugged provider heard participants say (attributed
        final utterances, and speech starting); returns a remover."""
        self._speech_listeners.append(listener)
        return lambda: (
            self._speech_listeners.remove(listener) if listener in self._speech_listeners else None
        )

    def _hear(self, heard: Heard) -> None:
        for listener in list(self._speech_listeners):
            try:
                listener(heard)
            except Exception:
                logger.exception("conference %r: speech listener failed", self._channel_id)

    def add_provider_listener(
        self, listener: Callable[[ProviderEvent], None]
    ) -> Callable[[], None]:
        """Observe the plugged provider's events (this plug and later ones); returns a
        remover. The listener must not block."""
        self._provider_listeners.append(listener)
        return lambda: (
            self._provider_listeners.remove(listener)
            if listener in self._provider_listeners
            else None
        )

    def _on_provider_event(self, event: ProviderEvent) -> None:
        for listener in list(self._provider_listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("conference %r: provider listener failed", self._channel_id)
        if isinstance(event, SpeechStartedEvent):
            if self.hearing is None:  # else each speaker's own start is reported
                self._hear(Heard("speech_started"))
            return
        if not isinstance(event, TranscriptionEvent) or not event.final:
            return
        if event.role == "assistant":
            self._turn.bot_spoke()
            return
        if self.hearing is not None:
            return  # the mix's transcription is the provider's conversation, nobody's answer
        # The provider's own attribution, else the backend's: the one participant heard
        # during this utterance. Overlapping speakers make it nobody's answer.
        heard, self._utterance = self._utterance, set()
        speaker = event.speaker_id
        if speaker is None and len(heard) == 1:
            speaker = next(iter(heard))
        if speaker is None:
            return
        if speaker not in self.backend.participants:
            logger.warning(
                "conference %r: speaker %r is not on the roster", self._channel_id, speaker
            )
            self._turn.heard(None)
            return
        self._turn.heard(speaker)
        said = replace(Heard.of(event, speaker), attribution=attribution(speaker, heard))
        self._hear(said)
        self._desk.spoken(speaker, said.text, said)
