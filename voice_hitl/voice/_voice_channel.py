"""``RealtimeVoiceChannel``: a speech-to-speech session per caller, human-input tools first.

Every door of a session (the provider's function call, a call recovered from the model's
speech, a reasoning backend's call) goes through the channel's one :class:`ToolGate`, so the
human-input tools are served before ``tool_handler`` and under the human-input handler's own
timeout. Ending a session or closing the channel settles the requests still open.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable

from .._exceptions import ChannelClosedError
from .._types import ChannelType
from ..human._human_input_tools import HumanInputToolHandler
from ..human._pending import PendingInputEvent
from ..tools._calls import Door
from ..tools._gated_channel import GatedChannel
from ..tools._tools import AITool, ToolHandler
from ._connect_hooks import ConnectHooks, SessionHooked
from ._driver import EventListener, SessionDriver
from ._provider import AudioFormat, ProviderSession, RealtimeProvider, SessionConfig
from ._provider_events import PCM16, AudioOutEvent
from ._reasoning import ReasoningBackend, TranscriptEntry
from ._transport import AudioFormatError, Transport, check_pcm16
from ._voice_line import VoiceLine

__all__ = ["RealtimeVoiceChannel", "VoiceSession"]

logger = logging.getLogger("voice_hitl.voice")

SESSION_ENDED = "the voice session ended"
CHANNEL_CLOSED = "the voice channel closed"


class VoiceSession:
    """One caller's conversation on a :class:`RealtimeVoiceChannel`."""

    def __init__(
        self,
        session_id: str,
        room_id: str,
        participant_id: str | None,
        provider_session: ProviderSession,
        driver: SessionDriver,
    ) -> None:
        self.session_id = session_id
        self.room_id = room_id
        self.participant_id = participant_id
        self.provider_session = provider_session
        self._driver = driver
        self._audio_pump: asyncio.Task[None] | None = None
        self._audio_taps: list[Callable[[PCM16], None]] = []
        self._closed = asyncio.Event()
        self.ended = False
        self.end_reason: str | None = None
        """Why the session ended (None while it runs): the ``end_session`` reason, or what
        the provider reported when its stream ended or failed on its own."""

    async def wait_closed(self) -> None:
        """Wait until the session has ended and released its provider and audio.

        Cancellation: safe; the session keeps ending.
        """
        await self._closed.wait()

    def add_audio_tap(self, tap: Callable[[PCM16], None]) -> Callable[[], None]:
        """Also hand each caller frame to ``tap`` (must not block); returns a remover."""
        self._audio_taps.append(tap)
        return lambda: self._audio_taps.remove(tap) if tap in self._audio_taps else None

    @property
    def transcript(self) -> list[TranscriptEntry]:
        """The final utterances so far (a copy)."""
        return list(self._driver.transcript)

    @property
    def open_calls(self) -> list[str]:
        """Ids of the tool calls still being served."""
        return self._driver.open_calls

    async def withdraw_call(self, call_id: str, reason: str) -> bool:
        """Withdraw one open tool call with its own ``reason`` before the session ends (a
        phone transport says, per question, whether the caller heard it before hanging up).

        Its request is withdrawn and the call reported ``cancelled`` with ``reason``; nothing
        is sent to the provider for it. Returns False when no call with that id is open.

        Cancellation: the call is cancelled first; cancelling stops only the wait for it.
        """
        return await self._driver.withdraw(call_id, reason)

    def add_listener(self, listener: EventListener) -> Callable[[], None]:
        """Observe the session's provider events; returns a function that removes it."""
        return self._driver.add_listener(listener)

    def __repr__(self) -> str:
        return (
            f"VoiceSession({self.session_id!r}, room={self.room_id!r}, "
            f"participant={self.participant_id!r}, ended={self.ended})"
        )


class RealtimeVoiceChannel(GatedChannel, SessionHooked):
    """A realtime voice channel serving human-input tools first on every door.

    Args:
        channel_id: The channel's id (the human-input handler's scope).
        provider: The realtime model.
        transport: Where caller audio comes from and agent audio goes.
        tools: Host tools offered to the model.
        tool_handler: Serves host tools, bounded by ``tool_timeout_seconds``.
        human_input_handler: Serves the human-input tools, first, under its own timeout.
        tool_timeout_seconds: The bound on each host tool call.
        tool_recovery: Recover tool calls the model speaks as ``call:NAME{...}``.
        reasoning_backend: Takes the agent's turns and may call tools (the third door).
        instructions: The model's instructions.

    Raises:
        ValueError: A tool in ``tools`` names a human-input tool with another definition
            than the handler's ``tool_definitions``, or ``tool_timeout_seconds`` is not a
            finite number above zero.
    """

    channel_type = ChannelType.REALTIME_VOICE
    kind = "voice channel"

    def __init__(
        self,
        channel_id: str,
        *,
        provider: RealtimeProvider,
        transport: Transport | None = None,
        tools: Iterable[AITool] = (),
        tool_handler: ToolHandler | None = None,
        human_input_handler: HumanInputToolHandler | None = None,
        tool_timeout_seconds: float = 10.0,
        tool_recovery: bool = True,
        reasoning_backend: ReasoningBackend | None = None,
        instructions: str = "",
    ) -> None:
        self.provider = provider
        self.transport = transport
        self.tool_recovery = tool_recovery
        self.reasoning_backend = reasoning_backend
        self.instructions = instructions
        self.input_format = AudioFormat()
        self.output_format = AudioFormat()
        self._open(
            channel_id,
            tools=tools,
            tool_handler=tool_handler,
            human_input=human_input_handler,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        self._sessions: dict[str, VoiceSession] = {}
        self._ending: set[asyncio.Task[None]] = set()
        self._connect_hooks = ConnectHooks()

    @property
    def tool_handler(self) -> ToolHandler | None:
        """The host tool handler; replacing it leaves the human-input tools served."""
        return self._gate.tool_handler

    @tool_handler.setter
    def tool_handler(self, handler: ToolHandler | None) -> None:
        self._gate.tool_handler = handler

    @property
    def sessions(self) -> list[VoiceSession]:
        """The sessions still running."""
        return list(self._sessions.values())

    def find_line(self, event: PendingInputEvent) -> VoiceLine | None:
        """The call line a request should be asked on: the session in the request's room
        whose caller raised it (the only session of the room when ``actor_id`` is None)."""
        if event.channel_id != self._channel_id:
            return None
        candidates = [s for s in self._sessions.values() if s.room_id == event.room_id]
        if event.actor_id is not None:
            candidates = [s for s in candidates if s.participant_id == event.actor_id]
        return VoiceLine(self, candidates[0]) if len(candidates) == 1 else None

    async def start_session(
        self,
        room_id: str,
        participant_id: str | None = None,
        *,
        session_id: str | None = None,
    ) -> VoiceSession:
        """Connect the provider for a caller and start serving the session's doors.

        Args:
            room_id: The room the calls belong to.
            participant_id: The caller; it is the ``actor_id`` of the session's requests.
            session_id: An id to use (a fresh one by default).

        Raises:
            ChannelClosedError: The channel is closed.
            ApprovalSetupError: The channel serves host tools but no approval policy can
                reach them: ``kit.register_channel(channel)`` first (see
                :meth:`ToolGate.check_reachable <voice_hitl.ToolGate.check_reachable>`).
            ProviderError: The provider could not connect.

        Cancellation: safe; a half-opened provider session is closed.
        """
        self._check_open()
        self._gate.check_reachable()
        session_id = session_id or f"vs_{secrets.token_hex(6)}"
        if session_id in self._sessions:
            raise ValueError(f"session {session_id!r} already exists on {self._channel_id!r}")
        config = SessionConfig(
            instructions=self.instructions,
            tools=tuple(self._gate.toolset.values()),
            input_format=self.input_format,
            output_format=self.output_format,
            session_id=session_id,
            room_id=room_id,
        )
        provider_session = await self._connect_hooks.connect(self.provider, config)
        try:
            self._check_open()
        except ChannelClosedError:
            try:
                await provider_session.aclose()
            finally:
                await self._connect_hooks.closed(session_id)
            raise
        transport = self.transport

        async def play(event: AudioOutEvent) -> None:
            if transport is not None:
                await transport.play(session_id, event.frame)

        async def stop_playback() -> None:
            if transport is not None:
                await transport.stop_playback(session_id)

        driver = SessionDriver(
            provider_session,
            self._gate,
            session_id=session_id,
            room_id=room_id,
            door=Door.PROVIDER,
            actor=lambda: participant_id,
            tool_recovery=self.tool_recovery,
            reasoning_backend=self.reasoning_backend,
            play_audio=play,
            stop_playback=stop_playback,
            on_ended=lambda reason: self._ended_by_provider(session, reason),
        )
        session = VoiceSession(session_id, room_id, participant_id, provider_session, driver)
        self._sessions[session_id] = session
        driver.start()
        if transport is not None:
            session._audio_pump = asyncio.create_task(
                self._pump_caller_audio(session, transport), name=f"audio-in-{session_id}"
            )
        return session

    async def _pump_caller_audio(self, session: VoiceSession, transport: Transport) -> None:
        warned = False
        async for frame in transport.caller_audio(session.session_id):
            try:
                check_pcm16(frame)
            except AudioFormatError as exc:
                # One bad frame from a transport must not end the call: drop it, say so once.
                if not warned:
                    warned = True
                    logger.error(
                        "session %r: transport %s sent audio the session cannot use (%s); "
                        "dropping such frames",
                        session.session_id,
                        type(transport).__name__,
                        exc,
                    )
                continue
            for tap in list(session._audio_taps):
                try:
                    tap(frame)
                except Exception:
                    logger.exception("audio tap failed on session %r", session.session_id)
            hooks = self._connect_hooks
            await hooks.send_audio(session.session_id, session.provider_session, frame)

    def _ended_by_provider(self, session: VoiceSession, reason: str) -> None:
        """The provider's stream ended or failed on its own: end the session now (it leaves
        :attr:`sessions` at once) and release it in a task :meth:`close` awaits."""
        if session.ended:
            return
        session.ended = True
        session.end_reason = reason
        self._sessions.pop(session.session_id, None)
        task = asyncio.create_task(self._release(session, reason), name=f"end-{session.session_id}")
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def end_session(self, session: VoiceSession, *, reason: str = SESSION_ENDED) -> None:
        """End a session: stop its audio, withdraw its open calls, disconnect the provider.

        Withdrawn requests are reported ``cancelled`` to ``ON_TOOL_CALL`` with ``reason``; the
        provider is sent nothing for them; a late answer is refused. The channel can ask again
        in its next session. Idempotent.

        Raises:
            ValueError: The session belongs to another channel.

        Cancellation: don't cancel; call it again to finish.
        """
        if session.ended:
            return
        if self._sessions.get(session.session_id) is not session:
            raise ValueError(f"session {session.session_id!r} is not on {self._channel_id!r}")
        session.ended = True
        session.end_reason = reason
        await self._release(session, reason)

    async def _release(self, session: VoiceSession, reason: str) -> None:
        pump = session._audio_pump
        if pump is not None:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
        try:
            await session._driver.aclose(reason)
        finally:
            try:
                await self._connect_hooks.closed(session.session_id)
                if self.transport is not None:
                    await self.transport.close_session(session.session_id)
            finally:
                self._sessions.pop(session.session_id, None)
                if all(s.room_id != session.room_id for s in self._sessions.values()):
                    self._gate.forget_approvals(session.room_id)  # "always" ends with the call
                session._closed.set()

    async def close(self) -> None:
        """End every session, close this channel's human-input scope and leave the kit.
        Idempotent.

        Later ``start_session`` calls raise ``ChannelClosedError``; later requests for this
        channel are refused by the handler.

        Cancellation: don't cancel; call it again to finish.
        """
        self._mark_closed()
        sessions = list(self._sessions.values())
        await asyncio.gather(*(self.end_session(s, reason=CHANNEL_CLOSED) for s in sessions))
        while self._ending:  # sessions the provider ended on its own, still releasing
            ending = list(self._ending)
            await asyncio.gather(*ending, return_exceptions=True)
            # gather() of finished tasks returns without yielding, before their done
            # callbacks (which discard them) have run: drop them here or this loop spins.
            self._ending.difference_update(ending)
        await self._leave()
