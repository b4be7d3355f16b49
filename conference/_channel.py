"""``ConferenceChannel``: a bot in a multi-party call that asks the right people.

The participants' audio is mixed N -> 1 by the backend and fed to one realtime provider
session; the bot's audio is played to everyone. With ``hearing=`` (a backend that gives each
participant's own audio), the channel itself hears every participant on their own stream and
attributes each utterance to it; the provider still hears the mix for its conversation. The
session's tool calls come through the conference door (``Door.CONFERENCE``) into one
:class:`~voice_hitl.ToolGate` with ``ChannelType.CONFERENCE``, driven by the core
:class:`~voice_hitl.SessionDriver`. The provider can be unplugged and plugged again while the
call goes on.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
from collections.abc import Callable, Mapping

from providers.base import (
    PCM16,
    ProviderEvent,
    ProviderSession,
)
from voice_hitl import (
    AITool,
    ChannelClosedError,
    ChannelType,
    ConnectHooks,
    Heard,
    HumanInputToolHandler,
    PendingInputEvent,
    ToolGate,
    ToolHandler,
    VoiceKit,
)
from voice_hitl.responder._risk import EvidencePolicy
from voice_hitl.voice._audio import resample_pcm16
from voice_hitl.voice._connect_hooks import SessionHooked

from ._answers_api import AnswersApi
from ._attribution import TurnAttribution
from ._backend import (
    ConferenceBackend,
    ConferenceEnded,
    ConferenceEvent,
    Participant,
    ParticipantLeft,
    PerSpeakerBackend,
    SpeakerTranscription,
)
from ._config import ConferenceRealtimeConfig
from ._desk import AnswerDesk
from ._hearing import PerSpeakerHearing, SpeakerEars
from ._hearing_api import HearingApi
from ._line import ConferenceLine
from ._plug import RealtimePlug

__all__ = ["CHANNEL_CLOSED", "UNPLUGGED", "ConferenceChannel"]

logger = logging.getLogger("conference.channel")

UNPLUGGED = "realtime provider unplugged"
CHANNEL_CLOSED = "the conference channel closed"


class _State(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


class ConferenceChannel(AnswersApi, HearingApi, SessionHooked):
    """A conference bot channel: one realtime provider session hears everyone.

    Args:
        channel_id: The channel's id (its human-input scope, and the room of its calls).
        backend: The call: roster, audio, attributed transcriptions.
        realtime: The provider config :meth:`plug_realtime` uses when given none.
        evidence: What a spoken yes the channel hears must prove to count for a high-risk
            request (a quorum approval): ``EvidencePolicy(spoken=False)`` counts none, and
            votes are then cast with :meth:`answer` (give a ``VoiceResponder`` serving the
            channel the same policy).
        hearing: Hear each participant on their own stream (the backend must be a
            :class:`~conference.PerSpeakerBackend`): utterances are attributed to the stream
            they were heard on, and the provider's transcriptions of the mix are its
            conversation only, never a participant's answer.

    Raises:
        TypeError: ``hearing`` was given for a backend without per-speaker audio.
    """

    channel_type = ChannelType.CONFERENCE

    def __init__(
        self,
        channel_id: str,
        *,
        backend: ConferenceBackend,
        realtime: ConferenceRealtimeConfig | None = None,
        evidence: EvidencePolicy | None = None,
        hearing: PerSpeakerHearing | None = None,
    ) -> None:
        if hearing is not None and not isinstance(backend, PerSpeakerBackend):
            raise TypeError(
                f"conference {channel_id!r}: hearing= needs a backend with per-speaker audio "
                f"(open_speakers), and {type(backend).__name__} has none"
            )
        self.hearing = hearing
        self._channel_id = channel_id
        self.backend = backend
        self.realtime = realtime
        self._state = _State.OPEN
        self._kit: VoiceKit | None = None
        self._plug: RealtimePlug | None = None
        self._lock = asyncio.Lock()
        self._ending: set[asyncio.Task[None]] = set()
        self._scopes: set[HumanInputToolHandler] = set()
        self._receipt_key = secrets.token_bytes(32)
        self._turn = TurnAttribution()
        self._utterance: set[str | None] = set()  # who was heard since the last utterance
        self._provider_listeners: list[Callable[[ProviderEvent], None]] = []
        self._desk = AnswerDesk(
            channel_id, lambda: self.backend.participants, self._key, evidence=evidence
        )
        self._remove_listener = backend.add_listener(self._on_backend_event)
        self._speech_listeners: list[Callable[[Heard], None]] = []
        self._connect_hooks = ConnectHooks()

    # -- properties ------------------------------------------------------------------------

    @property
    def channel_id(self) -> str:
        """The channel's id."""
        return self._channel_id

    @property
    def plugged(self) -> bool:
        """True while a realtime provider is plugged in."""
        return self._plug is not None

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._state is _State.CLOSED

    @property
    def gate(self) -> ToolGate | None:
        """The gate of the plugged provider's calls (None when unplugged)."""
        return None if self._plug is None else self._plug.gate

    @property
    def provider_session(self) -> ProviderSession | None:
        """The plugged provider session (None when unplugged)."""
        return None if self._plug is None else self._plug.provider_session

    @property
    def tools(self) -> list[AITool]:
        """The plugged session's toolset (empty when unplugged)."""
        return [] if self._plug is None else list(self._plug.gate.toolset.values())

    @property
    def tool_handler(self) -> ToolHandler | None:
        """The plugged session's host tool handler."""
        return None if self._plug is None else self._plug.gate.tool_handler

    @property
    def human_input_handler(self) -> HumanInputToolHandler | None:
        """The application's human-input tools of the plugged config."""
        return None if self._plug is None else self._plug.config.human_input_handler

    @property
    def roster(self) -> Mapping[str, Participant]:
        """The participants in the call now."""
        return self.backend.participants

    # -- kit -------------------------------------------------------------------------------

    def bind_kit(self, kit: VoiceKit) -> None:
        """Wire the kit's hooks into the plugged gate and the human-input notifications."""
        self._kit = kit
        if self._plug is not None:
            self._wire(self._plug)

    def _wire(self, plug: RealtimePlug) -> None:
        plug.gate.kit = self._kit
        if plug.human is not None:
            plug.human.handler.reopen(self._channel_id)
            if self._kit is not None:
                self._kit.attach_human_input(self._channel_id, plug.human.handler)

    def _check_open(self) -> None:
        if self._state is _State.CLOSED:
            raise ChannelClosedError(f"conference channel {self._channel_id!r} is closed")

    # -- plugging --------------------------------------------------------------------------

    async def plug_realtime(self, config: ConferenceRealtimeConfig | None = None) -> None:
        """Connect a realtime provider to the call and start serving its doors.

        Registers the hooks and re-opens the human-input scope, so requests are asked and
        announced (``ON_USER_INPUT_REQUIRED``, ``channel_type=CONFERENCE``) as usual.
        Plugging the config already plugged is a no-op.

        Args:
            config: What to plug; the channel's ``realtime=`` by default.

        Raises:
            ChannelClosedError: The channel is closed.
            ValueError: No config was given here or to the channel.
            RuntimeError: Another config is plugged (unplug it first).
            ProviderError: The provider could not connect.

        Cancellation: safe; a half-opened provider session is closed.
        """
        self._check_open()
        config = config or self.realtime
        if config is None:
            raise ValueError(
                f"conference {self._channel_id!r} has no realtime config: pass one to "
                "plug_realtime() or give realtime= to the channel"
            )
        async with self._lock:
            self._check_open()
            if self._plug is not None:
                if self._plug.config is config:
                    return
                raise RuntimeError(
                    f"conference {self._channel_id!r} already has a realtime provider plugged; "
                    "unplug it first"
                )
            plugged: list[RealtimePlug] = []
            plug = await RealtimePlug.connect(
                self._channel_id,
                config,
                desk=self._desk,
                backend=self.backend,
                actor=self._turn.actor,
                listener=self._on_provider_event,
                on_ended=lambda reason: self._ended_by_provider(plugged, reason),
                hooks=self._connect_hooks,
            )
            plugged.append(plug)
            if plug.human is not None:
                self._scopes.add(plug.human.inner)
            self._wire(plug)
            self._plug = plug
            if self.hearing is None:
                plug.start(self._on_frame)
                return
            assert isinstance(self.backend, PerSpeakerBackend)
            speakers = self.backend.open_speakers(self.hearing.sample_rate)
            plug.start(
                self._on_frame, speakers, SpeakerEars(self.hearing, self._heard, speakers.keypad)
            )

    async def unplug_realtime(self) -> None:
        """Unplug the provider; the call and the roster go on. Idempotent.

        In order: stop feeding audio, interrupt the model, disconnect the session, settle the
        open human-input requests (withdrawn, reported ``cancelled`` with
        ``"realtime provider unplugged"``, nothing sent to the provider), close the audio lane.

        Cancellation: don't cancel; call it again to finish the remaining steps.
        """
        await self._unplug(UNPLUGGED)

    def _ended_by_provider(self, plugged: list[RealtimePlug], reason: str) -> None:
        """The plugged provider's stream ended or failed on its own: unplug it (in a task
        :meth:`close` awaits), so the conference shows no provider and can be plugged again."""
        if not plugged or self._plug is not plugged[0]:
            return
        task = asyncio.create_task(self._unplug(reason, only=plugged[0]), name="unplug-ended")
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    def _ended_by_backend(self, reason: str) -> None:
        """The call ended under the bot: unplug the provider (in a task :meth:`close`
        awaits), settling its open requests with ``reason``, and fail the approvals the
        application opened."""
        self._desk.fail_all(reason)
        if self._plug is None:
            return
        task = asyncio.create_task(self._unplug(reason, only=self._plug), name="unplug-ended")
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    async def _unplug(self, reason: str, *, only: RealtimePlug | None = None) -> None:
        async with self._lock:
            plug = self._plug
            if plug is None or (only is not None and plug is not only):
                return
            try:
                await plug.disconnect()
            finally:
                try:
                    await plug.settle(reason)
                finally:
                    await plug.lane.aclose()
                    self._plug = None

    # -- events ----------------------------------------------------------------------------

    @property
    def realtime_config(self) -> ConferenceRealtimeConfig | None:
        """The plugged config (None when unplugged)."""
        return None if self._plug is None else self._plug.config

    async def play_bot_audio(self, pcm16: PCM16, sample_rate: int) -> None:
        """Play speech on the bot's track (resampled to the plugged rate); nothing when
        unplugged.

        Cancellation: safe; the rest is not played.
        """
        plug = self._plug
        if plug is None:
            return
        rate = plug.config.sample_rate
        audio = resample_pcm16(pcm16, sample_rate, rate)
        step = max(1, rate // 10)
        for start in range(0, len(audio), step):
            await plug.lane.play(audio[start : start + step])

    def find_line(self, event: PendingInputEvent) -> ConferenceLine | None:
        """The line a spoken dialogue asks ``event`` on (None when unplugged or not ours);
        it offers the keypad only when every addressed participant's line carries tones the
        channel reads (per-speaker hearing)."""
        plug = self._plug
        if event.channel_id != self._channel_id or plug is None:
            return None
        speakers = plug.speakers
        addressed = self.addressed_participants(event) or list(self.backend.participants)
        keypad = speakers is not None and all(speakers.keypad(pid) for pid in addressed)
        return ConferenceLine(self, keypad=keypad and bool(addressed))

    def addressed_participants(self, event: PendingInputEvent) -> list[str] | None:
        """Ids of the participants who must answer ``event`` (None: anyone in the call)."""
        addressed = self.addressed_to(event.pending_id)
        return None if addressed is None else [p.participant_id for p in addressed]

    def _on_backend_event(self, event: ConferenceEvent) -> None:
        if isinstance(event, ConferenceEnded):
            self._ended_by_backend(event.reason)
        elif isinstance(event, ParticipantLeft):
            self._desk.participant_left(event.participant, event.reason)
            if self.ears is not None:
                self.ears.forget(event.participant.participant_id)
        elif isinstance(event, SpeakerTranscription) and event.final:
            self._turn.heard(event.participant_id)
            self._desk.spoken(event.participant_id, event.text)

    # -- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Unplug the provider, fail open approvals and end the channel. Idempotent.

        Later plugs and approvals raise ``ChannelClosedError``; later requests for this
        channel's scope are refused by the human-input handlers it served.

        Cancellation: don't cancel; call it again to finish.
        """
        self._state = _State.CLOSED
        await self._unplug(CHANNEL_CLOSED)
        while self._ending:  # a provider that ended on its own, still being unplugged
            ending = list(self._ending)
            await asyncio.gather(*ending, return_exceptions=True)
            # gather() of finished tasks returns without yielding, before their done
            # callbacks (which discard them) have run: drop them here or this loop spins.
            self._ending.difference_update(ending)
        self._desk.close()
        self._remove_listener()
        for human in list(self._scopes):
            await human.handler.close(channel_id=self._channel_id)
        if self._kit is not None:
            self._kit.unregister_channel(self)

    async def __aenter__(self) -> ConferenceChannel:
        if self.realtime is not None:
            await self.plug_realtime()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
