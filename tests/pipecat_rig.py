"""A real Pipecat pipeline, offline: a fake LLM service whose function calls a test makes,
and a sink that records every frame."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import (
    DataFrame,
    Frame,
    FunctionCallFromLLM,
    FunctionCallResultFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.llm_service import LLMService
from pipecat.services.settings import LLMSettings
from pipecat.workers.runner import WorkerRunner


@dataclass
class CallTool(DataFrame):
    """Makes the fake LLM call a tool (what a model's response would do)."""

    tool: str = ""
    call_id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


class FakeLLM(LLMService):  # type: ignore[type-arg]
    """An LLM service with no model: a ``CallTool`` frame becomes a function call."""

    def __init__(self, **kwargs: Any) -> None:
        unset = {f.name: None for f in dataclasses.fields(LLMSettings) if f.init}
        super().__init__(settings=LLMSettings(**unset), **kwargs)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, CallTool):
            call = FunctionCallFromLLM(frame.tool, frame.call_id, frame.arguments, LLMContext())
            await self.run_function_calls([call])
        else:
            await self.push_frame(frame, direction)


class Sink(FrameProcessor):
    """Records what reaches the end of the pipeline; a test can wait on it."""

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[Frame] = []
        self.changed = asyncio.Event()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        self.frames.append(frame)
        self.changed.set()
        await self.push_frame(frame, direction)

    async def first(self, kind: type[Frame]) -> Any:
        while True:
            for frame in self.frames:
                if isinstance(frame, kind):
                    return frame
            self.changed.clear()
            await self.changed.wait()

    async def result(self, call_id: str) -> FunctionCallResultFrame:
        while True:
            for frame in self.frames:
                if isinstance(frame, FunctionCallResultFrame) and frame.tool_call_id == call_id:
                    return frame
            self.changed.clear()
            await self.changed.wait()


class Running:
    """A pipeline ``[*first, FakeLLM, *after, Sink]`` running in a task of its own."""

    def __init__(
        self,
        llm: FakeLLM,
        first: tuple[FrameProcessor, ...] = (),
        after: tuple[FrameProcessor, ...] = (),
    ) -> None:
        self.llm = llm
        self.sink = Sink()
        pipeline = Pipeline([*first, llm, *after, self.sink])
        self.worker = PipelineWorker(pipeline, cancel_on_idle_timeout=False)
        self.started = asyncio.Event()
        self._run: asyncio.Task[None] | None = None

        @self.worker.event_handler("on_pipeline_started")
        async def started(worker: Any, frame: Any) -> None:
            self.started.set()

    async def __aenter__(self) -> Running:
        runner = WorkerRunner()
        await runner.add_workers(self.worker)
        self._run = asyncio.create_task(runner.run(), name="pipecat-runner")
        await self.started.wait()
        return self

    async def call(self, tool: str, call_id: str, **arguments: Any) -> None:
        await self.worker.queue_frame(CallTool(tool=tool, call_id=call_id, arguments=arguments))

    async def finished(self) -> None:
        assert self._run is not None
        await self._run

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._run is not None
        if not self._run.done():
            await self.worker.cancel()
        await self._run
