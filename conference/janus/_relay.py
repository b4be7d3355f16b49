"""``SeatRelay``: a seated participant's plain-RTP leg, relayed through the bot.

AudioBridge mixes: it forwards a room's or a group's mix, never one participant's own audio,
and Janus 1.1.2 allows 5 groups a room. So a seated participant (a plain-RTP client, a SIP
gateway's leg) sends its RTP to the bot instead of Janus: the relay hears each packet (the
participant's own audio, for per-speaker hearing) and passes it on to the AudioBridge leg it
joined for them under their name and id, and passes that leg's mix back to them. Rooms need no
groups, so any number of seats fit and participants without a seat join as before.

The participant's socket takes RTP only from the first source that sends it valid PCMU and
only with that SSRC; the Janus-facing socket only from Janus's address for the leg. The
participant leaving is an RTCP BYE on the same port (RFC 5761 multiplexing), their silence
for ``idle_timeout`` seconds, or :meth:`JanusConferenceBackend.release_seat`.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

from providers.base import PCM16
from providers.twilio._mulaw import mulaw_to_pcm16

from . import _wire
from ._client import JanusSession
from ._latch import RtpLatch, RtpStats
from ._media import open_udp
from ._rtp import PCMU, parse_rtp

__all__ = ["RTCP_BYE", "Seat", "SeatRelay", "bind_udp"]

logger = logging.getLogger("conference.janus")

RTCP_BYE = 203
Address = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Seat:
    """Where a seated plain-RTP participant sends its audio: G.711 µ-law (PCMU, payload
    type 0) RTP to ``host``:``port``, from one socket that also receives the room's mix;
    an RTCP BYE there (or silence) ends the seat. ``participant_id`` is their id in the
    room."""

    participant_id: int
    display_name: str
    host: str
    port: int


def bind_udp(host: str) -> socket.socket:
    """A non-blocking UDP socket bound to ``host`` on a free port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((host, 0))
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


class SeatRelay:
    """One seat: the participant's socket, the AudioBridge leg joined for them, the relay.

    Args:
        seat: The seat.
        sock: The participant-facing socket (already bound: the seat names its port).
        hear: Called with each packet of their own audio (8 kHz PCM16) and its arrival time.
        stats: Where packets are counted.
        on_gone: Called once when the participant ended the seat (BYE or silence).
        idle_timeout: Seconds of no RTP after which the participant counts as gone.
    """

    def __init__(
        self,
        seat: Seat,
        sock: socket.socket,
        *,
        hear: Callable[[str, PCM16, float], None],
        stats: RtpStats,
        on_gone: Callable[[SeatRelay, str], None],
        idle_timeout: float = 30.0,
    ) -> None:
        self.seat = seat
        self.participant_id = str(seat.participant_id)
        self._sock: socket.socket | None = sock
        self._hear = hear
        self.stats = stats
        self._on_gone = on_gone
        self.idle_timeout = idle_timeout
        self._caller = RtpLatch(stats, "a seat")
        self._janus = RtpLatch(stats, "a seat's room mix", expected=("", 0))
        self._outside: asyncio.DatagramTransport | None = None
        self._inside: asyncio.DatagramTransport | None = None
        self._handle: int | None = None
        self._last = 0.0
        self._watch: asyncio.Task[None] | None = None
        self.gone: str | None = None

    async def open(self, session: JanusSession, room: int) -> None:
        """Open the sockets and join the room for the participant.

        Raises:
            JanusWireError: The room refused the join.
            JanusLostError: Janus cannot be reached.

        Cancellation: safe; call :meth:`aclose` to close what was opened.
        """
        sock, self._sock = self._sock, None
        assert sock is not None
        self._outside = await open_udp(self._from_caller, sock)
        self._inside = await open_udp(self._from_janus)
        self._handle = await session.attach()
        port = int(self._inside.get_extra_info("sockname")[1])
        joined = await session.call_async(
            self._handle,
            _wire.room_join(
                room, self.seat.display_name, rtp_port=port, participant_id=self.seat.participant_id
            ),
        )
        events = _wire.read_events(joined)
        own = [e for e in events if isinstance(e, _wire.OwnJoin)]
        if not own:
            errors = [e.error for e in events if isinstance(e, _wire.BridgeError)]
            raise _wire.JanusWireError(
                f"a seat could not join room {room}: {errors[0] if errors else 'no join reply'}"
            )
        self._janus.expect((own[0].rtp_host, own[0].rtp_port))
        self._last = asyncio.get_running_loop().time()
        self._watch = asyncio.create_task(self._watch_idle(), name="janus-seat-idle")

    def _from_caller(self, data: bytes, source: Address) -> None:
        if len(data) >= 2 and data[1] == RTCP_BYE and data[0] >> 6 == 2:
            if source == self._caller.source:
                self._end("left the conference")
            return
        try:
            packet = parse_rtp(data)
        except ValueError:
            self.stats.malformed += 1
            return
        if packet.payload_type != PCMU:
            self.stats.malformed += 1
            return
        if not self._caller.accepts(source, packet.ssrc):
            return
        self.stats.received += 1
        loop = asyncio.get_running_loop()
        self._last = loop.time()
        self._hear(self.participant_id, mulaw_to_pcm16(packet.payload), self._last)
        if self._inside is not None and self._janus.source is not None:
            self._inside.sendto(data, self._janus.source)

    def _from_janus(self, data: bytes, source: Address) -> None:
        try:
            packet = parse_rtp(data)
        except ValueError:
            self.stats.malformed += 1
            return
        if not self._janus.accepts(source, packet.ssrc):
            return
        if self._outside is not None and self._caller.source is not None:
            self._outside.sendto(data, self._caller.source)

    async def _watch_idle(self) -> None:
        loop = asyncio.get_running_loop()
        while self.gone is None:
            wait = self._last + self.idle_timeout - loop.time()
            if wait <= 0:
                self._end(f"sent no audio for {self.idle_timeout:g} s")
                return
            await asyncio.sleep(wait)

    def _end(self, reason: str) -> None:
        if self.gone is None:
            self.gone = reason
            self._on_gone(self, reason)

    async def aclose(self, session: JanusSession | None) -> None:
        """Close the sockets, then leave the room (when ``session`` is still usable).
        Idempotent.

        Cancellation: safe; the sockets are closed before the first await.
        """
        for transport in (self._outside, self._inside):
            if transport is not None:
                transport.close()
        self._outside = self._inside = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        watch, self._watch = self._watch, None
        if watch is asyncio.current_task():
            watch = None
        if watch is not None:
            watch.cancel()
        handle, self._handle = self._handle, None
        try:
            if handle is not None and session is not None and session.lost is None:
                try:
                    await session.call(handle, {"request": "leave"})
                except (ConnectionError, _wire.JanusWireError) as exc:
                    logger.info("a seat's leg did not leave cleanly: %s", exc)
        finally:
            if watch is not None:
                await asyncio.gather(watch, return_exceptions=True)
