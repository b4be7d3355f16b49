"""Offline fakes of a LiveKit realtime model (LiveKit's own fakes are not in its wheel).

``FakeRealtimeModel`` / ``FakeRealtimeSession`` implement every abstract member of
``livekit.agents.llm.RealtimeModel`` / ``RealtimeSession``, record what they are asked, and let
a test play the model: call a tool, speak, transcribe the caller, fail. Like the OpenAI plugin,
``generate_reply`` both resolves its future and emits ``generation_created`` with the same event
(``user_initiated=True``); ``emit_replies=False`` only resolves the future.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from livekit import rtc
from livekit.agents import llm, utils
from livekit.agents.types import NOT_GIVEN, NotGivenOr


def capabilities(**overrides: bool) -> llm.RealtimeCapabilities:
    """OpenAI-like capabilities (no automatic reply to tool output), text output by default."""
    values: dict[str, bool] = {
        "message_truncation": False,
        "turn_detection": True,
        "user_transcription": True,
        "auto_tool_reply_generation": False,
        "audio_output": False,
        "manual_function_calls": True,
        "mutable_chat_context": True,
        "mutable_instructions": True,
        "mutable_tools": True,
    }
    values.update(overrides)
    return llm.RealtimeCapabilities(**values)


class OpenGeneration:
    """A generation whose streams the test closes itself (``finish``)."""

    def __init__(self) -> None:
        self.messages: utils.aio.Chan[llm.MessageGeneration] = utils.aio.Chan()
        self.functions: utils.aio.Chan[llm.FunctionCall] = utils.aio.Chan()

    def finish(self) -> None:
        self.messages.close()
        self.functions.close()


class FakeRealtimeSession(llm.RealtimeSession[Any]):
    def __init__(self, model: FakeRealtimeModel) -> None:
        super().__init__(model)
        self._chat_ctx = llm.ChatContext.empty()
        self._tools = llm.ToolContext.empty()
        self.calls: list[str] = []
        self.instructions: list[str] = []
        self.tool_names: list[str] = []
        self.tool_outputs: list[llm.FunctionCallOutput] = []
        self.system_messages: list[str] = []
        self.reply_instructions: list[NotGivenOr[str]] = []
        self.audio_in: list[rtc.AudioFrame] = []
        self.closed = False
        self.fail_updates = False
        self.fail_replies = False
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []

    # -- recording and waiting --------------------------------------------------------------

    def _record(self, call: str) -> None:
        self.calls.append(call)
        for predicate, future in list(self._waiters):
            if not future.done() and predicate():
                future.set_result(None)

    async def wait_until(self, predicate: Callable[[], bool]) -> None:
        if predicate():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._waiters.append(entry)
        try:
            await future
        finally:
            self._waiters.remove(entry)

    async def wait_for_output(self, call_id: str) -> llm.FunctionCallOutput:
        await self.wait_until(lambda: any(o.call_id == call_id for o in self.tool_outputs))
        return next(o for o in self.tool_outputs if o.call_id == call_id)

    def count(self, call: str) -> int:
        return sum(1 for c in self.calls if c == call)

    # -- RealtimeSession --------------------------------------------------------------------

    @property
    def chat_ctx(self) -> llm.ChatContext:
        return self._chat_ctx.copy()

    @property
    def tools(self) -> llm.ToolContext:
        return self._tools.copy()

    async def update_instructions(self, instructions: str) -> None:
        self.instructions.append(instructions)
        self._record("update_instructions")

    async def update_chat_ctx(self, chat_ctx: llm.ChatContext) -> None:
        if self.fail_updates:
            raise llm.RealtimeError("update refused by the fake", code="fake_refusal")
        known = {item.id for item in self._chat_ctx.items}
        for item in chat_ctx.items:
            if item.id in known:
                continue
            if isinstance(item, llm.FunctionCallOutput):
                self.tool_outputs.append(item)
            elif isinstance(item, llm.ChatMessage) and item.role == "system":
                self.system_messages.append(item.text_content or "")
        self._chat_ctx = chat_ctx.copy()
        self._record("update_chat_ctx")

    async def update_tools(self, tools: list[llm.Tool]) -> None:
        if self.realtime_model_fake.fail_setup:
            raise llm.RealtimeError("tools refused by the fake")
        self._tools = llm.ToolContext(tools)
        self.tool_names = sorted(self._tools.function_tools)
        self._record("update_tools")

    def update_options(self, *, tool_choice: NotGivenOr[llm.ToolChoice | None] = NOT_GIVEN) -> None:
        self._record("update_options")

    def push_audio(self, frame: rtc.AudioFrame) -> None:
        self.audio_in.append(frame)
        self._record("push_audio")

    def push_video(self, frame: rtc.VideoFrame) -> None:
        self._record("push_video")

    def generate_reply(
        self,
        *,
        instructions: NotGivenOr[str] = NOT_GIVEN,
        tool_choice: NotGivenOr[llm.ToolChoice] = NOT_GIVEN,
        tools: NotGivenOr[list[llm.Tool]] = NOT_GIVEN,
    ) -> asyncio.Future[llm.GenerationCreatedEvent]:
        self.reply_instructions.append(instructions)
        future: asyncio.Future[llm.GenerationCreatedEvent] = (
            asyncio.get_running_loop().create_future()
        )
        self._record("generate_reply")
        if self.fail_replies:
            future.set_exception(llm.RealtimeError("generate_reply timed out."))
            return future
        event = self.generation(text="Thanks, noted.", user_initiated=True)
        future.set_result(event)
        if self.realtime_model_fake.emit_replies:
            self.emit("generation_created", event)
        return future

    def commit_audio(self) -> None:
        self._record("commit_audio")

    def clear_audio(self) -> None:
        self._record("clear_audio")

    def interrupt(self) -> None:
        self._record("interrupt")

    def truncate(
        self,
        *,
        message_id: str,
        modalities: list[Any],
        audio_end_ms: int,
        audio_transcript: NotGivenOr[str] = NOT_GIVEN,
    ) -> None:
        self._record("truncate")

    async def aclose(self) -> None:
        self.closed = True
        self._record("aclose")

    # -- playing the model ------------------------------------------------------------------

    @property
    def realtime_model_fake(self) -> FakeRealtimeModel:
        model = self.realtime_model
        assert isinstance(model, FakeRealtimeModel)
        return model

    def generation(
        self,
        *,
        text: str | None = None,
        audio: Sequence[rtc.AudioFrame] = (),
        calls: Sequence[llm.FunctionCall] = (),
        user_initiated: bool = False,
    ) -> llm.GenerationCreatedEvent:
        """A finished generation: its streams hold everything and are closed."""
        messages: utils.aio.Chan[llm.MessageGeneration] = utils.aio.Chan()
        functions: utils.aio.Chan[llm.FunctionCall] = utils.aio.Chan()
        if text is not None or audio:
            text_ch: utils.aio.Chan[str] = utils.aio.Chan()
            audio_ch: utils.aio.Chan[rtc.AudioFrame] = utils.aio.Chan()
            modalities: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
            modalities.set_result(["audio", "text"] if audio else ["text"])
            if text is not None:
                for i, word in enumerate(text.split(" ")):
                    text_ch.send_nowait(word if i == 0 else " " + word)
            for frame in audio:
                audio_ch.send_nowait(frame)
            text_ch.close()
            audio_ch.close()
            messages.send_nowait(
                llm.MessageGeneration(
                    message_id=utils.shortuuid("msg_"),
                    text_stream=text_ch,
                    audio_stream=audio_ch,
                    modalities=modalities,
                )
            )
        for call in calls:
            functions.send_nowait(call)
        messages.close()
        functions.close()
        return llm.GenerationCreatedEvent(
            message_stream=messages,
            function_stream=functions,
            user_initiated=user_initiated,
            response_id=utils.shortuuid("resp_"),
        )

    def call_tool(self, name: str, arguments: dict[str, Any] | str, call_id: str) -> str:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = llm.FunctionCall(call_id=call_id, name=name, arguments=text)
        self.emit("generation_created", self.generation(calls=[call]))
        return call_id

    def speak(self, text: str, audio: Sequence[rtc.AudioFrame] = ()) -> None:
        self.emit("generation_created", self.generation(text=text, audio=audio))

    def open_generation(self) -> OpenGeneration:
        open_gen = OpenGeneration()
        self.emit(
            "generation_created",
            llm.GenerationCreatedEvent(
                message_stream=open_gen.messages,
                function_stream=open_gen.functions,
                user_initiated=False,
                response_id=utils.shortuuid("resp_"),
            ),
        )
        return open_gen

    def caller_says(self, transcript: str) -> None:
        self.emit("input_speech_started", llm.InputSpeechStartedEvent())
        self.emit(
            "input_speech_stopped", llm.InputSpeechStoppedEvent(user_transcription_enabled=True)
        )
        self.emit(
            "input_audio_transcription_completed",
            llm.InputTranscriptionCompleted(
                item_id=utils.shortuuid("item_"), transcript=transcript, is_final=True
            ),
        )

    def fail(self, message: str, *, recoverable: bool) -> None:
        self.emit(
            "error",
            llm.RealtimeModelError(
                timestamp=time.time(),
                label="fake",
                error=llm.RealtimeError(message, code="fake_error"),
                recoverable=recoverable,
            ),
        )


class FakeRealtimeModel(llm.RealtimeModel):
    def __init__(
        self, caps: llm.RealtimeCapabilities | None = None, *, emit_replies: bool = True
    ) -> None:
        super().__init__(capabilities=caps or capabilities())
        self.emit_replies = emit_replies
        self.fail_setup = False
        self.sessions: list[FakeRealtimeSession] = []

    @property
    def model(self) -> str:
        return "fake-realtime"

    @property
    def provider(self) -> str:
        return "fake"

    def session(self, *, turn_detection_disabled: bool = False) -> FakeRealtimeSession:
        session = FakeRealtimeSession(self)
        self.sessions.append(session)
        return session

    async def aclose(self) -> None:
        pass


def audio_frame(samples: int = 240, rate: int = 24_000, value: int = 100) -> rtc.AudioFrame:
    data = np.full(samples, value, dtype=np.int16)
    return rtc.AudioFrame(
        data.tobytes(), sample_rate=rate, num_channels=1, samples_per_channel=samples
    )
