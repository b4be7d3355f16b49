"""Rooms for the per-speaker contract suite: the same people on either backend.

``room(kind, ...)`` yields a :class:`Room`: a conference channel with per-speaker hearing
(``ToneWords`` by default) plugged into the in-memory backend (``"memory"``, driven frame by
frame) or a real Janus AudioBridge (``"janus"``, people speaking plain RTP at real time), and
:meth:`Room.play` has people speak, each from an offset on one shared timeline.

Everyone has a seat (their own stream) unless named in ``unseated=``: then they are heard only
in the mix (in memory: ``join(seated=False)``, talking reported from their level; on Janus: a
plain-RTP participant joining the room itself, or with ``webrtc=`` a browser:
``webrtc_rig.WebRtcParticipant``). Those also named in ``no_levels=`` report no levels (in
memory: ``levels=False``; on Janus: no audio-level extension in the join).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import numpy as np
import pytest
from conference_rig import KEY, ToneWords, conference_tools
from webrtc_rig import WebRtcParticipant

from conference import (
    ConferenceChannel,
    ConferenceEvent,
    ConferenceRealtimeConfig,
    InMemoryConferenceBackend,
    PerSpeakerHearing,
)
from conference.janus import JanusConferenceBackend, LocalJanus, RtpParticipant
from providers.mock import MockRealtimeProvider
from voice_hitl import Heard, VoiceKit
from voice_hitl.speech.asr import Recognizer

RATE = 16_000
ROOM = 4848


@pytest.fixture
def server(request: pytest.FixtureRequest, backend: str) -> LocalJanus | None:
    """The Janus of a ``backend="janus"`` case (``janus_rig``'s), None for ``memory``; a test
    module using it imports ``janus`` from janus_rig too."""
    if backend != "janus":
        return None
    janus_server: LocalJanus = request.getfixturevalue("janus")
    return janus_server


PEOPLE = ("Alice", "Bob", "Carol")


@dataclass
class Room:
    conf: ConferenceChannel
    ids: dict[str, str]
    play_timelines: Callable[[dict[str, np.ndarray]], asyncio.Future[None] | object]
    heard: asyncio.Queue[Heard] = field(default_factory=asyncio.Queue)
    provider: MockRealtimeProvider | None = None
    kit: VoiceKit | None = None

    def pid(self, name: str) -> str:
        return self.ids[name]

    async def play(self, parts: Sequence[tuple[str, float, np.ndarray]]) -> None:
        """Each (name, offset seconds, 16 kHz audio) spoken from its offset on one timeline;
        returns once all of it (and a second of quiet after) has been sent."""
        timelines: dict[str, list[np.ndarray]] = {}
        ends: dict[str, int] = {}
        for name, offset, audio in sorted(parts, key=lambda p: p[1]):
            start = round(offset * RATE)
            gap = start - ends.get(name, 0)
            if gap < 0:
                raise ValueError(f"{name}'s parts overlap")
            timelines.setdefault(name, []).extend([np.zeros(gap, np.int16), audio])
            ends[name] = start + len(audio)
        total = max(ends.values()) + RATE
        padded = {
            name: np.concatenate([*chunks, np.zeros(total - ends[name], np.int16)])
            for name, chunks in timelines.items()
        }
        done = self.play_timelines(padded)
        if asyncio.isfuture(done) or asyncio.iscoroutine(done):
            await done  # type: ignore[misc]

    async def speech(self, count: int, timeout: float = 30.0) -> list[Heard]:
        """The next ``count`` utterances heard (in the order reported)."""
        return [await asyncio.wait_for(self.heard.get(), timeout) for _ in range(count)]


def channel(
    backend: object, recognizer: Recognizer | None = None
) -> tuple[VoiceKit, ConferenceChannel, MockRealtimeProvider]:
    kit = VoiceKit()
    provider = MockRealtimeProvider()
    config = ConferenceRealtimeConfig(
        provider, human_input_handler=conference_tools(), sample_rate=RATE
    )
    conf = ConferenceChannel(
        "room",
        backend=backend,  # type: ignore[arg-type]
        realtime=config,
        hearing=PerSpeakerHearing(recognizer or ToneWords()),
    )
    kit.register_channel(conf)
    conf.receipt_key = KEY
    return kit, conf, provider


@asynccontextmanager
async def memory_room(
    names: Sequence[str] = PEOPLE,
    recognizer: Recognizer | None = None,
    keypad: bool = False,
    unseated: Sequence[str] = (),
    no_levels: Sequence[str] = (),
) -> AsyncIterator[Room]:
    backend = InMemoryConferenceBackend(frame_samples=320, sample_rate=RATE)
    for name in names:
        seated = name not in unseated
        backend.join(
            name.lower(),
            name,
            keypad=keypad and seated,
            seated=seated,
            levels=name not in no_levels,
        )
    kit, conf, provider = channel(backend, recognizer)
    await conf.plug_realtime()

    def play(timelines: dict[str, np.ndarray]) -> None:
        length = max(len(t) for t in timelines.values())
        for name, audio in timelines.items():
            backend.push_audio(name.lower(), audio)
        # The mix cut decides a frame ``hold`` seconds after it: tick that much more quiet.
        length += round(backend.mix_cut.hold * backend.sample_rate)
        for _ in range(-(-length // backend.frame_samples)):
            backend.tick()

    room = Room(conf, {n: n.lower() for n in names}, play, provider=provider, kit=kit)
    conf.add_speech_listener(
        lambda h: room.heard.put_nowait(h) if h.kind != "speech_started" else None
    )
    try:
        yield room
    finally:
        await conf.close()
        await kit.aclose()


@asynccontextmanager
async def janus_room(
    server: LocalJanus,
    names: Sequence[str] = PEOPLE,
    recognizer: Recognizer | None = None,
    keypad: bool = False,
    unseated: Sequence[str] = (),
    no_levels: Sequence[str] = (),
    webrtc: Sequence[str] = (),
) -> AsyncIterator[Room]:
    """A Janus AudioBridge room; every person is a plain-RTP participant, seated (whose lines
    carry keypad tones whatever ``keypad`` says: G.711 does) unless ``unseated``, or a browser
    without a seat (``webrtc``)."""
    backend = JanusConferenceBackend(
        server.url, ROOM, secret=server.room_secret, seats=len(names), sample_rate=RATE
    )
    joined: asyncio.Queue[ConferenceEvent] = asyncio.Queue()
    backend.add_listener(joined.put_nowait)
    await backend.start()
    people: dict[str, RtpParticipant | WebRtcParticipant] = {}
    try:
        for name in names:
            person: RtpParticipant | WebRtcParticipant
            if name in webrtc:
                person = WebRtcParticipant(server, ROOM, name)
            else:
                seat = None if name in unseated else backend.reserve_seat(name)
                person = RtpParticipant(
                    server.url, ROOM, name, seat, audiolevel_ext=name not in no_levels
                )
            people[name] = person  # left in the finally below, joined or not
            await person.join()
        while len(backend.participants) < len(names):
            await asyncio.wait_for(joined.get(), 10)
        kit, conf, provider = channel(backend, recognizer)
        await conf.plug_realtime()

        async def play(timelines: dict[str, np.ndarray]) -> None:
            speaking = []
            for name, audio in timelines.items():  # browsers get their audio first
                person = people[name]
                if isinstance(person, WebRtcParticipant):
                    await person.prepare(audio, RATE)
                    speaking.append(person.play())
                else:
                    speaking.append(person.say(audio, RATE))
            await asyncio.gather(*speaking)

        ids = {n: p.participant_id or "" for n, p in people.items()}
        r = Room(conf, ids, play, provider=provider, kit=kit)
        conf.add_speech_listener(
            lambda h: r.heard.put_nowait(h) if h.kind != "speech_started" else None
        )
        try:
            yield r
        finally:
            await conf.close()
            await kit.aclose()
    finally:
        for person in people.values():
            await person.leave()
        await backend.aclose()


@asynccontextmanager
async def room(
    kind: str, names: Sequence[str] = PEOPLE, server: LocalJanus | None = None, **options: object
) -> AsyncIterator[Room]:
    """The room of ``kind`` ("memory" or "janus", which needs ``server``)."""
    if kind == "memory":
        async with memory_room(names, **options) as r:  # type: ignore[arg-type]
            yield r
    elif kind == "janus" and server is not None:
        async with janus_room(server, names, **options) as r:  # type: ignore[arg-type]
            yield r
    else:
        raise ValueError(f"no room of kind {kind!r} (janus needs server=)")
