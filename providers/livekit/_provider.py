"""``LiveKitRealtimeProvider``: any LiveKit ``RealtimeModel`` as a voice-hitl provider.

LiveKit realtime sessions are event emitters: function calls and the model's speech arrive as
``generation_created`` events carrying streams, the caller's transcript as
``input_audio_transcription_completed``. The bridge turns them into voice-hitl provider events,
one owned task per generation; tool results go back the way LiveKit's own ``AgentSession``
sends them (``update_chat_ctx`` with a ``FunctionCallOutput``, then ``generate_reply`` when
the model does not reply to tool output by itself).
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections import OrderedDict, deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from livekit.agents import llm
from livekit.agents.types import NOT_GIVEN, NotGivenOr

from voice_hitl import ChannelClosedError, ProviderError
from voice_hitl.voice._provider import ProviderSession, RealtimeProvider, SessionConfig
from voice_hitl.voice._provider_events import (
    PCM16,
    AudioOutEvent,
    ProviderErrorEvent,
    ProviderEvent,
    SpeechStartedEvent,
    SpeechStoppedEvent,
    ToolCallEvent,
    TranscriptionEvent,
)

from ._convert import frame_to_pcm16, pcm16_to_frame, provider_capabilities, schema_only_tool

__all__ = ["LiveKitProviderSession", "LiveKitRealtimeProvider"]

logger = logging.getLogger("voice_hitl.providers.livekit")

SAY_INSTRUCTIONS = "Say exactly the following to the caller, and nothing else: {text}"
"""How ``say()`` asks the model to speak a text (``generate_reply(instructions=...)``)."""

_REMEMBERED = 256  # generations / call ids remembered to drop duplicates


class _End:
    """Marks the end of the events stream."""


_END = _End()


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class LiveKitProviderSession(ProviderSession):
    """One LiveKit ``RealtimeSession`` seen as a voice-hitl provider session.

    Made by :meth:`LiveKitRealtimeProvider.connect`. Every task it starts (one per generation,
    one for deferred replies) is cancelled and awaited by :meth:`aclose`.
    """

    def __init__(self, realtime_session: llm.RealtimeSession[Any], config: SessionConfig) -> None:
        self.realtime_session = realtime_session
        self.config = config
        self._queue: asyncio.Queue[ProviderEvent | _End] = asyncio.Queue()
        self._state = _State.OPEN
        self._ended = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._active_generations = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._replies: deque[NotGivenOr[str]] = deque()
        self._reply_task: asyncio.Task[None] | None = None
        self._seen_generations: deque[llm.GenerationCreatedEvent] = deque(maxlen=_REMEMBERED)
        self._call_names: OrderedDict[str, str] = OrderedDict()
        self._handlers: list[tuple[str, Callable[[Any], None]]] = [
            ("generation_created", self._on_generation_created),
            ("input_audio_transcription_completed", self._on_user_transcription),
            ("input_speech_started", self._on_speech_started),
            ("input_speech_stopped", self._on_speech_stopped),
            ("error", self._on_error),
        ]

    @property
    def pending_replies(self) -> int:
        """Replies requested (tool output, ``say``) and not yet asked of the model."""
        return len(self._replies)

    @property
    def capabilities(self) -> llm.RealtimeCapabilities:
        """The LiveKit session's own capabilities."""
        return self.realtime_session.capabilities

    def _subscribe(self) -> None:
        for name, handler in self._handlers:
            self.realtime_session.on(name, handler)

    def _unsubscribe(self) -> None:
        for name, handler in self._handlers:
            self.realtime_session.off(name, handler)

    def _check_open(self, what: str) -> None:
        if self._state is _State.CLOSED:
            raise ChannelClosedError(f"LiveKit provider session is closed ({what})")

    def _put(self, event: ProviderEvent) -> None:
        if not self._ended:
            self._queue.put_nowait(event)

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._queue.put_nowait(_END)

    def _own(self, coro: Awaitable[None], name: str) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- LiveKit -> voice-hitl --------------------------------------------------------------

    def _on_generation_created(self, event: llm.GenerationCreatedEvent) -> None:
        if self._state is _State.CLOSED or any(e is event for e in self._seen_generations):
            return
        self._seen_generations.append(event)
        self._active_generations += 1
        self._idle.clear()
        label = event.response_id or f"{len(self._seen_generations)}"
        self._own(self._consume_generation(event), f"livekit-generation-{label}")

    async def _consume_generation(self, event: llm.GenerationCreatedEvent) -> None:
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._consume_functions(event.function_stream))
                async for message in event.message_stream:
                    group.create_task(self._consume_message(message))
        except Exception as exc:
            logger.warning("generation %r failed while streaming", event.response_id, exc_info=True)
            self._put(
                ProviderErrorEvent(
                    ProviderError(
                        f"LiveKit generation stream failed: {exc!r}",
                        code="generation_stream_failed",
                        recoverable=True,
                    )
                )
            )
        finally:
            self._active_generations -= 1
            if self._active_generations == 0:
                self._idle.set()

    async def _consume_functions(self, calls: AsyncIterable[llm.FunctionCall]) -> None:
        async for call in calls:
            if call.call_id in self._call_names:
                logger.debug("duplicate function call %r ignored", call.call_id)
                continue
            self._call_names[call.call_id] = call.name
            while len(self._call_names) > _REMEMBERED:
                self._call_names.popitem(last=False)
            self._put(ToolCallEvent(call.call_id, call.name, call.arguments))

    async def _consume_message(self, message: llm.MessageGeneration) -> None:
        parts: list[str] = []

        async def read_text() -> None:
            async for delta in message.text_stream:
                parts.append(str(delta))

        async def read_audio() -> None:
            rate = self.config.output_format.sample_rate
            async for frame in message.audio_stream:
                self._put(AudioOutEvent(frame_to_pcm16(frame, rate)))

        async with asyncio.TaskGroup() as group:
            group.create_task(read_text())
            group.create_task(read_audio())
        text = "".join(parts)
        if text.strip():
            self._put(TranscriptionEvent("assistant", text, final=True))

    def _on_user_transcription(self, event: llm.InputTranscriptionCompleted) -> None:
        self._put(TranscriptionEvent("user", event.transcript, final=event.is_final))

    def _on_speech_started(self, event: llm.InputSpeechStartedEvent) -> None:
        self._put(SpeechStartedEvent())

    def _on_speech_stopped(self, event: llm.InputSpeechStoppedEvent) -> None:
        self._put(SpeechStoppedEvent())

    def _on_error(self, event: llm.RealtimeModelError) -> None:
        code = getattr(event.error, "code", None) or type(event.error).__name__
        error = ProviderError(
            f"{event.label}: {event.error}", code=str(code), recoverable=event.recoverable
        )
        self._put(ProviderErrorEvent(error))
        if not event.recoverable:
            # The model gave up: end the events so the channel settles what is pending.
            self._end()

    # -- voice-hitl -> LiveKit --------------------------------------------------------------

    async def events(self) -> AsyncIterator[ProviderEvent]:
        """The session's events in order; ends on :meth:`aclose` or a non-recoverable error.

        Cancellation: safe; no event is lost.
        """
        while True:
            item = await self._queue.get()
            if isinstance(item, _End):
                return
            yield item

    async def send_audio(self, frame: PCM16) -> None:
        """Push caller audio (mono PCM16 at the session's input rate) to the model.

        Raises:
            ChannelClosedError: The session is closed.
            ValueError: ``frame`` is not mono int16 samples.

        Cancellation: safe; the frame is pushed whole or not at all.
        """
        self._check_open("send_audio")
        converted = pcm16_to_frame(frame, self.config.input_format.sample_rate)
        self.realtime_session.push_audio(converted)

    async def _update_chat_ctx(self, chat_ctx: llm.ChatContext, what: str) -> None:
        try:
            await self.realtime_session.update_chat_ctx(chat_ctx)
        except llm.RealtimeError as exc:
            raise ProviderError(
                f"LiveKit realtime session refused the {what}: {exc}",
                code=getattr(exc, "code", None) or "update_chat_ctx_failed",
                recoverable=True,
            ) from exc

    async def submit_tool_result(self, call_id: str, output: str, *, is_error: bool) -> None:
        """Add a ``FunctionCallOutput`` to the model's context; request a reply if needed.

        The reply (``generate_reply``) is requested only when the model's capabilities say it
        does not reply to tool output by itself, and is deferred until the model's current
        generation ends so it never collides with an active response.

        Raises:
            ChannelClosedError: The session is closed.
            ProviderError: The model refused the context update.

        Cancellation: safe; the output is added whole or not at all, and no reply is requested
        unless it was added.
        """
        self._check_open("submit_tool_result")
        name = self._call_names.get(call_id, "")
        chat_ctx = self.realtime_session.chat_ctx.copy()
        chat_ctx.items.append(
            llm.FunctionCallOutput(call_id=call_id, name=name, output=output, is_error=is_error)
        )
        await self._update_chat_ctx(chat_ctx, f"output of call {call_id!r}")
        if not self.capabilities.auto_tool_reply_generation:
            self._request_reply(NOT_GIVEN)

    async def inject_context(self, text: str) -> None:
        """Add a system message the model reads; no reply is requested.

        Raises:
            ChannelClosedError: The session is closed.
            ProviderError: The model refused the context update.

        Cancellation: safe; the message is added whole or not at all.
        """
        self._check_open("inject_context")
        chat_ctx = self.realtime_session.chat_ctx.copy()
        chat_ctx.add_message(role="system", content=text)
        await self._update_chat_ctx(chat_ctx, "injected context")

    async def say(self, text: str) -> None:
        """Ask the model to speak ``text`` (``generate_reply`` with instructions), once its
        current generation ends.

        Raises:
            ChannelClosedError: The session is closed.

        Cancellation: safe; the reply is already queued when this returns.
        """
        self._check_open("say")
        self._request_reply(SAY_INSTRUCTIONS.format(text=text))

    async def interrupt(self) -> None:
        """Cancel the model's current generation (``RealtimeSession.interrupt``).

        Raises:
            ChannelClosedError: The session is closed.

        Cancellation: safe.
        """
        self._check_open("interrupt")
        self.realtime_session.interrupt()

    def _request_reply(self, instructions: NotGivenOr[str]) -> None:
        self._replies.append(instructions)
        if self._reply_task is None or self._reply_task.done():
            self._reply_task = self._own(self._send_replies(), "livekit-replies")

    async def _send_replies(self) -> None:
        while self._replies:
            await self._idle.wait()
            instructions = self._replies.popleft()
            try:
                created = self.realtime_session.generate_reply(instructions=instructions)
                event = await asyncio.shield(created)
            except Exception as exc:  # RealtimeError (e.g. timed out), or a plugin's bug
                self._put(
                    ProviderErrorEvent(
                        ProviderError(
                            f"LiveKit generate_reply failed: {exc}",
                            code=getattr(exc, "code", None) or "generate_reply_failed",
                            recoverable=True,
                        )
                    )
                )
                continue
            # Plugins emit generation_created for their own replies too; a model that only
            # resolves the future is consumed here (duplicates are dropped by identity).
            self._on_generation_created(event)

    async def aclose(self) -> None:
        """Stop listening, cancel and await every task, close the LiveKit session. Idempotent.

        Cancellation: don't cancel; the LiveKit session may stay open.
        """
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        self._unsubscribe()
        self._replies.clear()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        try:
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)
            await self.realtime_session.aclose()
        finally:
            self._end()


class LiveKitRealtimeProvider(RealtimeProvider):
    """Any ``livekit.agents.llm.RealtimeModel`` (OpenAI, Google, xAI, ... plugins) as a
    voice-hitl :class:`~providers.base.RealtimeProvider`.

    Args:
        model: The LiveKit realtime model; :meth:`connect` opens one of its sessions per call.

    Raises:
        TypeError: ``model`` is not a LiveKit ``RealtimeModel``.
    """

    def __init__(self, model: llm.RealtimeModel) -> None:
        if not isinstance(model, llm.RealtimeModel):
            raise TypeError(
                f"LiveKitRealtimeProvider needs a livekit.agents.llm.RealtimeModel, "
                f"got {type(model).__name__}"
            )
        self.model = model
        self.capabilities = provider_capabilities(model.capabilities)

    async def connect(self, config: SessionConfig) -> LiveKitProviderSession:
        """Open a LiveKit realtime session with the config's instructions and tools.

        Raises:
            ProviderError: The model refused the instructions or the tools.

        Cancellation: safe; a half-opened LiveKit session is closed.
        """
        realtime_session = self.model.session()
        session = LiveKitProviderSession(realtime_session, config)
        session._subscribe()
        try:
            if config.instructions:
                await realtime_session.update_instructions(config.instructions)
            if config.tools:
                await realtime_session.update_tools([schema_only_tool(t) for t in config.tools])
        except BaseException as exc:
            await session.aclose()
            if isinstance(exc, llm.RealtimeError):
                raise ProviderError(
                    f"LiveKit realtime session setup failed: {exc}", code="session_setup_failed"
                ) from exc
            raise
        return session

    def __repr__(self) -> str:
        return f"LiveKitRealtimeProvider({self.model.provider}/{self.model.model})"
