"""``voice-hitl demo --conference --janus``: the meeting demo in a real AudioBridge room.

A throwaway Janus starts on loopback; the bot creates a room and joins it as a plain-RTP
participant; Alice, Bob and Carol join as :class:`RtpParticipant` s in seats the bot reserved
and speak the recorded meeting at real time. The bot asks aloud (its voice goes into the room
as RTP), hears the room's mix with who spoke in it, and moves the money once Alice and Bob
have both approved. Needs ``janus`` (Debian) and the ``speech`` and ``janus`` extras.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from conference._channel import ConferenceChannel
from conference._config import ConferenceRealtimeConfig
from conference.janus._backend import JanusConferenceBackend
from conference.janus._participant import RtpParticipant
from conference.janus._server import start_local_janus
from providers.base import ProviderEvent, TranscriptionEvent
from voice_hitl import HumanInputHandler, HumanInputToolHandler, VoiceKit, VoiceResponder
from voice_hitl.demo._demo import (
    JOURNAL_FILE,
    MEETING,
    DemoResult,
    _open_journal,
    _provider,
    load_turns,
)
from voice_hitl.demo._demo_agent import ApprovalAgent
from voice_hitl.demo._timeline import Timeline
from voice_hitl.human._standard_tools import CONFIRM_ACTION
from voice_hitl.voice._caller_transport import CallerTurn

__all__ = ["run_janus_demo"]

RATE = 16_000
"""The bot's audio rate: the local recogniser's."""
ROOM = 1234
PEOPLE = (("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol"))
TRAILING_SILENCE = 0.9


async def run_janus_demo(
    *,
    out_dir: Path | None = None,
    turns: Sequence[CallerTurn] | None = None,
    timeout: float = 60.0,
    printing: bool = True,
    recognizer: str = "whisper",
) -> DemoResult:
    """Run the meeting demo in a Janus AudioBridge room and return what happened.

    Args:
        out_dir: Where to write ``transcript.json`` and the journal (None: nowhere).
        turns: What the people say (the recorded meeting if None), at 16 kHz.
        timeout: The human-input handler's timeout, in seconds.
        printing: Print the live timeline.
        recognizer: The local recogniser (see ``voice-hitl demo --recognizer``).

    Raises:
        FileNotFoundError: ``janus`` is not installed.

    Cancellation: safe; the room is destroyed, Janus stopped and the requests settled.
    """
    started = time.perf_counter()
    if turns is None:
        turns = await asyncio.to_thread(load_turns, MEETING)
    server = await asyncio.to_thread(start_local_janus)
    kit = VoiceKit()
    handler = HumanInputHandler()
    journal = None if out_dir is None else await asyncio.to_thread(_open_journal, out_dir)
    if journal is not None:
        journal.attach(handler)
    agent = ApprovalAgent(approvers=("Alice", "Bob"))
    responder = VoiceResponder(kit, reprompts=2)
    backend = JanusConferenceBackend(
        server.url, ROOM, secret=server.room_secret, seats=len(PEOPLE), sample_rate=RATE
    )
    people: dict[str, RtpParticipant] = {}
    speaking: list[str] = []
    timeline = Timeline(
        kit,
        call_clock=lambda: time.perf_counter() - started,
        out=sys.stdout if printing else None,
        speaker=lambda: speaking[-1] if speaking else None,
    )
    spoken = 0.0
    try:
        await backend.start()
        for key, name in PEOPLE:
            people[key] = await RtpParticipant(
                server.url, ROOM, name, backend.reserve_seat(name)
            ).join()
        meeting = ConferenceChannel(
            "meeting",
            backend=backend,
            realtime=ConferenceRealtimeConfig(
                await _provider(recognizer),
                human_input_handler=HumanInputToolHandler(
                    {"ConfirmAction"},
                    timeout=timeout,
                    handler=handler,
                    tool_definitions=[CONFIRM_ACTION],
                ),
                reasoning_backend=agent,
                sample_rate=RATE,
            ),
        )
        kit.register_channel(meeting)
        responder.serve(meeting)
        meeting.add_provider_listener(timeline.observe)
        await meeting.plug_realtime()
        timeline.add(
            "meeting", f"started in Janus AudioBridge room {ROOM} with Alice, Bob and Carol"
        )
        try:
            bound = 30.0 + (len(turns) + 1) * (timeout + 20.0)
            async with asyncio.timeout(bound):
                spoken = await _speak(meeting, people, turns, speaking)
            timeline.add("meeting", "everyone hung up")
        finally:
            await meeting.close()
    finally:
        for person in people.values():
            await person.leave()
        await backend.aclose()
        await responder.aclose()
        await kit.aclose()
        if journal is not None:
            await asyncio.to_thread(journal.close)
        await asyncio.to_thread(server.close)
    result = DemoResult(
        agent.transfers,
        timeline.tool_results,
        timeline.to_json(),
        timeline.answer_latencies,
        time.perf_counter() - started,
        spoken,
    )
    if out_dir is not None:
        transcript = out_dir / "transcript.json"
        await asyncio.to_thread(transcript.write_text, json.dumps(asdict(result), indent=2))
        result.files = [str(transcript), str(out_dir / JOURNAL_FILE)]
    return result


async def _speak(
    meeting: ConferenceChannel,
    people: dict[str, RtpParticipant],
    turns: Sequence[CallerTurn],
    speaking: list[str],
) -> float:
    """Each turn once its cue came (the bot finished its turn, or the last turn was heard);
    then wait for the bot's last turn. Returns the seconds of speech sent."""
    counts = {"bot": 0, "heard": 0}
    changed = asyncio.Event()

    def observe(event: ProviderEvent) -> None:
        if isinstance(event, TranscriptionEvent) and event.final:
            counts["bot" if event.role == "assistant" else "heard"] += 1
            changed.set()

    async def until(which: str, above: int) -> None:
        while counts[which] <= above:
            changed.clear()
            await changed.wait()

    remove = meeting.add_provider_listener(observe)
    seconds = 0.0
    seen = dict(counts)
    try:
        for turn in turns:
            if turn.after == "agent":
                await until("bot", seen["bot"])  # the bot finished its turn
            elif turn.after == "heard":
                await until("heard", seen["heard"])  # the last turn was heard
            seen = dict(counts)
            who = people[turn.speaker or "alice"]
            speaking.append(who.display_name)
            await who.say(turn.audio, RATE)
            seconds += len(turn.audio) / RATE + TRAILING_SILENCE
            await asyncio.sleep(TRAILING_SILENCE)  # the quiet after a turn, in the room
        await until("bot", seen["bot"])  # the bot's answer to the last turn
    finally:
        remove()
    return seconds
