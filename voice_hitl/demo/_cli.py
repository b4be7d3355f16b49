"""``voice-hitl demo``: the command line of the demo (its calls load when one runs)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from .._usage import (
    HelpFormatter,
    UsageError,
    non_negative_float,
    require_packages,
    writable_folder,
)

__all__ = ["DEFAULT_OUT", "add_demo_command"]

DEFAULT_OUT = {False: "demo-output", True: "demo-output-conference"}
_EXTRAS = {
    "pocketsphinx": (("pocketsphinx", "speech"),),
    "whisper": (("faster_whisper", "speech"),),
    "combined": (("pocketsphinx", "speech"), ("faster_whisper", "speech")),
    "whisper+moonshine": (("faster_whisper", "speech"), ("moonshine_cpp", "moonshine")),
}


def _check(args: argparse.Namespace) -> Path:
    """Everything that can fail before the call starts: extras, fixtures, the output folder.

    Raises:
        UsageError: Naming what is wrong.
    """
    import importlib.util

    from ._demo import FIXTURES, MEETING, PHONE_CALL

    for module, extra in _EXTRAS[args.recognizer]:
        if importlib.util.find_spec(module) is None:
            raise UsageError(
                f"--recognizer {args.recognizer} needs the {extra!r} extra "
                f"(pip install 'voice-hitl[{extra}]')"
            )
    script = MEETING if args.conference else PHONE_CALL
    missing = [name for _, name, _ in script if not (FIXTURES / name).is_file()]
    if missing:
        raise UsageError(
            f"the recorded caller is missing ({FIXTURES / missing[0]}); run the demo from a "
            "checkout of voice-hitl"
        )
    out = Path(args.out if args.out is not None else DEFAULT_OUT[args.conference])
    writable_folder(out, "--out")
    return out


def _run(args: argparse.Namespace) -> int:
    if args.operator:  # the operator console's demo (extra 'server')
        require_packages("voice-hitl demo --operator", "starlette uvicorn httpx websockets")
        from ._operator import run_operator_command

        return run_operator_command(args)
    out = _check(args)
    from ._demo import run_demo

    if args.janus:
        if not args.conference or args.phone:
            raise UsageError("--janus runs the meeting in a Janus room: use it with --conference")
        require_packages("voice-hitl demo --conference --janus", "httpx soxr", extras="janus")
        from ._janus import run_janus_demo

        result = asyncio.run(run_janus_demo(out_dir=out, recognizer=args.recognizer))
    elif args.phone:
        if args.conference:
            raise UsageError("--phone places the one-caller demo call; drop --conference")
        require_packages("voice-hitl demo --phone", "websockets", extras="twilio")
        from ._phone import run_phone_demo

        result = asyncio.run(
            run_phone_demo(speed=args.speed, out_dir=out, recognizer=args.recognizer)
        )
    else:
        result = asyncio.run(
            run_demo(
                speed=args.speed,
                out_dir=out,
                conference=args.conference,
                recognizer=args.recognizer,
            )
        )
    print()
    print(f"moved: {result.transfers or 'nothing'}")
    if result.answer_latencies:
        worst = max(result.answer_latencies) * 1000
        print(f"end of answer -> tool result: worst {worst:.0f} ms (after end-of-speech silence)")
    print(f"call {result.call_seconds:.1f}s, wall {result.wall_seconds:.1f}s")
    print("wrote: " + ", ".join(result.files))
    return 0 if result.transfers else 1


def add_demo_command(subparsers: Any) -> None:
    """Register ``voice-hitl demo``."""
    parser = subparsers.add_parser(
        "demo",
        help="run an offline end-to-end call (needs the 'speech' extra)",
        description=(
            "An offline end-to-end call on the embedded default (a local recogniser and a "
            "local voice; no network, no API key). A recorded caller asks to move money; the "
            "agent asks how much and asks to confirm; the caller answers aloud. With "
            "--conference, a meeting in which Alice and Bob must both approve aloud. Writes "
            "caller.wav, agent.wav, call.wav and transcript.json to the output folder. Exit "
            "codes: 0 money moved, 1 nothing moved, 2 bad arguments."
        ),
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--speed",
        type=non_negative_float,
        default=1.0,
        help="caller pace: 1 real time, 2 twice as fast, 0 as fast as possible",
    )
    parser.add_argument(
        "--out",
        default=None,
        help=(
            f"folder for the audio and transcript.json (default: {DEFAULT_OUT[False]}, or "
            f"{DEFAULT_OUT[True]} with --conference)"
        ),
    )
    parser.add_argument(
        "--conference", action="store_true", help="a meeting: two participants approve aloud"
    )
    parser.add_argument(
        "--recognizer",
        choices=tuple(_EXTRAS),
        default="whisper",
        help="the local recogniser: whisper (Whisper tiny.en behind a speech gate), "
        "pocketsphinx (a grammar), combined, or whisper+moonshine (Moonshine base reading "
        "what Whisper rejects; extra moonshine)",
    )
    parser.add_argument(
        "--phone",
        action="store_true",
        help=(
            "place the call through Twilio Media Streams on loopback (8 kHz µ-law both ways; "
            "extra 'twilio')"
        ),
    )
    parser.add_argument(
        "--janus",
        action="store_true",
        help=(
            "with --conference: hold the meeting in a Janus AudioBridge room on loopback "
            "(needs the Debian package janus and the 'janus' extra; real time)"
        ),
    )
    parser.add_argument(
        "--operator",
        action="store_true",
        help="a supervisor answers one question on the operator console (extra 'server')",
    )
    parser.add_argument("--port", type=int, default=8765, help="--operator: the service's port")
    parser.add_argument(
        "--manual", action="store_true", help="--operator: you answer in the browser"
    )
    parser.set_defaults(handler=_run)
