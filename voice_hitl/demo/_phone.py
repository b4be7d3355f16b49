"""``voice-hitl demo --phone``: the offline demo call, placed through Twilio Media Streams.

The recorded caller dials in as a :class:`FakeTwilioCall` on loopback: their turns go out as
8 kHz µ-law frames, are decoded and resampled by the :class:`PhoneServer`, and heard by the
local recogniser; the agent's voice comes back as µ-law frames with marks. So the whole phone
path (codec, resampling, marks, keypad route, hang-up) runs end to end, offline.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from providers.twilio._protocol import PHONE_RATE
from providers.twilio._server import PhoneServer
from providers.twilio._transport import TwilioTransport
from providers.twilio.testing import FakeTwilioCall
from voice_hitl import (
    HumanInputHandler,
    HumanInputToolHandler,
    RealtimeVoiceChannel,
    VoiceKit,
    VoiceResponder,
    VoiceSession,
)
from voice_hitl.demo._demo import (
    JOURNAL_FILE,
    PHONE_CALL,
    DemoResult,
    _open_journal,
    _provider,
    load_turns,
)
from voice_hitl.demo._demo_agent import TransferAgent
from voice_hitl.demo._timeline import Timeline
from voice_hitl.human._standard_tools import ASK_USER_QUESTION, CONFIRM_ACTION
from voice_hitl.voice._audio import write_wav_pcm16
from voice_hitl.voice._caller_transport import CallerTurn
from voice_hitl.voice._provider import AudioFormat
from voice_hitl.voice._provider_events import ProviderEvent, TranscriptionEvent

__all__ = ["run_phone_demo"]

TRAILING_SILENCE = 0.9
"""Seconds of quiet the caller leaves after each turn (so the end of speech is heard)."""
CHANNEL_RATE = 16_000
"""The session's rate: the local recogniser's."""


async def run_phone_demo(
    *,
    speed: float = 0.0,
    out_dir: Path | None = None,
    turns: Sequence[CallerTurn] | None = None,
    timeout: float = 60.0,
    printing: bool = True,
    recognizer: str = "whisper",
) -> DemoResult:
    """Run the demo call over a loopback Media Stream and return what happened.

    Args:
        speed: The caller's pace (0: as fast as the socket takes the frames).
        out_dir: Where to write ``caller.wav``, ``agent.wav`` (8 kHz, as on the phone),
            ``transcript.json`` and the journal (None: nowhere).
        turns: What the caller says (the recorded default if None), at 16 kHz.
        timeout: The human-input handler's timeout, in seconds.
        printing: Print the live timeline.
        recognizer: The local recogniser (see ``voice-hitl demo --recognizer``).

    Cancellation: safe; the call is hung up and its requests settled.
    """
    started = time.perf_counter()
    if turns is None:
        turns = await asyncio.to_thread(load_turns, PHONE_CALL)
    kit = VoiceKit()
    handler = HumanInputHandler()
    journal = None if out_dir is None else await asyncio.to_thread(_open_journal, out_dir)
    if journal is not None:
        journal.attach(handler)
    agent = TransferAgent()
    channel = RealtimeVoiceChannel(
        "phone",
        provider=await _provider(recognizer),
        transport=TwilioTransport(),
        human_input_handler=HumanInputToolHandler(
            {"AskUserQuestion", "ConfirmAction"},
            timeout=timeout,
            handler=handler,
            tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION],
        ),
        reasoning_backend=agent,
    )
    channel.input_format = channel.output_format = AudioFormat(CHANNEL_RATE)
    kit.register_channel(channel)
    responder = VoiceResponder(kit, reprompts=2)
    responder.serve(channel)
    sessions: asyncio.Queue[VoiceSession] = asyncio.Queue()
    server = PhoneServer(channel, on_call=sessions.put_nowait)
    call: FakeTwilioCall | None = None
    timeline = Timeline(
        kit,
        call_clock=lambda: 0.0 if call is None else call.sent_seconds,
        out=sys.stdout if printing else None,
    )
    try:
        await server.start()
        call = FakeTwilioCall(server.url, caller="+15550100")
        bound = 30.0 + (len(turns) + 1) * timeout
        async with asyncio.timeout(bound):
            await _place_call(call, sessions, turns, timeline, speed, server)
    finally:
        if call is not None:
            await call.aclose()
        await server.aclose()
        await responder.aclose()
        await kit.aclose()
        if journal is not None:
            await asyncio.to_thread(journal.close)
    assert call is not None
    result = DemoResult(
        agent.transfers,
        timeline.tool_results,
        timeline.to_json(),
        timeline.answer_latencies,
        time.perf_counter() - started,
        call.sent_seconds,
    )
    if out_dir is not None:
        result.files = [str(p) for p in await _write(out_dir, call, result)]
    return result


async def _place_call(
    call: FakeTwilioCall,
    sessions: asyncio.Queue[VoiceSession],
    turns: Sequence[CallerTurn],
    timeline: Timeline,
    speed: float,
    server: PhoneServer,
) -> None:
    """Dial in, speak each turn once the agent has finished its turn and its voice has played
    out on the line, hang up at the end."""
    agent_turns = 0
    changed = asyncio.Event()
    heard_before = 0  # agent audio heard when the caller last stopped speaking

    async def let_agent_finish() -> None:
        """Keep the line open (silence, at the caller's pace) while the agent's voice plays:
        a caller does not talk over the agent."""
        phone = server.calls.get(call.call_sid)
        if phone is not None:  # every sample the agent said has reached the caller
            await call.wait_for(lambda: len(call.heard) >= phone.stream.sent_samples)
        playing = (len(call.heard) - heard_before) / PHONE_RATE
        if playing > 0:
            await call.send_silence(playing, speed=speed)

    def observe(event: ProviderEvent) -> None:
        nonlocal agent_turns
        if isinstance(event, TranscriptionEvent) and event.role == "assistant" and event.final:
            agent_turns += 1
            changed.set()

    async def agent_finished(seen: int) -> None:
        while agent_turns <= seen:
            changed.clear()
            await changed.wait()

    await call.connect()
    session = await sessions.get()  # the server starts it once 'start' arrives
    session.add_listener(observe)
    session.add_listener(timeline.observe)
    timeline.add("call", f"started over Twilio Media Streams (µ-law 8 kHz, {call.call_sid})")
    seen = 0
    for turn in turns:
        if turn.after == "agent":
            await agent_finished(seen)
            await let_agent_finish()
        seen = agent_turns
        await call.send_audio(turn.audio, CHANNEL_RATE, speed=speed)
        await call.send_silence(TRAILING_SILENCE, speed=speed)
        heard_before = len(call.heard)
    await agent_finished(seen)
    await let_agent_finish()
    timeline.add("call", "caller hung up")
    await call.hang_up()
    await session.wait_closed()


async def _write(out_dir: Path, call: FakeTwilioCall, result: DemoResult) -> list[Path]:
    caller = call.sent_audio
    agent = call.heard_audio
    paths = [out_dir / "caller.wav", out_dir / "agent.wav", out_dir / "transcript.json"]

    def write() -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_wav_pcm16(paths[0], caller, PHONE_RATE)
        write_wav_pcm16(paths[1], agent if agent.size else np.zeros(0, np.int16), PHONE_RATE)
        paths[2].write_text(json.dumps(asdict(result), indent=2))

    await asyncio.to_thread(write)
    return [*paths, out_dir / JOURNAL_FILE]
