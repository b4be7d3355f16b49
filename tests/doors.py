"""Test helpers: drive a tool call through each door of a voice channel the same way."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from provider_sides import MockSide, ModelSide

from providers.mock import MockRealtimeProvider
from voice_hitl import (
    ASK_USER_QUESTION,
    CONFIRM_ACTION,
    AITool,
    HookContext,
    HookTrigger,
    HumanInputToolHandler,
    PendingInputEvent,
    RealtimeVoiceChannel,
    ReasoningReply,
    ReasoningTurn,
    ToolCaller,
    ToolCallReport,
    ToolResult,
    VoiceKit,
    VoiceSession,
)

ASK = ASK_USER_QUESTION
CONFIRM = CONFIRM_ACTION
LOOKUP = AITool(
    name="lookup",
    description="A host tool.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
)

DOORS = ["provider", "recovered", "reasoning"]


class Host:
    """A host tool handler: records calls, answers ``host:<name>``, optionally slowly."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[str] = []
        self.delay = delay

    async def __call__(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls.append(name)
        if self.delay:
            await asyncio.sleep(self.delay)
        return f"host:{name}"


def human_tools(timeout: float = 300.0) -> HumanInputToolHandler:
    return HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction"}, timeout=timeout, tool_definitions=[ASK, CONFIRM]
    )


@dataclass
class QueueBackend:
    """A reasoning backend whose turns call the tools a test queued."""

    queued: asyncio.Queue[tuple[str, dict[str, Any], asyncio.Future[ToolResult]]] = field(
        default_factory=asyncio.Queue
    )

    async def respond(self, turn: ReasoningTurn, call_tool: ToolCaller) -> ReasoningReply | None:
        name, arguments, future = self.queued.get_nowait()
        result = await call_tool(name, arguments)
        future.set_result(result)
        return None


@dataclass
class Observed:
    """What hooks saw, as queues a test can wait on."""

    requests: asyncio.Queue[PendingInputEvent] = field(default_factory=asyncio.Queue)
    reports: asyncio.Queue[ToolCallReport] = field(default_factory=asyncio.Queue)

    @classmethod
    def on(cls, kit: VoiceKit) -> Observed:
        observed = cls()

        @kit.hook(HookTrigger.ON_USER_INPUT_REQUIRED)
        async def requested(event: PendingInputEvent, ctx: HookContext) -> None:
            observed.requests.put_nowait(event)

        @kit.hook(HookTrigger.ON_TOOL_CALL)
        async def reported(report: ToolCallReport, ctx: HookContext) -> None:
            observed.reports.put_nowait(report)

        return observed


@dataclass(frozen=True)
class ModelRead:
    """What the model got back for a call: the text and whether it was an error."""

    text: str
    is_error: bool
    label: str = ""

    def json(self) -> Any:
        return json.loads(self.text)


class DoorDriver:
    """Issues a call through one door and waits for what the model reads.

    ``model`` is the mock provider or a :class:`provider_sides.ModelSide` (the model's side of
    any provider: the mock, or a loopback test server of a real one).
    """

    def __init__(
        self, door: str, model: MockRealtimeProvider | ModelSide, backend: QueueBackend | None
    ) -> None:
        self.door = door
        self.side: ModelSide = MockSide(model) if isinstance(model, MockRealtimeProvider) else model
        self.backend = backend

    def call(
        self, session: VoiceSession, name: str, arguments: dict[str, Any]
    ) -> asyncio.Task[ModelRead]:
        """Start a call; the task ends with what the model reads."""
        if self.door == "provider":
            return asyncio.create_task(self._provider_result(session, name, arguments))
        if self.door == "recovered":
            return asyncio.create_task(self._recovered_result(session, name, arguments))
        assert self.backend is not None
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self.backend.queued.put_nowait((name, arguments, future))
        return asyncio.create_task(self._reasoning_result(session, future))

    async def _provider_result(
        self, session: VoiceSession, name: str, arguments: dict[str, Any]
    ) -> ModelRead:
        call_id = await self.side.tool_call(session, name, arguments)
        text, is_error = await self.side.tool_result(session, call_id)
        return ModelRead(text, is_error)

    async def _recovered_result(
        self, session: VoiceSession, name: str, arguments: dict[str, Any]
    ) -> ModelRead:
        body = ", ".join(f"{k}: {v}" for k, v in arguments.items())
        await self.side.assistant_says(session, f"Let me check with you. call:{name}{{{body}}}")
        text = await self.side.context(session, f"[Tool {name} ")
        label, _, body = text.partition("] ")
        return ModelRead(body, "completed" not in label, label + "]")

    async def _reasoning_result(
        self, session: VoiceSession, future: asyncio.Future[ToolResult]
    ) -> ModelRead:
        await self.side.user_says(session, "go ahead")
        result = await future
        return ModelRead(result.text, result.is_error)


@dataclass
class VoiceRig:
    """A kit and a voice channel on the mock provider, with a driver for one door."""

    kit: VoiceKit
    voice: RealtimeVoiceChannel
    provider: MockRealtimeProvider
    driver: DoorDriver
    observed: Observed


def voice_rig(door: str, human: HumanInputToolHandler) -> VoiceRig:
    """``human`` served on a voice channel (host tool ``lookup`` beside it) through ``door``."""
    kit = VoiceKit()
    observed = Observed.on(kit)
    provider = MockRealtimeProvider()
    backend = QueueBackend() if door == "reasoning" else None
    voice = RealtimeVoiceChannel(
        "voice",
        provider=provider,
        tools=[LOOKUP],
        tool_handler=Host(),
        human_input_handler=human,
        reasoning_backend=backend,
    )
    kit.register_channel(voice)
    return VoiceRig(kit, voice, provider, DoorDriver(door, provider, backend), observed)
