"""``CallRecorder``: record the calls of a channel, opt-in, one self-contained folder a call.

Attach it to a :class:`~voice_hitl.RealtimeVoiceChannel` (any provider, any transport: a
Twilio phone call is a voice channel on a ``TwilioTransport``) or to a
:class:`~conference.ConferenceChannel` (its ``realtime=`` config's provider)::

    recorder = CallRecorder("recordings/")
    recorder.attach(channel)          # every session from now on is recorded
    ...
    await recorder.aclose()           # finishes the calls still open

It hooks the channel's session start (``add_connect_hook``) to open a call's folder before
the provider dials, and taps the provider's wire (``provider.wire_taps``: the OpenAI and
Gemini WebSockets) so each frame both ways is queued with its time (a provider without a
wire, ``wire_taps is None``, records no wire events); the channel's sent-audio taps
(``add_sent_audio_tap``) queue the caller's audio as the transport delivered it, and its
session end hooks (``add_session_end_hook``) finish the call; the channel's human-input
handler is observed for the stories of the call's requests. Nothing is set on the provider or
its session. Nothing on the event loop but queue puts: a writer thread per call writes (see
:mod:`._writer`).
"""

from __future__ import annotations

import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..human._human_input_tools import HumanInputToolHandler
from ..human._lifecycle import RequestEvent, RequestOpened
from ..voice._provider import ProviderSession, RealtimeProvider, SessionConfig
from ..voice._provider_events import PCM16
from ..voice._transport import KeypadTransport
from ..voice._voice_channel import RealtimeVoiceChannel
from ..voice._wire_taps import WireFrame
from ._call import CallRecording
from ._redact import Redaction

__all__ = ["CallRecorder"]

logger = logging.getLogger("voice_hitl.recording")

_RECORDED: weakref.WeakSet[Any] = weakref.WeakSet()
"""The channels some recorder records (one recorder a channel)."""


@dataclass(frozen=True)
class _Source:
    """What a recorder needs of a channel: its provider, handler, transport and facts."""

    kind: str
    channel_id: str
    provider: RealtimeProvider
    human: HumanInputToolHandler | None
    transport: Any
    tool_timeout: float

    @classmethod
    def of(cls, channel: Any) -> _Source:
        if isinstance(channel, RealtimeVoiceChannel):
            return cls(
                "voice",
                channel.channel_id,
                channel.provider,
                channel.human_input_handler,
                channel.transport,
                channel.gate.tool_timeout_seconds,
            )
        config = getattr(channel, "realtime", None)
        if config is None or not hasattr(channel, "plug_realtime"):
            raise ValueError(
                f"cannot record {channel!r}: a RealtimeVoiceChannel, or a ConferenceChannel "
                "with a realtime= config"
            )
        return cls(
            "conference",
            channel.channel_id,
            config.provider,
            config.human_input_handler,
            None,
            config.tool_timeout_seconds,
        )


class CallRecorder:
    """Records calls into ``root/<session id>/`` (see :mod:`voice_hitl.recording._format`).

    Args:
        root: The folder that receives one sub-folder per call.
        redaction: Hooks that rewrite tool arguments and transcripts before they are written.
        max_bytes: The most a call writes (wire events plus caller audio at its PCM size);
            past it the call goes on and its recording says it is incomplete.
        max_frame_bytes: A provider frame longer than this is kept with its long strings
            emptied (audio deltas, big tool results).
    """

    def __init__(
        self,
        root: str | Path,
        *,
        redaction: Redaction | None = None,
        max_bytes: int = 64 * 1024 * 1024,
        max_frame_bytes: int = 64 * 1024,
    ) -> None:
        if max_bytes < 1 or max_frame_bytes < 256:
            raise ValueError("max_bytes must be >= 1 and max_frame_bytes >= 256")
        self.root = Path(root)
        self.redaction = redaction
        self.max_bytes = max_bytes
        self.max_frame_bytes = max_frame_bytes
        self.recordings: list[CallRecording] = []
        """Every call seen so far (finished or not), in the order they began; one whose
        folder could not be made went on unrecorded (logged as an error)."""
        self._open: dict[str, CallRecording] = {}
        self._detachers: list[Callable[[], None]] = []

    @property
    def folders(self) -> list[Path]:
        """The folders of the calls recorded so far."""
        return [call.folder for call in self.recordings]

    def attach(self, channel: RealtimeVoiceChannel | Any) -> Callable[[], None]:
        """Record every session ``channel`` starts from now on; returns a detacher.

        Args:
            channel: A ``RealtimeVoiceChannel``, or a ``ConferenceChannel`` with a ``realtime``
                config (each ``plug_realtime`` of that config is a call).

        The calls being recorded when the detacher is called are recorded to their end.

        Raises:
            ValueError: The channel is already recorded; a conference without a ``realtime``
                config.
        """
        source = _Source.of(channel)
        if channel in _RECORDED:
            raise ValueError(f"{channel!r} is already recorded")
        calls: dict[str, CallRecording] = {}  # this channel's calls being recorded
        detached = False
        session_removers: list[Callable[[], None]] = []

        def release() -> None:  # the sent-audio tap and end hook outlive detach() while calls run
            if detached and not calls:
                for remove in session_removers:
                    remove()
                session_removers.clear()

        async def hook(
            provider: RealtimeProvider,
            config: SessionConfig,
            connect: Callable[[SessionConfig], Awaitable[ProviderSession]],
        ) -> ProviderSession:
            if provider is not source.provider:  # a plug with another config's provider
                return await connect(config)
            call = self._new_call(source, provider, config)
            try:
                await call.begin()
            except OSError as exc:  # no folder for the recording: the call goes on unrecorded
                logger.error("session %r is not recorded: %s", config.session_id, exc)
                self._open.pop(config.session_id, None)
                call.finished = True
                return await connect(config)
            calls[config.session_id] = call

            def forget() -> None:
                calls.pop(config.session_id, None)
                release()

            call.on_finish.append(forget)
            try:
                session = await connect(config)
            except BaseException:
                await call.finish("the provider did not connect")
                self._open.pop(config.session_id, None)
                raise
            transport = source.transport
            if isinstance(transport, KeypadTransport):  # keys heard beside the audio
                call.on_finish.append(
                    transport.add_keypad_listener(config.session_id, call.keypad)
                )
            return session

        def wire(frame: WireFrame) -> None:
            call = calls.get(frame.session_id)
            if call is not None:
                call.wire(frame.direction, frame.connection, frame.data)

        def sent(session_id: str, frame: PCM16) -> None:
            call = calls.get(session_id)
            if call is not None:
                call.audio(frame)

        async def ended(session_id: str) -> None:
            call = calls.get(session_id)
            if call is not None:
                self._open.pop(session_id, None)
                await call.finish()

        session_removers += [channel.add_sent_audio_tap(sent), channel.add_session_end_hook(ended)]
        removers = [channel.add_connect_hook(hook)]
        taps = source.provider.wire_taps  # None: a provider without a wire records no frames
        if taps is not None:
            removers.append(taps.add(wire))
        human = source.human
        if human is not None:
            observer = self._observer(source.channel_id, calls)
            removers.append(human.handler.add_observer(observer))
        _RECORDED.add(channel)

        def detach() -> None:
            nonlocal detached
            for remove in removers:
                remove()
            removers.clear()
            detached = True
            release()
            _RECORDED.discard(channel)

        self._detachers.append(detach)
        return detach

    def _new_call(
        self, source: _Source, provider: RealtimeProvider, config: SessionConfig
    ) -> CallRecording:
        name = config.session_id or f"call_{secrets.token_hex(6)}"
        folder = self.root / name
        human = source.human
        facts = {
            "channel_id": source.channel_id,
            "channel_kind": source.kind,
            "tool_timeout_seconds": source.tool_timeout,
        }
        human_facts = None
        if human is not None:
            human_facts = {
                "tools": sorted(human.tool_names),
                "timeout": human.timeout,
                "deadline_policies": {
                    name: policy.describe(human.timeout)
                    for name, policy in sorted(human.policies.items())
                },
            }
        call = CallRecording(
            folder,
            provider,
            config,
            channel_facts=facts,
            human_input=human_facts,
            redaction=self.redaction,
            max_bytes=self.max_bytes,
            max_frame_bytes=self.max_frame_bytes,
        )
        self.recordings.append(call)
        self._open[config.session_id] = call
        return call

    def _observer(
        self, channel_id: str, calls: dict[str, CallRecording]
    ) -> Callable[[RequestEvent], None]:
        def observe(event: RequestEvent) -> None:
            if event.type == "opened":
                request = event.request
                if request.channel_id == channel_id:
                    self._opened(event, [c for c in calls.values() if not c.finished])
                return
            for call in calls.values():
                if event.pending_id in call.request_ids and not call.finished:
                    call.story(event)
                    return

        return observe

    @staticmethod
    def _opened(event: RequestOpened, calls: list[CallRecording]) -> None:
        """The call a new request belongs to: the one whose provider made the tool call, else
        the only call in its room; never a guess between sessions sharing a room."""
        request = event.request
        owner = [c for c in calls if request.tool_call_id and request.tool_call_id in c.call_ids]
        if not owner:
            owner = [c for c in calls if c.config.room_id == request.room_id]
        if len(owner) > 1:
            why = (
                f"request {event.pending_id} of room {request.room_id!r} could not be told "
                "apart between the sessions sharing the room (their provider has no wire)"
            )
            logger.warning("%s; it is in no call's recording", why)
            for call in owner:
                call.ambiguous = call.ambiguous or why
            return
        if owner:
            owner[0].request_ids.add(event.pending_id)
            owner[0].story(event)

    async def aclose(self) -> None:
        """Finish the calls still being recorded and detach from every channel; idempotent.

        Cancellation: don't cancel; call it again to finish.
        """
        for detach in self._detachers:
            detach()
        self._detachers.clear()
        for call in list(self._open.values()):
            await call.finish("the recorder closed before the call ended")
        self._open.clear()
