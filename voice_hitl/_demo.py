"""``voice-hitl demo``: an offline end-to-end call on the embedded default.

A recorded caller asks to move money; the agent (a reasoning backend) calls
``AskUserQuestion`` and ``ConfirmAction`` through the human-input tools; a
:class:`VoiceResponder` asks aloud with a local synthesiser; the caller's recorded answers are
recognised and understood; the tools resume; the call ends. Needs the ``speech`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._caller_transport import ScriptedCallerTransport
from ._demo_agent import ASK_USER_QUESTION, CONFIRM_ACTION, TransferAgent
from ._human_input_tools import HumanInputToolHandler
from ._kit import VoiceKit
from ._responder import VoiceResponder
from ._timeline import Timeline
from ._voice_channel import RealtimeVoiceChannel

__all__ = ["DEMO_CALLER", "DemoResult", "add_demo_command", "run_demo"]

FIXTURES = Path(__file__).resolve().parent.parent / "audio_fixtures" / "demo"
DEMO_CALLER = ("01_opening.wav", "02_amount.wav", "03_confirm.wav")


@dataclass
class DemoResult:
    """What a demo call produced."""

    transfers: list[float]
    timeline: list[dict[str, Any]]
    tool_results: list[dict[str, Any]]
    answer_latencies: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0
    call_seconds: float = 0.0
    files: list[str] = field(default_factory=list)


async def run_demo(
    *,
    speed: float = 1.0,
    out_dir: Path | None = None,
    caller: tuple[str, ...] = DEMO_CALLER,
    fixtures: Path = FIXTURES,
    timeout: float = 60.0,
    printing: bool = True,
) -> DemoResult:
    """Run the demo call and return what happened.

    Cancellation: safe; the call is ended and its requests settled.
    """
    from providers.local import LocalCascadeProvider

    started = time.perf_counter()
    transport = await ScriptedCallerTransport.from_wav_files(
        [fixtures / name for name in caller], speed=speed
    )
    kit = VoiceKit()
    human = HumanInputToolHandler(
        {"AskUserQuestion", "ConfirmAction"},
        timeout=timeout,
        tool_definitions=[ASK_USER_QUESTION, CONFIRM_ACTION],
    )
    agent = TransferAgent()
    voice = RealtimeVoiceChannel(
        "phone",
        provider=LocalCascadeProvider(),
        transport=transport,
        human_input_handler=human,
        reasoning_backend=agent,
        instructions="You move money between the caller's accounts, only with their yes.",
    )
    voice.input_format = voice.output_format = _format(transport.sample_rate)
    kit.register_channel(voice)
    responder = VoiceResponder(kit, reprompts=2)
    responder.serve(voice)
    timeline = Timeline(
        kit,
        call_clock=lambda: transport.clock / transport.sample_rate,
        out=None if not printing else __import__("sys").stdout,
    )
    tool_results: list[dict[str, Any]] = []
    try:
        session = await voice.start_session("demo-room", participant_id="caller")
        session.add_listener(transport.observe)
        session.add_listener(timeline.observe)
        timeline.add("call", "started (offline: local recogniser and synthesiser)")
        await transport.finished.wait()
        timeline.add("call", "caller hung up")
        await voice.end_session(session)
        tool_results = [{"tool": r.outcome, "text": r.text} for r in _results(voice, agent)]
    finally:
        await responder.aclose()
        await kit.aclose()
    result = DemoResult(
        agent.transfers,
        timeline.to_json(),
        tool_results,
        timeline.answer_latencies,
        time.perf_counter() - started,
        transport.clock / transport.sample_rate,
    )
    if out_dir is not None:
        files = await transport.write_recordings(out_dir)
        transcript = out_dir / "transcript.json"
        payload = json.dumps(_asdict(result), indent=2)
        await asyncio.to_thread(transcript.write_text, payload)
        result.files = [str(p) for p in [*files, transcript]]
    return result


def _format(rate: int) -> Any:
    from ._provider import AudioFormat

    return AudioFormat(rate)


def _results(voice: RealtimeVoiceChannel, agent: TransferAgent) -> list[Any]:
    del voice
    return []


def _asdict(result: DemoResult) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(result)


def _run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    result = asyncio.run(run_demo(speed=args.speed, out_dir=out))
    print()
    print(f"moved: {result.transfers or 'nothing'}")
    if result.answer_latencies:
        worst = max(result.answer_latencies) * 1000
        print(f"answer -> tool result (after end of speech): worst {worst:.0f} ms")
    print(f"call {result.call_seconds:.1f}s, wall {result.wall_seconds:.1f}s")
    print("wrote: " + ", ".join(result.files))
    return 0 if result.transfers else 1


def add_demo_command(subparsers: Any) -> None:
    """Register ``voice-hitl demo``."""
    parser = subparsers.add_parser(
        "demo", help="run an offline end-to-end call (needs the 'speech' extra)"
    )
    parser.add_argument(
        "--speed", type=float, default=1.0, help="caller pace: 1 real time, 0 as fast as possible"
    )
    parser.add_argument("--out", default="demo-output", help="folder for audio and transcript")
    parser.set_defaults(handler=_run)
