"""``FakeTwilioCall``: a phone call placed the way Twilio Media Streams places it, for tests.

::

    async with PhoneServer(channel) as server, FakeTwilioCall(server.url) as call:
        await call.send_audio(recording, 16_000)      # 20 ms µ-law frames, as Twilio sends
        await call.press("1")                         # a ``dtmf`` message
        await call.wait_for(lambda: call.marks_returned)
        await call.hang_up()                          # ``stop``, then the socket closes

It sends ``connected`` and ``start`` (call and stream SIDs, custom parameters, the media
format), caller audio as base64 µ-law ``media`` messages of 20 ms with Twilio's sequence
numbers, chunks and timestamps, keys as ``dtmf``, and ``stop``. It checks every message the
server sends (``media``, ``mark``, ``clear`` for this stream; anything else is recorded in
:attr:`invalid`), plays the agent's audio and returns marks as Twilio does: once the audio
before them has played (at once by default; with ``hold_playback`` only when
:meth:`play_out` is called), and at once, unplayed, for every mark pending when ``clear``
arrives (whose audio is dropped).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import itertools
import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from voice_hitl.voice._audio import resample_pcm16
from voice_hitl.voice._provider_events import PCM16
from voice_hitl.voice._transport import check_pcm16

from ._mulaw import SILENCE_BYTE, mulaw_to_pcm16, pcm16_to_mulaw
from ._protocol import FRAME_SAMPLES, PHONE_RATE

__all__ = ["FakeTwilioCall"]


class FakeTwilioCall:
    """One fake Twilio call on a Media Streams websocket (see the module docstring).

    Args:
        url: The server's ``ws://`` URL.
        caller: The ``caller`` custom parameter (``None``: not sent).
        custom_parameters: Further ``<Parameter>`` values.
        hold_playback: Play the agent's audio only when :meth:`play_out` is called.
    """

    def __init__(
        self,
        url: str,
        *,
        caller: str | None = "+15550100",
        custom_parameters: Mapping[str, str] | None = None,
        hold_playback: bool = False,
    ) -> None:
        self.url = url
        self.call_sid = f"CA{secrets.token_hex(16)}"
        self.stream_sid = f"MZ{secrets.token_hex(16)}"
        self.account_sid = f"AC{secrets.token_hex(16)}"
        self.custom_parameters = dict(custom_parameters or {})
        if caller is not None:
            self.custom_parameters.setdefault("caller", caller)
        self.hold_playback = hold_playback
        self.received: list[dict[str, Any]] = []
        """Every message the server sent, parsed."""
        self.invalid: list[str] = []
        """What was wrong with messages the server sent (empty when all were valid)."""
        self.heard = bytearray()
        """The agent's µ-law audio that has played to the caller."""
        self.cleared_samples = 0
        """Agent audio dropped unplayed by ``clear``."""
        self.clears = 0
        self.marks_returned: list[tuple[str, bool]] = []
        """Marks sent back, in order: (name, played); played is False for a cleared one."""
        self.media_times: list[float] = []
        """``time.perf_counter()`` at which each agent ``media`` message arrived."""
        self.close_code: int | None = None
        self.close_reason = ""
        self.closed = asyncio.Event()
        """Set when the socket has closed (by either side)."""
        self._queued: list[bytes | str] = []  # unplayed audio (bytes) and marks (names)
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._sequence = itertools.count(1)
        self._chunk = itertools.count(1)
        self._sent_samples = 0
        self._pending_sends: set[asyncio.Task[None]] = set()  # marks on their way back
        self._sent = bytearray()  # the caller's µ-law, as sent

    # -- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> FakeTwilioCall:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Open the socket and send ``connected`` and ``start``.

        Cancellation: safe; a half-open socket is closed.
        """
        self._ws = await connect(self.url, compression=None)
        self._reader = asyncio.create_task(self._read(), name=f"fake-twilio-{self.call_sid}")
        await self.send_json({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        await self.send_json(
            {
                "event": "start",
                "sequenceNumber": str(next(self._sequence)),
                "start": {
                    "accountSid": self.account_sid,
                    "streamSid": self.stream_sid,
                    "callSid": self.call_sid,
                    "tracks": ["inbound"],
                    "mediaFormat": {
                        "encoding": "audio/x-mulaw",
                        "sampleRate": PHONE_RATE,
                        "channels": 1,
                    },
                    "customParameters": self.custom_parameters,
                },
                "streamSid": self.stream_sid,
            }
        )

    async def aclose(self) -> None:
        """Close the socket (without ``stop``, if not sent) and stop reading; idempotent.

        Cancellation: don't cancel; the reader may stay running.
        """
        if self._pending_sends:
            await asyncio.gather(*self._pending_sends, return_exceptions=True)
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()
        reader, self._reader = self._reader, None
        if reader is not None:
            await asyncio.gather(reader, return_exceptions=True)
            reader.cancel()

    # -- what the caller does ------------------------------------------------------------------

    async def send_json(self, message: Mapping[str, Any]) -> None:
        """Send one raw message (for malformed-input tests too).

        Raises:
            RuntimeError: Not connected.

        Cancellation: safe; the message is sent whole or not at all.
        """
        if self._ws is None:
            raise RuntimeError("the fake call is not connected")
        await self._ws.send(json.dumps(message))

    async def send_audio(self, audio: PCM16, sample_rate: int, *, speed: float = 0.0) -> None:
        """Speak: ``audio`` goes out as 20 ms µ-law ``media`` messages (the last one padded
        with silence). ``speed`` 1.0 paces them in real time, 0 sends them as fast as the
        socket takes them.

        Cancellation: safe; the frames already sent stay sent.
        """
        audio = resample_pcm16(check_pcm16(audio), sample_rate, PHONE_RATE)
        data = pcm16_to_mulaw(audio)
        if len(data) % FRAME_SAMPLES:
            data += bytes([SILENCE_BYTE]) * (FRAME_SAMPLES - len(data) % FRAME_SAMPLES)
        for start in range(0, len(data), FRAME_SAMPLES):
            await self.send_frame(data[start : start + FRAME_SAMPLES])
            await asyncio.sleep(0.02 / speed if speed > 0 else 0)

    async def send_silence(self, seconds: float, *, speed: float = 0.0) -> None:
        """Say nothing for ``seconds`` (µ-law silence frames).

        Cancellation: safe.
        """
        samples = round(seconds * PHONE_RATE)
        await self.send_audio(np.zeros(samples, dtype=np.int16), PHONE_RATE, speed=speed)

    async def send_frame(self, mulaw: bytes) -> None:
        """Send one ``media`` message carrying ``mulaw`` (Twilio's fields included).

        Cancellation: safe.
        """
        timestamp = self._sent_samples * 1000 // PHONE_RATE
        self._sent_samples += len(mulaw)
        self._sent += mulaw
        await self.send_json(
            {
                "event": "media",
                "sequenceNumber": str(next(self._sequence)),
                "media": {
                    "track": "inbound",
                    "chunk": str(next(self._chunk)),
                    "timestamp": str(timestamp),
                    "payload": base64.b64encode(mulaw).decode("ascii"),
                },
                "streamSid": self.stream_sid,
            }
        )

    async def press(self, keys: str) -> None:
        """Press keys: one ``dtmf`` message each.

        Cancellation: safe.
        """
        for key in keys:
            await self.send_json(
                {
                    "event": "dtmf",
                    "streamSid": self.stream_sid,
                    "sequenceNumber": str(next(self._sequence)),
                    "dtmf": {"track": "inbound_track", "digit": key},
                }
            )

    async def hang_up(self) -> None:
        """Hang up as Twilio reports it: ``stop``, then the socket closes.

        Cancellation: don't cancel; the socket may stay open.
        """
        if self._pending_sends:  # marks played back go first, as they would on the wire
            await asyncio.gather(*self._pending_sends, return_exceptions=True)
        with contextlib.suppress(ConnectionClosed):
            await self.send_json(
                {
                    "event": "stop",
                    "sequenceNumber": str(next(self._sequence)),
                    "streamSid": self.stream_sid,
                    "stop": {"accountSid": self.account_sid, "callSid": self.call_sid},
                }
            )
        await self.aclose()

    def play_out(self) -> None:
        """Play the agent audio held so far and return its marks (with ``hold_playback``)."""
        queued, self._queued = self._queued, []
        for item in queued:
            if isinstance(item, bytes):
                self.heard += item
            else:
                self._return_mark(item, played=True)
        self._changed.set()

    # -- what the caller hears ---------------------------------------------------------------

    @property
    def heard_audio(self) -> PCM16:
        """The agent audio played so far, as PCM16 at 8 kHz."""
        return mulaw_to_pcm16(bytes(self.heard))

    @property
    def sent_audio(self) -> PCM16:
        """What the caller has said so far (decoded, 8 kHz)."""
        return mulaw_to_pcm16(bytes(self._sent))

    @property
    def sent_seconds(self) -> float:
        """Seconds of caller audio sent: the call's clock."""
        return self._sent_samples / PHONE_RATE

    @property
    def queued_samples(self) -> int:
        """Agent audio received but not played yet."""
        return sum(len(item) for item in self._queued if isinstance(item, bytes))

    async def wait_for(self, condition: Callable[[], object]) -> None:
        """Wait until ``condition()`` is true, checked after each message the server sends.

        Raises:
            ConnectionError: The socket closed first.

        Cancellation: safe.
        """
        while not condition():
            if self.closed.is_set():
                raise ConnectionError(
                    f"the server closed the call ({self.close_code}: {self.close_reason!r}) "
                    "before the condition held"
                )
            self._changed.clear()
            await self._changed.wait()

    async def _read(self) -> None:
        ws = self._ws
        assert ws is not None
        try:
            async for raw in ws:
                self._take(raw)
                self._changed.set()
        except ConnectionClosed:
            pass
        finally:
            self.close_code = ws.close_code
            self.close_reason = ws.close_reason or ""
            self.closed.set()
            self._changed.set()

    def _take(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            self.invalid.append("a binary frame (Media Streams messages are text)")
            return
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            self.invalid.append(f"not JSON: {raw[:60]!r}")
            return
        self.received.append(message)
        problem = _check_outbound(message, self.stream_sid)
        if problem:
            self.invalid.append(problem)
            return
        event = message["event"]
        if event == "media":
            self.media_times.append(time.perf_counter())
            data = base64.b64decode(message["media"]["payload"])
            if self.hold_playback:
                self._queued.append(data)
            else:
                self.heard += data
        elif event == "mark":
            name = message["mark"]["name"]
            if self.hold_playback and self._queued:
                self._queued.append(name)
            else:
                self._return_mark(name, played=True)
        elif event == "clear":
            self.clears += 1
            queued, self._queued = self._queued, []
            for item in queued:
                if isinstance(item, bytes):
                    self.cleared_samples += len(item)
                else:
                    self._return_mark(item, played=False)

    def _return_mark(self, name: str, *, played: bool) -> None:
        self.marks_returned.append((name, played))
        ws = self._ws
        if ws is None:
            return
        message = {
            "event": "mark",
            "sequenceNumber": str(next(self._sequence)),
            "streamSid": self.stream_sid,
            "mark": {"name": name},
        }
        task = asyncio.get_running_loop().create_task(_send_quietly(ws, json.dumps(message)))
        self._pending_sends.add(task)
        task.add_done_callback(self._pending_sends.discard)


async def _send_quietly(ws: ClientConnection, text: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await ws.send(text)


def _check_outbound(message: object, stream_sid: str) -> str:
    """What is wrong with a message the server sent ("" when it is a valid one)."""
    if not isinstance(message, dict):
        return f"not an object: {message!r:.60}"
    event = message.get("event")
    allowed = {"media": {"event", "streamSid", "media"}, "mark": {"event", "streamSid", "mark"}}
    allowed["clear"] = {"event", "streamSid"}
    if event not in allowed:
        return f"unknown event {event!r}"
    if message.get("streamSid") != stream_sid:
        return f"{event!r} for stream {message.get('streamSid')!r}, expected {stream_sid!r}"
    extra = set(message) - allowed[event]
    if extra:
        return f"{event!r} with unexpected fields {sorted(extra)}"
    if event == "media":
        media = message.get("media")
        if not isinstance(media, dict) or set(media) != {"payload"}:
            return f"'media' must carry exactly {{'payload'}}, got {media!r:.60}"
        try:
            data = base64.b64decode(media["payload"], validate=True)
        except (binascii.Error, ValueError, TypeError):
            return "'media' payload is not base64"
        if not data:
            return "'media' payload is empty"
    if event == "mark":
        mark = message.get("mark")
        if not isinstance(mark, dict) or not isinstance(mark.get("name"), str) or not mark["name"]:
            return f"'mark' must carry a non-empty name, got {mark!r:.60}"
    return ""
