"""``RealtimePlug``: one realtime provider plugged into a conference, and its teardown."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from providers.base import AudioFormat, AudioOutEvent, ProviderSession, SessionConfig
from voice_hitl import (
    ChannelClosedError,
    ChannelType,
    ConnectHooks,
    Door,
    EventListener,
    ProviderError,
    SessionDriver,
    ToolGate,
)

from ._backend import ConferenceAudio, ConferenceBackend, MixedFrame, SpeakerAudio
from ._config import ConferenceRealtimeConfig
from ._hearing import SpeakerEars
from ._serving import ConferenceHumanInput, QuestionDesk

__all__ = ["RealtimePlug"]

logger = logging.getLogger("conference.plug")


@dataclass(eq=False)
class RealtimePlug:
    """A plugged provider: its gate, session, driver, audio lane and mixed-audio pump, and
    with per-speaker hearing, the per-speaker lane and what hears it."""

    channel_id: str
    config: ConferenceRealtimeConfig
    gate: ToolGate
    human: ConferenceHumanInput | None
    provider_session: ProviderSession
    driver: SessionDriver
    lane: ConferenceAudio
    hooks: ConnectHooks
    pump: asyncio.Task[None] | None = None
    interrupted: bool = False
    speakers: SpeakerAudio | None = None
    ears: SpeakerEars | None = None
    listening: asyncio.Task[None] | None = None

    @classmethod
    async def connect(
        cls,
        channel_id: str,
        config: ConferenceRealtimeConfig,
        *,
        desk: QuestionDesk,
        backend: ConferenceBackend,
        actor: Callable[[], str | None],
        listener: EventListener,
        on_ended: Callable[[str], None] | None = None,
        hooks: ConnectHooks | None = None,
    ) -> RealtimePlug:
        """Connect the provider and open an audio lane; nothing runs until :meth:`start`.

        ``on_ended(reason)`` is called when the provider's event stream ends or fails on its
        own (its open calls already withdrawn with ``reason``). ``hooks`` run around the
        provider's ``connect``; its sent-audio taps see the mixed audio sent to the session, and
        its end hooks run once the session is closed.

        Cancellation: safe; nothing is opened unless this returns.
        """
        human = (
            ConferenceHumanInput(config.human_input_handler, desk)
            if config.human_input_handler is not None
            else None
        )
        gate = ToolGate(
            channel_id,
            ChannelType.CONFERENCE,
            tools=config.tools,
            tool_handler=config.tool_handler,
            human_input=human,
            tool_timeout_seconds=config.tool_timeout_seconds,
        )
        session_id = f"conf_{secrets.token_hex(6)}"
        hooks = hooks or ConnectHooks()
        provider_session = await hooks.connect(
            config.provider,
            SessionConfig(
                instructions=config.instructions,
                tools=tuple(gate.toolset.values()),
                input_format=AudioFormat(config.sample_rate),
                output_format=AudioFormat(config.sample_rate),
                session_id=session_id,
                room_id=channel_id,
            )
        )
        lane = backend.open_audio()

        async def play(event: AudioOutEvent) -> None:
            await lane.play(event.frame)

        driver = SessionDriver(
            provider_session,
            gate,
            session_id=session_id,
            room_id=channel_id,
            door=Door.CONFERENCE,
            actor=actor,
            reasoning_backend=config.reasoning_backend,
            play_audio=play,
            stop_playback=lane.stop_playback,
            on_ended=on_ended,
        )
        driver.add_listener(listener)
        return cls(channel_id, config, gate, human, provider_session, driver, lane, hooks)

    def start(
        self,
        on_frame: Callable[[MixedFrame], None],
        speakers: SpeakerAudio | None = None,
        ears: SpeakerEars | None = None,
    ) -> None:
        """Start reading the session's events and feeding it the mixed audio, and with
        ``speakers`` and ``ears``, hearing each participant's own audio (the plug closes
        both when it disconnects)."""
        self.driver.start()
        self.pump = asyncio.create_task(
            self._pump(on_frame), name=f"mix-in-{self.driver.session_id}"
        )
        if speakers is not None and ears is not None:
            self.speakers, self.ears = speakers, ears
            self.listening = asyncio.create_task(
                self._listen(speakers, ears), name=f"speakers-in-{self.driver.session_id}"
            )

    @staticmethod
    async def _listen(speakers: SpeakerAudio, ears: SpeakerEars) -> None:
        async for frame in speakers.frames():
            ears.feed(frame)

    async def _pump(self, on_frame: Callable[[MixedFrame], None]) -> None:
        try:
            async for frame in self.lane.mixed():
                on_frame(frame)
                await self.hooks.send_audio(
                    self.driver.session_id, self.provider_session, frame.samples
                )
        except (ChannelClosedError, ProviderError) as exc:
            logger.warning("conference %r: mixed audio stopped: %s", self.channel_id, exc)

    async def disconnect(self) -> None:
        """Stop feeding audio, interrupt the model, stop reading, disconnect. Idempotent.

        Open calls stay open for :meth:`settle`.

        Cancellation: don't cancel; call it again to finish.
        """
        for task in (self.pump, self.listening):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self.ears is not None:
            await self.ears.aclose()
        if self.speakers is not None:
            await self.speakers.aclose()
        if not self.interrupted:
            self.interrupted = True
            try:
                await self.provider_session.interrupt()
            except (ChannelClosedError, ProviderError) as exc:
                logger.warning(
                    "conference %r: interrupt on unplug failed: %s", self.channel_id, exc
                )
        await self.driver.stop_reading()
        try:
            await self.provider_session.aclose()
        finally:
            await self.hooks.closed(self.driver.session_id)

    async def settle(self, reason: str) -> None:
        """Withdraw open calls (reported ``cancelled`` with ``reason``), close the
        human-input scope and unhook the kit. Idempotent.

        Cancellation: the calls are cancelled first; cancelling stops only the wait.
        """
        await self.driver.settle(reason)
        if self.human is not None:
            self.human.handler.set_notifier(self.channel_id, None)
            await self.human.handler.close(channel_id=self.channel_id)
        self.gate.kit = None
