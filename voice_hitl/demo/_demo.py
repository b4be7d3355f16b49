"""``voice-hitl demo``: an offline end-to-end call on the embedded default.

A recorded caller asks to move money; the agent (a reasoning backend) calls
``AskUserQuestion`` and ``ConfirmAction`` through the human-input tools; a
:class:`VoiceResponder` asks aloud with a local synthesiser; the caller's recorded answers are
recognised and understood; the tools resume; the call ends. ``--conference`` runs a meeting
instead: two participants must both approve, aloud. Needs the ``speech`` extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._checks import non_negative_seconds, positive_seconds
from ..human._human_input import HumanInputHandler
from ..human._human_input_tools import HumanInputToolHandler
from ..human._standard_tools import ASK_USER_QUESTION, CONFIRM_ACTION
from ..journal import Journal, SqliteJournalStore
from ..responder._responder import VoiceResponder
from ..tools._kit import VoiceKit
from ..voice._audio import read_wav_pcm16, resample_pcm16
from ..voice._caller_transport import CallerTurn, ScriptedCallerTransport
from ..voice._provider import AudioFormat, RealtimeProvider
from ..voice._provider_events import AudioOutEvent
from ..voice._voice_channel import RealtimeVoiceChannel
from ._call_time import CallClock, WorkGauge
from ._demo_agent import ApprovalAgent, TransferAgent
from ._timeline import Timeline

if TYPE_CHECKING:
    from conference import InMemoryConferenceBackend

__all__ = [
    "FIXTURES",
    "MEETING",
    "PHONE_CALL",
    "DemoResult",
    "clear_outputs",
    "load_turns",
    "run_demo",
]

After = Literal["agent", "heard", "now"]

FIXTURES = Path(__file__).resolve().parents[2] / "audio_fixtures" / "demo"
PHONE_CALL: tuple[tuple[str | None, str, After], ...] = (
    (None, "01_opening.wav", "now"),
    (None, "02_amount.wav", "agent"),
    (None, "03_confirm.wav", "agent"),
    # "yes, go ahead" is not enough for a high-risk ConfirmAction: the agent asks for the
    # challenge word, and the caller says it.
    (None, "say_confirm.wav", "agent"),
)
MEETING: tuple[tuple[str | None, str, After], ...] = (
    ("alice", "meeting_opening.wav", "now"),
    ("alice", "alice_approve.wav", "agent"),
    ("bob", "bob_approve.wav", "heard"),
)


@dataclass
class DemoResult:
    """What a demo call produced: what was moved, the timeline, the tool results the agent
    read (name, outcome, text), and timings."""

    transfers: list[float]
    tool_results: list[tuple[str, str, str]]
    timeline: list[dict[str, Any]]
    answer_latencies: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0
    call_seconds: float = 0.0
    files: list[str] = field(default_factory=list)


async def run_demo(
    *,
    speed: float = 1.0,
    out_dir: Path | None = None,
    conference: bool = False,
    turns: Sequence[CallerTurn] | None = None,
    transport: ScriptedCallerTransport | None = None,
    timeout: float = 60.0,
    printing: bool = True,
    kit: VoiceKit | None = None,
    recognizer: str = "whisper",
) -> DemoResult:
    """Run the demo call (or meeting) and return what happened.

    Args:
        speed: The caller's pace (0: as fast as possible).
        out_dir: Where to write the call's audio and ``transcript.json`` (None: nowhere).
        conference: A meeting where Alice and Bob must both approve, instead of a call.
        turns: What the caller (or the meeting's people) say; the recorded default if None.
        transport: A caller to use instead of ``turns`` (e.g. to hang up from outside).
        timeout: The human-input handler's timeout, in seconds.
        printing: Print the live timeline.
        kit: A kit to use (to add hooks); a new one by default. It is closed at the end.
        recognizer: ``"whisper"`` (the embedded default: Whisper tiny.en behind a speech
            gate), ``"pocketsphinx"`` (grammar-constrained) or ``"combined"`` (both).

    Cancellation: safe; the call is ended and its requests settled.
    """
    speed = non_negative_seconds("speed", speed)
    timeout = positive_seconds("timeout", timeout)
    started = time.perf_counter()
    kit = kit or VoiceKit()
    if transport is None:
        if turns is None:
            turns = await asyncio.to_thread(load_turns, MEETING if conference else PHONE_CALL)
        transport = ScriptedCallerTransport(turns, speed=speed)
    caller = transport
    timeline = Timeline(
        kit,
        call_clock=lambda: caller.clock / caller.sample_rate,
        out=sys.stdout if printing else None,
        speaker=lambda: caller.speaker,
    )
    responder = VoiceResponder(kit, reprompts=2)
    provider = await _provider(recognizer)
    # As fast as possible: deadlines count the call's time, so the machine's load cannot
    # change who answered in time.
    gauge = contextlib.ExitStack()
    clock = None
    if caller.speed == 0:
        clock = CallClock(caller, gauge.enter_context(WorkGauge.installed()))
    handler = HumanInputHandler(clock=clock)
    journal = None if out_dir is None else await asyncio.to_thread(_open_journal, out_dir)
    if journal is not None:
        journal.attach(handler)
    try:
        if conference:
            transfers = await _meeting(
                kit, responder, transport, timeline, timeout, provider, handler, out_dir
            )
        else:
            transfers = await _phone_call(
                kit, responder, transport, timeline, timeout, provider, handler, out_dir
            )
    finally:
        await responder.aclose()
        await kit.aclose()
        if clock is not None:
            clock.close()
        gauge.close()
        if journal is not None:
            await asyncio.to_thread(journal.close)
    result = DemoResult(
        transfers,
        timeline.tool_results,
        timeline.to_json(),
        timeline.answer_latencies,
        time.perf_counter() - started,
        transport.clock / transport.sample_rate,
    )
    if out_dir is not None:
        transcript = out_dir / "transcript.json"
        files = [*transcript_files(out_dir), transcript, out_dir / JOURNAL_FILE]
        result.files = [str(p) for p in files]
        await transport.write_recordings(out_dir)
        await asyncio.to_thread(transcript.write_text, json.dumps(asdict(result), indent=2))
        manifest = await asyncio.to_thread(
            _write_call_manifest, out_dir, transport, conference, recognizer, timeout
        )
        result.files.append(str(manifest))
    return result


def _write_call_manifest(
    out_dir: Path,
    transport: ScriptedCallerTransport,
    conference: bool,
    recognizer: str,
    timeout: float,
) -> Path:
    """Make the output folder a recording (``call.json``) that can be replayed as a test."""
    from ..recording._manifest import write_recording
    from ..recording._summary import summarise

    store = SqliteJournalStore(out_dir / JOURNAL_FILE)
    try:
        stories = summarise(store.read(), strict=True)
    finally:
        store.close()
    return write_recording(
        out_dir,
        kind="meeting" if conference else "phone",
        recognizer=recognizer,
        timeout=timeout,
        turns=transport.turns,
        requests=stories,
        sample_rate=transport.sample_rate,
    )


JOURNAL_FILE = "journal.sqlite3"
DEMO_JOURNAL_KEY = b"voice-hitl-demo"
"""The demo journal's chain key (an application keeps its own secret)."""


_JOURNAL_SIDECARS = ("-wal", "-shm", ".anchor", ".anchor.lock")
"""Files SQLite and the journal keep beside the journal file."""
OUTPUT_FILES = ("caller.wav", "agent.wav", "call.wav", "transcript.json", "call.json")
"""What a demo run may write to its output folder, besides the journal and ``turns/``."""


def clear_outputs(out_dir: Path) -> None:
    """Remove what an earlier demo run wrote to ``out_dir`` (the demo's own file names only),
    so the folder holds this run's files alone: a phone call writes no ``call.wav`` or
    ``call.json``, and a stale one would describe another call."""
    journal = (JOURNAL_FILE, *(f"{JOURNAL_FILE}{end}" for end in _JOURNAL_SIDECARS))
    for name in (*OUTPUT_FILES, *journal):
        (out_dir / name).unlink(missing_ok=True)
    turns = out_dir / "turns"
    if turns.is_dir():
        for old in turns.glob("[0-9][0-9]_*.wav"):
            old.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # left in place if it holds anything else
            turns.rmdir()


def _open_journal(out_dir: Path) -> Journal:
    """A fresh journal of the demo's requests in its output folder (which is cleared of an
    earlier run's files first, see :func:`clear_outputs`)."""
    clear_outputs(out_dir)
    return Journal.open(out_dir / JOURNAL_FILE, DEMO_JOURNAL_KEY)


def transcript_files(out_dir: Path) -> list[Path]:
    """The recordings :meth:`ScriptedCallerTransport.write_recordings` writes there."""
    return [out_dir / "caller.wav", out_dir / "agent.wav", out_dir / "call.wav"]


async def _phone_call(
    kit: VoiceKit,
    responder: VoiceResponder,
    transport: ScriptedCallerTransport,
    timeline: Timeline,
    timeout: float,
    provider: RealtimeProvider,
    handler: HumanInputHandler,
    out_dir: Path | None = None,
) -> list[float]:
    """The phone call; with ``out_dir``, recorded by a ``CallRecorder`` into ``out_dir/call``
    (as any user's call is: manifest, caller audio as FLAC, the requests' stories)."""
    from ..recording._recorder import CallRecorder

    agent = TransferAgent()
    voice = RealtimeVoiceChannel(
        "phone",
        provider=provider,
        transport=transport,
        human_input_handler=HumanInputToolHandler(
            {"AskUserQuestion", "ConfirmAction"},
            timeout=timeout,
            handler=handler,
            tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION],
        ),
        reasoning_backend=agent,
    )
    voice.input_format = voice.output_format = AudioFormat(transport.sample_rate)
    kit.register_channel(voice)
    responder.serve(voice)
    recorder = None if out_dir is None else CallRecorder(out_dir / "call")
    if recorder is not None:
        recorder.attach(voice)
    session = await voice.start_session("demo-room", participant_id="caller")
    session.add_listener(transport.observe)
    session.add_listener(timeline.observe)
    timeline.add("call", "started (offline: local recogniser and synthesiser)")
    async with asyncio.timeout(_call_bound(transport, timeout)):
        await transport.finished.wait()
    timeline.add("call", "caller hung up")
    await voice.end_session(session)
    if recorder is not None:
        await recorder.aclose()
    return agent.transfers


async def _provider(recognizer: str) -> RealtimeProvider:
    """The embedded default with the chosen recogniser (loaded off the event loop)."""
    from providers.local import LocalCascadeProvider

    from ..speech.asr import load_recognizer

    return LocalCascadeProvider(recognizer=await load_recognizer(recognizer))


def _call_bound(transport: ScriptedCallerTransport, timeout: float) -> float:
    """A generous bound on the whole call, so a broken script fails instead of hanging.

    Each turn may take a while on a loaded machine (recognition and synthesis share two cores
    with whatever else runs), so the bound allows 20 s a turn besides the handler's timeouts.
    """
    return 30.0 + (len(transport.turns) + 1) * (timeout + 20.0)


def load_turns(
    script: Sequence[tuple[str | None, str, After]], fixtures: Path = FIXTURES
) -> list[CallerTurn]:
    """Load recorded turns ``(speaker, file name, after)`` at 16 kHz (blocking: file I/O)."""
    turns = []
    for speaker, name, after in script:
        audio, rate = read_wav_pcm16(fixtures / name)
        label = Path(name).stem if speaker is None else f"{speaker}: {Path(name).stem}"
        turns.append(
            CallerTurn(
                resample_pcm16(audio, rate, 16_000),
                label,
                barge_in="barge_in" in name,
                after=after,
                speaker=speaker,
            )
        )
    return turns


async def _meeting(
    kit: VoiceKit,
    responder: VoiceResponder,
    transport: ScriptedCallerTransport,
    timeline: Timeline,
    timeout: float,
    provider: RealtimeProvider,
    handler: HumanInputHandler,
    out_dir: Path | None = None,
) -> list[float]:
    """The meeting; with ``out_dir``, recorded by a ``CallRecorder`` into ``out_dir/call``."""
    from conference import ConferenceChannel, ConferenceRealtimeConfig, InMemoryConferenceBackend

    from ..recording._recorder import CallRecorder

    backend = InMemoryConferenceBackend(frame_samples=transport.sample_rate // 50)
    backend.join("alice", "Alice")
    backend.join("bob", "Bob")
    backend.join("carol", "Carol")  # in the meeting, but not an approver
    agent = ApprovalAgent()
    human = HumanInputToolHandler(
        {"ConfirmAction"}, timeout=timeout, handler=handler, tool_definitions=[CONFIRM_ACTION]
    )
    meeting = ConferenceChannel(
        "meeting",
        backend=backend,
        realtime=ConferenceRealtimeConfig(
            provider,
            human_input_handler=human,
            reasoning_backend=agent,
            sample_rate=transport.sample_rate,
        ),
    )
    kit.register_channel(meeting)
    responder.serve(meeting)
    meeting.add_provider_listener(transport.observe)
    meeting.add_provider_listener(
        lambda event: (
            transport.hear_agent(event.frame) if isinstance(event, AudioOutEvent) else None
        )
    )
    meeting.add_provider_listener(timeline.observe)
    recorder = None if out_dir is None else CallRecorder(out_dir / "call")
    if recorder is not None:
        recorder.attach(meeting)
    await meeting.plug_realtime()
    timeline.add("meeting", "started with Alice, Bob and Carol (offline)")
    feeding = asyncio.create_task(_feed_meeting(transport, backend), name="meeting-audio")
    try:
        async with asyncio.timeout(_call_bound(transport, timeout)):
            await transport.finished.wait()
        timeline.add("meeting", "everyone hung up")
    finally:
        feeding.cancel()
        await asyncio.gather(feeding, return_exceptions=True)
        await meeting.close()
        if recorder is not None:
            await recorder.aclose()
    return agent.transfers


async def _feed_meeting(
    transport: ScriptedCallerTransport, backend: InMemoryConferenceBackend
) -> None:
    """Each participant's recorded turns go into the call; one mixed frame per frame."""
    async for frame in transport.caller_audio("meeting"):
        backend.push_audio(transport.speaker or "alice", frame)
        backend.tick()
