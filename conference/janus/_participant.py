"""``RtpParticipant``: a scripted plain-RTP participant of an AudioBridge room.

It joins under a name, sends 20 ms PCMU packets at real time with the RFC 6464 audio level in
a header extension (as browsers send it), silence between utterances as an open microphone
does, keeps the room mix it hears, and leaves on cue. Given a seat the bot reserved, it sends
to the seat (the bot relays it into the room) and leaves with an RTCP BYE; without one it
joins Janus itself. The demo's meeting and the tests use it as the people in the room.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

import numpy as np

from providers.base import PCM16
from providers.twilio._mulaw import mulaw_to_pcm16
from voice_hitl.voice._audio import resample_pcm16

from ._client import JanusSession
from ._media import Address, open_udp
from ._relay import RTCP_BYE, Seat
from ._rtp import FRAME_SAMPLES, RtpSender, audio_level, parse_rtp
from ._wire import JanusWireError, OwnJoin, read_events, room_join

__all__ = ["RtpParticipant"]

_SILENCE = np.zeros(FRAME_SAMPLES, dtype=np.int16)


class RtpParticipant:
    """A plain-RTP participant that speaks recordings at real time.

    Args:
        url: The Janus HTTP API root.
        room: The AudioBridge room id.
        display_name: The name the room shows.
        seat: The seat the bot reserved for them (:meth:`JanusConferenceBackend.reserve_seat`).
        audiolevel_ext: Joining Janus itself (no seat), announce the audio-level extension
            (id 1) in the join; ``False``: a plain-RTP line that reports no levels.
    """

    def __init__(
        self,
        url: str,
        room: int,
        display_name: str,
        seat: Seat | None = None,
        *,
        audiolevel_ext: bool = True,
    ) -> None:
        self.url = url
        self.audiolevel_ext = audiolevel_ext
        self.room = room
        self.display_name = display_name
        self.seat = seat
        self.participant_id: str | None = None
        self.heard: list[PCM16] = []
        """The room mix received, one 8 kHz packet each."""
        self.sent: list[tuple[float, int]] = []
        """(send time, RFC 6464 level) of each packet of speech sent."""
        self._queue: deque[PCM16] = deque()
        self._spoken = asyncio.Event()
        self._heard_more = asyncio.Event()
        self._sender = RtpSender(level_id=1 if audiolevel_ext else None)
        self._session: JanusSession | None = None
        self._handle = 0
        self._socket: asyncio.DatagramTransport | None = None
        self._task: asyncio.Task[None] | None = None
        self._remote: Address | None = None

    async def join(self) -> RtpParticipant:
        """Join the room and start sending (silence until :meth:`say`).

        Raises:
            JanusLostError: Janus cannot be reached.
            JanusWireError: The room refused the join.

        Cancellation: safe; call :meth:`leave` to close what was opened.
        """
        self._socket = await open_udp(self._on_mix)
        if self.seat is not None:
            self.participant_id = str(self.seat.participant_id)
            remote: Address = (self.seat.host, self.seat.port)
        else:
            remote = await self._join_janus()
        self._remote = remote
        self._task = asyncio.create_task(self._pace(remote), name=f"rtp-{self.display_name}")
        return self

    async def _join_janus(self) -> Address:
        assert self._socket is not None
        self._session = JanusSession(self.url, on_message=lambda m: None, on_lost=lambda r: None)
        await self._session.open()
        self._handle = await self._session.attach()
        port = int(self._socket.get_extra_info("sockname")[1])
        reply = await self._session.call_async(
            self._handle,
            room_join(
                self.room,
                self.display_name,
                rtp_port=port,
                audiolevel_ext=1 if self.audiolevel_ext else None,
            ),
        )
        own = [e for e in read_events(reply) if isinstance(e, OwnJoin)]
        if not own:
            raise JanusWireError(f"{self.display_name} could not join room {self.room}: {reply}")
        self.participant_id = own[0].participant_id
        return (own[0].rtp_host, own[0].rtp_port)

    def _on_mix(self, data: bytes, source: Address) -> None:
        try:
            self.heard.append(mulaw_to_pcm16(parse_rtp(data).payload))
        except ValueError:
            return
        self._heard_more.set()

    async def _pace(self, remote: tuple[str, int]) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            voice = bool(self._queue)
            frame = self._queue.popleft() if voice else _SILENCE
            if not voice:
                self._spoken.set()
            if self._socket is not None:
                self._socket.sendto(self._sender.packet(frame, voice=voice), remote)
            if voice:
                self.sent.append((loop.time(), audio_level(frame)))
            due += FRAME_SAMPLES / 8_000
            await asyncio.sleep(max(0.0, due - loop.time()))

    def say_later(self, samples: PCM16, rate: int = 8_000) -> None:
        """Queue speech (mono PCM16 at ``rate``) to be sent at real time, without waiting."""
        audio = resample_pcm16(samples, rate, 8_000)
        self._spoken.clear()
        for start in range(0, len(audio), FRAME_SAMPLES):
            self._queue.append(audio[start : start + FRAME_SAMPLES])

    async def say(self, samples: PCM16, rate: int = 8_000) -> None:
        """Speak ``samples`` at real time; returns once the last packet of it is sent.

        Cancellation: safe; what is queued is still sent.
        """
        self.say_later(samples, rate)
        await self._spoken.wait()

    async def hears_loud(self, since: int, packets: int, level: int = 3000) -> None:
        """Wait until ``packets`` packets heard after index ``since`` peak above ``level``.

        Cancellation: safe.
        """
        while sum(1 for h in self.heard[since:] if int(np.abs(h).max()) > level) < packets:
            self._heard_more.clear()
            await self._heard_more.wait()

    def _bye(self) -> bytes:
        """An RTCP BYE for our SSRC (RFC 3550 6.6; on the RTP port, RFC 5761)."""
        return bytes([0x81, RTCP_BYE, 0, 1]) + self._sender.ssrc.to_bytes(4, "big")

    async def leave(self) -> None:
        """Leave the room and close everything. Idempotent.

        Cancellation: safe; the socket and the session are closed regardless.
        """
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.seat is not None and self._socket is not None and self._remote is not None:
            self._socket.sendto(self._bye(), self._remote)
        try:
            session, self._session = self._session, None
            if session is not None:
                try:
                    if session.lost is None and self._handle:
                        with contextlib.suppress(ConnectionError, JanusWireError):
                            await session.call(self._handle, {"request": "leave"})
                finally:
                    await session.aclose()
        finally:
            if self._socket is not None:
                self._socket.close()
                self._socket = None
