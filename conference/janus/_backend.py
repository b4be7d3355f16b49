"""``JanusConferenceBackend``: a conference in a Janus AudioBridge room.

The bot joins the room as a plain-RTP participant (G.711 µ-law on loopback by default, Opus as
an option), so it hears the room's mix without itself and speaks into it. The roster follows the
room's join and leave events, with display names.

Each participant's own audio (``open_speakers``, for per-speaker hearing) comes from **seats**:
a plain-RTP participant or SIP gateway leg given a seat (:meth:`JanusConferenceBackend.
reserve_seat`) sends its RTP to the bot, which hears it and relays it to an AudioBridge leg it
joined for them (``_relay``). AudioBridge cannot forward one participant's own audio (only a
room's or a group's mix, and Janus 1.1.2 allows 5 groups a room), so the room has no groups:
any number of seats fit, and WebRTC and plain-RTP clients without a seat join as before. Who
spoke in each mixed frame comes from the seats' own levels and, for WebRTC participants,
AudioBridge's talking events (``conference.SpeakerClock``); participants without a seat are
heard per speaker through the room mix cut by those events (:attr:`JanusConferenceBackend.
mix_cut`, ``conference.MixCut``), and a plain-RTP joiner (no talking events from Janus 1.1.2)
is a line without levels, which closes the cut to high-risk votes once it is heard talking
(see ``docs/guides/conference-janus.md``).

A participant leaving or being kicked, and the room being destroyed, reach listeners as
:class:`~conference.ParticipantLeft`; the room destroyed, the bot kicked, or the Janus session
lost (the long poll or a keepalive cannot reach Janus, or Janus expired the session) end the
backend with :class:`~conference.ConferenceEnded`, and the channel settles its open requests
with that reason.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Coroutine, Mapping
from types import MappingProxyType
from typing import Any

from .._backend import (
    ConferenceEnded,
    ConferenceEvent,
    ConferenceListener,
    Participant,
    ParticipantJoined,
    ParticipantLeft,
)
from .._mix_cut import MixCut
from .._speaker_clock import SpeakerClock
from . import _wire
from ._client import JanusSession
from ._codec import CodecName, make_codec
from ._lane import JanusAudioLane, JanusSpeakerLane
from ._media import MIX_LAG, BotMedia
from ._relay import Seat, SeatRelay, bind_udp

__all__ = ["JanusConferenceBackend", "Seat"]

logger = logging.getLogger("conference.janus")

_ROOM_EXISTS = 486
MAX_SEATS = 1024


class JanusConferenceBackend:
    """A Janus AudioBridge room as a :class:`~conference.ConferenceBackend`.

    Args:
        url: The Janus HTTP API root, e.g. ``http://127.0.0.1:8088/janus``.
        room: The AudioBridge room id.
        secret: The room's secret (to create it, forward its audio, kick, destroy).
        create: Create the room (and destroy it on close); otherwise join an existing one.
        seats: How many seats may be taken at once (plain-RTP participants heard on their own
            stream through the bot, :meth:`reserve_seat`); 0..1024.
        media_host: The address seated participants send their RTP to.
        seat_idle_timeout: Seconds of no RTP after which a seated participant counts as gone.
        sample_rate: The rate of the lanes' audio (the plugged provider's rate).
        display_name: The bot's name in the room.
        jitter_depth: Packets (20 ms each) the input jitter buffer holds before playing.
        keepalive: Seconds between Janus keepalives.
        request_timeout: Seconds a request (a keepalive too) may take before the session
            counts as lost.
        codec: The bot leg's codec: ``"pcmu"`` (G.711 µ-law, 8 kHz, no library) or
            ``"opus"`` (48 kHz through PyAV's libopus; the bot hears the room's 16 kHz mix).

    Raises:
        ValueError: A number is out of range, or an unknown codec.
        ModuleNotFoundError: ``codec="opus"`` without PyAV (``av``) installed.
    """

    def __init__(
        self,
        url: str,
        room: int,
        *,
        secret: str,
        create: bool = True,
        seats: int = 0,
        media_host: str = "127.0.0.1",
        seat_idle_timeout: float = 30.0,
        sample_rate: int = 24_000,
        display_name: str = "voice-hitl bot",
        jitter_depth: int = 3,
        keepalive: float = 15.0,
        request_timeout: float = 10.0,
        codec: CodecName = "pcmu",
    ) -> None:
        if room <= 0:
            raise ValueError(f"room must be a positive AudioBridge room id, got {room}")
        if not 0 <= seats <= MAX_SEATS:
            raise ValueError(f"seats must be in 0..{MAX_SEATS}, got {seats}")
        if not seat_idle_timeout > 0:
            raise ValueError(f"seat_idle_timeout must be above 0, got {seat_idle_timeout}")
        if sample_rate < 8_000:
            raise ValueError(f"sample_rate must be at least 8000, got {sample_rate}")
        self.url = url
        self.room = room
        self.secret = secret
        self.create = create
        self.display_name = display_name
        self.sample_rate = sample_rate
        self.clock = SpeakerClock(window=0.09)
        bot_codec = make_codec(codec)
        self.mix_cut = MixCut(
            self.clock, bot_codec.rate, seated=lambda pid: pid in self._relays, shift=MIX_LAG
        )
        """The cut of the room mix that participants without a seat are heard through."""
        self.media = BotMedia(
            sample_rate, self.clock, jitter_depth=jitter_depth, codec=bot_codec, cut=self.mix_cut
        )
        self._session = JanusSession(
            url,
            on_message=self._on_message,
            on_lost=self._lost,
            keepalive=keepalive,
            request_timeout=request_timeout,
        )
        self.seats = seats
        self.media_host = media_host
        self.seat_idle_timeout = seat_idle_timeout
        self._relays: dict[str, SeatRelay] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._handle: int | None = None
        self._own_id: str | None = None
        self._participants: dict[str, Participant] = {}
        self._listeners: list[ConferenceListener] = []
        self._created = False
        self.ended: str | None = None
        self._started = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the Janus session, create or find the room, and join it.

        Raises:
            JanusLostError: Janus cannot be reached.
            JanusWireError: Janus refused a request (the room exists with other settings, a
                wrong secret, plain RTP not allowed in the room...).
            RuntimeError: Started twice.

        Cancellation: safe; what was opened is closed.
        """
        if self._started:
            raise RuntimeError("the Janus backend was already started")
        self._started = True
        try:
            await self._session.open()
            self._handle = await self._session.attach()
            if self.create:
                await self._create_room()
            await self.media.open()
            joined = await self._session.call_async(
                self._handle,
                _wire.room_join(
                    self.room,
                    self.display_name,
                    rtp_port=self.media.local_port,
                    codec=self.media.codec.name,
                    payload_type=self.media.codec.payload_type,
                ),
            )
            own = [e for e in _wire.read_events(joined) if isinstance(e, _wire.OwnJoin)]
            errors = [e for e in _wire.read_events(joined) if isinstance(e, _wire.BridgeError)]
            if errors or not own:
                reason = errors[0].error if errors else "no join reply"
                raise _wire.JanusWireError(f"joining room {self.room} failed: {reason}")
            self._own_id = own[0].participant_id
            self._on_message(joined)  # the people already in the room
            self.media.start((own[0].rtp_host, own[0].rtp_port))
        except BaseException:
            await self.aclose()
            raise

    async def _create_room(self) -> None:
        assert self._handle is not None
        try:
            await self._session.call(
                self._handle, _wire.room_create(self.room, self.secret, sampling_rate=16_000)
            )
            self._created = True
        except _wire.JanusWireError as exc:
            if f"error {_ROOM_EXISTS}" not in str(exc):
                raise

    async def aclose(self) -> None:
        """Leave (destroying the room if this backend created it) and close. Idempotent.

        Cancellation: safe; sockets and tasks are closed regardless.
        """
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        usable = self._session if self._session.lost is None and self.ended is None else None
        for relay in list(self._relays.values()):
            await relay.aclose(usable if not self._created else None)
        self._relays.clear()
        try:
            if self._handle is not None and self._session.lost is None and self.ended is None:
                try:
                    if self._created:
                        await self._session.call(
                            self._handle,
                            {"request": "destroy", "room": self.room, "secret": self.secret},
                        )
                    else:
                        await self._session.call(self._handle, {"request": "leave"})
                except (ConnectionError, _wire.JanusWireError) as exc:
                    logger.warning("janus room %s: leaving failed: %s", self.room, exc)
        finally:
            self._handle = None
            await self.media.aclose()
            await self._session.aclose()

    async def __aenter__(self) -> JanusConferenceBackend:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- roster ------------------------------------------------------------------------------

    @property
    def participants(self) -> Mapping[str, Participant]:
        """The participants in the room now (not the bot), by id (a read-only view)."""
        return MappingProxyType(self._participants)

    def reserve_seat(self, display_name: str) -> Seat:
        """A seat for a plain-RTP participant (or a SIP gateway's leg): it sends PCMU RTP to
        ``seat.host``:``seat.port`` (and hears the room there) instead of joining Janus
        itself; with its first packet the bot joins the room for it under ``display_name`` and
        ``seat.participant_id`` (its :class:`~conference.ParticipantJoined` follows) and hears
        its own audio. A seat nobody calls is nobody in the room.

        Raises:
            RuntimeError: The backend is not started, has ended, or all seats are taken.
            ValueError: ``display_name`` is empty.
        """
        if not display_name.strip():
            raise ValueError("a seat's display_name must not be empty")
        if self._handle is None or self.ended is not None:
            raise RuntimeError(f"room {self.room}: seats are reserved once the backend started")
        if len(self._relays) >= self.seats:
            raise RuntimeError(
                f"all {self.seats} seats of room {self.room} are taken; give the backend more "
                "seats="
            )
        sock = bind_udp(self.media_host)
        seat = Seat(
            secrets.randbelow(2**50) + 1,
            display_name,
            self.media_host,
            int(sock.getsockname()[1]),
        )
        relay = SeatRelay(
            seat,
            sock,
            hear=self.media.hear,
            stats=self.media.stats,
            on_first=lambda relay: self._spawn(self._join_seat(relay), "janus-seat-join"),
            on_gone=self._seat_gone,
            idle_timeout=self.seat_idle_timeout,
        )
        self._relays[relay.participant_id] = relay
        self._spawn(self._open_seat(relay), "janus-seat-open")
        return seat

    async def _open_seat(self, relay: SeatRelay) -> None:
        await relay.open()

    async def _join_seat(self, relay: SeatRelay) -> None:
        try:
            await relay.join(self._session, self.room)
        except (ConnectionError, _wire.JanusWireError) as exc:
            logger.warning("janus room %s: %s", self.room, exc)
            self._relays.pop(relay.participant_id, None)
            await relay.aclose(self._session)

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _seat_gone(self, relay: SeatRelay, reason: str) -> None:
        logger.info("janus room %s: a seated participant %s", self.room, reason)
        self._spawn(self._close_seat(relay.participant_id), "janus-seat-close")

    async def _close_seat(self, participant_id: str) -> None:
        relay = self._relays.pop(participant_id, None)
        if relay is not None:
            await relay.aclose(self._session)

    async def release_seat(self, participant_id: str) -> None:
        """End a seat: the bot's leg for it leaves the room (the participant leaves). Does
        nothing for an id that holds no seat.

        Cancellation: safe; the sockets are closed regardless.
        """
        await self._close_seat(participant_id)

    async def kick(self, participant_id: str) -> None:
        """Remove a participant from the room (they leave with reason "was kicked").

        Raises:
            JanusWireError: No such participant, or Janus refused.

        Cancellation: safe; the kick may still happen.
        """
        assert self._handle is not None
        await self._session.call(
            self._handle,
            {
                "request": "kick",
                "room": self.room,
                "secret": self.secret,
                "id": int(participant_id),
            },
        )

    async def destroy_room(self) -> None:
        """Destroy the room (everyone leaves; the backend ends).

        Cancellation: safe; the room may still be destroyed.
        """
        assert self._handle is not None
        await self._session.call(
            self._handle, {"request": "destroy", "room": self.room, "secret": self.secret}
        )

    # -- audio -------------------------------------------------------------------------------

    def open_audio(self) -> JanusAudioLane:
        """Open a lane: the room's mix from now on (ended at once if the call ended)."""
        lane = JanusAudioLane(self.sample_rate, self.media.outbound)
        if self.ended is not None:
            lane.end()
        else:
            self.media.lanes.add(lane)
        return lane

    def open_speakers(self, sample_rate: int) -> JanusSpeakerLane:
        """Open a lane of every seated participant's own audio, and of every participant
        known from talking events (a WebRTC client) cut from the room mix (``mix_cut``), at
        ``sample_rate``, from now on (ended at once if the call ended).

        Raises:
            ValueError: ``sample_rate`` is below 8000.
        """
        if sample_rate < 8_000:
            raise ValueError(f"sample_rate must be at least 8000, got {sample_rate}")
        lane = JanusSpeakerLane(sample_rate, lambda pid: pid in self._relays)
        if self.ended is not None:
            lane.end()
        else:
            self.media.speaker_lanes.add(lane)
        return lane

    @property
    def open_lanes(self) -> int:
        """How many audio lanes (mixed and per-speaker) are open."""
        return sum(1 for lane in self.media.lanes if not lane.closed) + sum(
            1 for lane in self.media.speaker_lanes if not lane.closed
        )

    # -- events ------------------------------------------------------------------------------

    def add_listener(self, listener: ConferenceListener) -> Callable[[], None]:
        """Receive roster changes and the end of the call; returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: ConferenceEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("conference listener failed on %s", event.type)

    def _on_message(self, msg: Mapping[str, Any]) -> None:
        try:
            events = _wire.read_events(msg)
        except _wire.JanusWireError as exc:
            logger.warning("janus room %s: unreadable message: %s", self.room, exc)
            return
        now = asyncio.get_running_loop().time()
        for event in events:
            if isinstance(event, _wire.PeerJoined):
                if event.participant_id != self._own_id and (
                    event.participant_id not in self._participants
                ):
                    participant = Participant(event.participant_id, event.display_name)
                    self._participants[event.participant_id] = participant
                    self._emit(ParticipantJoined(participant))
            elif isinstance(event, _wire.PeerLeft):
                self._peer_left(event)
            elif isinstance(event, _wire.Talking):
                self.clock.talking(event.participant_id, event.talking, now)
            elif isinstance(event, _wire.RoomDestroyed):
                for participant in list(self._participants.values()):
                    self._leave(participant.participant_id, "left: the room was destroyed")
                self._end(f"the AudioBridge room {self.room} was destroyed")
            elif isinstance(event, _wire.SessionEnded):
                self._lost(f"Janus session lost: {event.reason}")
            elif isinstance(event, _wire.BridgeError):
                logger.warning("janus room %s: error %s: %s", self.room, event.code, event.error)

    def _peer_left(self, event: _wire.PeerLeft) -> None:
        if event.participant_id == self._own_id:
            self._end(f"the bot was {'kicked from' if event.kicked else 'removed from'} the room")
            return
        reason = "was kicked from the conference" if event.kicked else "left the conference"
        self._leave(event.participant_id, reason)

    def _leave(self, participant_id: str, reason: str) -> None:
        participant = self._participants.pop(participant_id, None)
        self.clock.forget(participant_id)
        if participant_id in self._relays:
            self._spawn(self._close_seat(participant_id), "janus-seat-close")
        if participant is not None:
            self._emit(ParticipantLeft(participant, reason))

    def _end(self, reason: str) -> None:
        if self.ended is not None:
            return
        self.ended = reason
        self._emit(ConferenceEnded(reason))
        self.media.end_lanes()

    def _lost(self, reason: str) -> None:
        self._end(reason)
