"""Test rig for conference channels: a mock provider that reports audio it was sent, a
three-person in-memory call, and the conference's human-input tools."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from doors import Host, ModelRead, Observed

from conference import ConferenceChannel, ConferenceRealtimeConfig, InMemoryConferenceBackend
from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    AITool,
    HumanInputToolHandler,
    ToolHandler,
    VoiceKit,
)
from voice_hitl.responder._risk import EvidencePolicy

ASK = ASK_USER_QUESTION
CONFIRM = CONFIRM_ACTION
LOOKUP = AITool(
    name="lookup",
    description="A host tool.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)
KEY = b"application-receipt-key"


def conference_tools(timeout: float = 300.0) -> HumanInputToolHandler:
    return HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction"}, timeout=timeout, tool_definitions=[ASK, CONFIRM]
    )


@dataclass
class Rig:
    kit: VoiceKit
    conf: ConferenceChannel
    backend: InMemoryConferenceBackend
    provider: MockRealtimeProvider
    observed: Observed
    human: HumanInputToolHandler
    config: ConferenceRealtimeConfig

    def call(self, name: str, arguments: dict[str, Any] | str) -> asyncio.Task[ModelRead]:
        """The model calls a tool on the conference door; the task ends with what it reads."""
        call_id = self.provider.simulate_tool_call(self.conf, name, arguments)
        return asyncio.create_task(self._result(call_id))

    async def _result(self, call_id: str) -> ModelRead:
        record = await self.provider.wait_for_tool_result(call_id)
        return ModelRead(record.output, record.is_error)


async def make_rig(
    *,
    timeout: float = 300.0,
    host: ToolHandler | None = None,
    people: tuple[tuple[str, str], ...] = (("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")),
    plug: bool = True,
    human: HumanInputToolHandler | None = None,
    evidence: EvidencePolicy | None = None,
) -> Rig:
    kit = VoiceKit()
    observed = Observed.on(kit)
    backend = InMemoryConferenceBackend(frame_samples=160)
    for participant_id, name in people:
        backend.join(participant_id, name)
    provider = MockRealtimeProvider()
    human = human if human is not None else conference_tools(timeout)
    config = ConferenceRealtimeConfig(
        provider,
        tools=[LOOKUP],
        tool_handler=host or Host(),
        human_input_handler=human,
        instructions="You are the meeting bot.",
    )
    conf = ConferenceChannel("conf", backend=backend, realtime=config, evidence=evidence)
    kit.register_channel(conf)
    conf.receipt_key = KEY
    if plug:
        await conf.plug_realtime()
    return Rig(kit, conf, backend, provider, observed, human, config)
