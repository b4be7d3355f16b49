"""The bot's RTP: the room mix in (through a jitter buffer), speech out, seats' own audio in.

:class:`BotMedia` owns the bot leg's UDP socket and one pacing task. Every 20 ms the task plays
one packet time of the room mix out of the jitter buffer (a lost packet is 20 ms of silence) to
the open lanes, labelled with who was speaking when it arrived, and sends one packet of the
bot's speech (silence when it has nothing to say: AudioBridge answers a plain-RTP participant
only once it sends, and a steady stream keeps the timestamps true to the clock). The seats'
relays hand it each seated participant's own audio (:meth:`BotMedia.hear`), which goes to the
per-speaker lanes and sets who was speaking; the mix, cut by who was talking when
(``MixCut``), goes to them too as the streams of participants without a seat. The mix is taken
only from Janus's address and SSRC (:class:`RtpLatch`); the rest is counted in
:attr:`BotMedia.stats` and dropped.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from providers.base import PCM16

from .._backend import MixedFrame
from .._mix_cut import MixCut
from .._speaker_clock import SpeakerClock
from ._codec import Codec, Pcmu
from ._jitter import JitterBuffer
from ._lane import JanusAudioLane, JanusSpeakerLane, OutboundAudio
from ._latch import RtpLatch, RtpStats
from ._resample import StreamResampler
from ._rtp import FRAME_SAMPLES, RtpSender, audio_level, parse_rtp

__all__ = ["BotMedia", "open_udp"]

logger = logging.getLogger("conference.janus")

PACKET_SECONDS = FRAME_SAMPLES / 8_000
MIX_LAG = 0.15
"""Seconds from a seated participant's packet reaching the bot to the room mix carrying it:
Janus 1.1.2's AudioBridge queues a plain-RTP participant's packets and mixes them on its 20 ms
tick (measured on loopback: 80-160 ms, more on a loaded host; a seat's level counts 90 ms
either side of this, see ``SpeakerClock(window=)``)."""


Address = tuple[str, int]


class _Inbox(asyncio.DatagramProtocol):
    def __init__(self, on_datagram: Callable[[bytes, Address], None]) -> None:
        self.on_datagram = on_datagram

    def datagram_received(self, data: bytes, addr: tuple[str | object, ...]) -> None:
        port = addr[1]
        if isinstance(port, int):
            self.on_datagram(data, (str(addr[0]), port))

    def error_received(self, exc: Exception) -> None:  # ICMP unreachable: Janus gone
        logger.debug("janus rtp: %s", exc)


async def open_udp(
    on_datagram: Callable[[bytes, Address], None], sock: socket.socket | None = None
) -> asyncio.DatagramTransport:
    """A UDP socket on 127.0.0.1 (a free port, or ``sock`` already bound) feeding
    ``on_datagram(data, source)``.

    Cancellation: safe.
    """
    loop = asyncio.get_running_loop()
    if sock is not None:
        transport, _ = await loop.create_datagram_endpoint(lambda: _Inbox(on_datagram), sock=sock)
    else:
        transport, _ = await loop.create_datagram_endpoint(
            lambda: _Inbox(on_datagram), local_addr=("127.0.0.1", 0)
        )
    return transport


@dataclass(slots=True)
class _Arrived:
    payload: bytes
    at: float


class BotMedia:
    """The bot leg's RTP and the seats' level streams.

    Args:
        sample_rate: The rate of the mixed frames handed to lanes.
        clock: Who spoke when.
        jitter_depth: Packets the jitter buffer holds before playing (x 20 ms of delay).
        speech_level: A seat's frame whose RFC 6464 level is below this counts as speech in
            the mix's speaker labels (-40 dBov: a line's -45 dBov hiss names nobody).
        codec: The bot leg's codec (µ-law by default).
        cut: Cuts the mix into streams for participants without a seat (at the codec's
            rate), handed to the per-speaker lanes with the seats' own audio.
    """

    def __init__(
        self,
        sample_rate: int,
        clock: SpeakerClock,
        *,
        jitter_depth: int = 3,
        speech_level: int = 40,
        codec: Codec | None = None,
        cut: MixCut | None = None,
    ) -> None:
        self.sample_rate = sample_rate
        self.clock = clock
        self.speech_level = speech_level
        self.jitter: JitterBuffer[_Arrived] = JitterBuffer(jitter_depth)
        self.codec: Codec = codec or Pcmu()
        self.cut = cut
        self._silence = np.zeros(self.codec.frame, dtype=np.int16)
        self.outbound = OutboundAudio(self.codec.rate, self.codec.frame)
        self.lanes: set[JanusAudioLane] = set()
        self.speaker_lanes: set[JanusSpeakerLane] = set()
        self.sender = RtpSender(codec=self.codec)
        self.bot: asyncio.DatagramTransport | None = None
        self.remote: tuple[str, int] | None = None
        self.stats = RtpStats()
        """Packets accepted, malformed and foreign on every socket of the bot (seats too)."""
        self._latch = RtpLatch(self.stats, "the room mix", expected=("", 0))
        self._task: asyncio.Task[None] | None = None
        self._last_at = 0.0
        self._times: deque[float] = deque([0.0, 0.0], maxlen=2)
        self.upsample = StreamResampler(self.codec.rate, self.codec.rate)  # see open()

    @property
    def local_port(self) -> int:
        assert self.bot is not None
        return int(self.bot.get_extra_info("sockname")[1])

    async def open(self) -> None:
        """Bind the bot's RTP socket (before joining: the join names its port).

        Cancellation: safe.
        """
        # Importing soxr takes ~0.15 s: off the loop, not in the pacing.
        self.upsample = await asyncio.to_thread(
            StreamResampler, self.codec.rate, self.sample_rate
        )
        self.bot = await open_udp(self._on_mix)

    def hear(self, participant_id: str, pcm8k: PCM16, at: float) -> None:
        """One packet of a seated participant's own audio (8 kHz), heard at ``at``: it sets
        whether they were speaking then and goes to every per-speaker lane."""
        # The room mix carries it MIX_LAG later (AudioBridge buffers and mixes it first).
        self.clock.level(participant_id, at + MIX_LAG, audio_level(pcm8k) < self.speech_level)
        self._to_speaker_lanes(participant_id, pcm8k, at, 8_000)

    def _to_speaker_lanes(
        self, participant_id: str, samples: PCM16, at: float, rate: int, attribution: float = 1.0
    ) -> None:
        for lane in list(self.speaker_lanes):
            if lane.closed:
                self.speaker_lanes.discard(lane)
            else:
                lane.feed(participant_id, samples, at, rate=rate, attribution=attribution)

    def _on_mix(self, data: bytes, source: Address) -> None:
        try:
            packet = parse_rtp(data)
        except ValueError:
            self.malformed_packet()
            return
        if packet.payload_type != self.codec.payload_type:
            self.malformed_packet()
            return
        if not self._latch.accepts(source, packet.ssrc):
            return
        self.stats.received += 1
        now = asyncio.get_running_loop().time()
        self.jitter.push(packet.sequence, _Arrived(packet.payload, now))

    def malformed_packet(self) -> None:
        """Count a datagram that was not the RTP a socket expects."""
        self.stats.malformed += 1

    def start(self, remote: tuple[str, int]) -> None:
        """Start pacing: mix out to lanes and bot speech to ``remote`` every 20 ms (the mix
        is taken only from ``remote``)."""
        self.remote = remote
        self._latch.expect(remote)
        self._task = asyncio.create_task(self._pace(), name="janus-rtp-pace")

    async def _pace(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            self.tick(loop.time())
            due += PACKET_SECONDS
            delay = due - loop.time()
            if delay < -0.2:  # the loop stalled: resume the clock instead of bursting
                due = loop.time()
                delay = 0.0
            await asyncio.sleep(max(0.0, delay))

    def tick(self, now: float) -> None:
        """One packet time: play the mix to the lanes and send one packet of bot audio."""
        played, item = self.jitter.pop()
        if played:
            if item is None:
                samples, at = self._silence, self._last_at + PACKET_SECONDS
            else:
                samples, at = self.codec.decode(item.payload), item.at
            self._last_at = at
            # The upsampler hands out each frame's audio frame_delay frames late: label it
            # with the arrival time of the audio it holds.
            self._times.append(at)
            heard_at = self._times[-1 - self.upsample.frame_delay]
            frame = MixedFrame(self.upsample.frame(samples), self.clock.speakers_at(heard_at))
            for lane in list(self.lanes):
                if lane.closed:
                    self.lanes.discard(lane)
                else:
                    lane.feed(frame)
            if self.cut is not None and self.speaker_lanes:  # only where someone hears it
                for cut in self.cut.push(samples, at):
                    self._to_speaker_lanes(
                        cut.participant_id, cut.samples, cut.at, self.codec.rate, cut.attribution
                    )
        out = self.outbound.take()
        packet = self.sender.packet(self._silence if out is None else out, voice=out is not None)
        if self.bot is not None and self.remote is not None:
            self.bot.sendto(packet, self.remote)

    def end_lanes(self) -> None:
        """The call ended: every lane's audio ends."""
        for lane in list(self.lanes):
            lane.end()
        self.lanes.clear()
        for speakers in list(self.speaker_lanes):
            speakers.end()
        self.speaker_lanes.clear()

    async def aclose(self) -> None:
        """Stop pacing and close the sockets. Idempotent.

        Cancellation: safe.
        """
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self.end_lanes()
        if self.bot is not None:
            self.bot.close()
        self.bot = None
