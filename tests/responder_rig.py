"""A voice channel on the mock provider with a VoiceResponder serving it."""

from __future__ import annotations

from typing import Any

from doors import Observed, human_tools

from providers.base import ProviderCapabilities
from providers.mock import MockRealtimeProvider
from voice_hitl import LocalTransport, RealtimeVoiceChannel, VoiceKit, VoiceResponder, VoiceSession


class Rig:
    def __init__(
        self,
        *,
        timeout: float = 300.0,
        capabilities: ProviderCapabilities | None = None,
        **responder: Any,
    ) -> None:
        self.kit = VoiceKit()
        self.observed = Observed.on(self.kit)
        self.provider = MockRealtimeProvider(capabilities)
        self.transport = LocalTransport()
        self.voice = RealtimeVoiceChannel(
            "voice",
            provider=self.provider,
            transport=self.transport,
            human_input_handler=human_tools(timeout),
        )
        self.kit.register_channel(self.voice)
        self.responder = VoiceResponder(self.kit, **responder)
        self.responder.serve(self.voice)

    async def start(self) -> VoiceSession:
        return await self.voice.start_session("room", participant_id="caller-1")

    async def said(self, count: int) -> list[str]:
        await self.provider.wait_for("say", count)
        return self.provider.said

    async def close(self) -> None:
        await self.responder.aclose()
        await self.kit.aclose()
