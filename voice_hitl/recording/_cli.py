"""``voice-hitl recording show|verify|diff|redact|migrate``: recorded calls from a terminal.

Exit codes: 0 done (``verify``: intact; ``diff``: the same), 1 ``verify`` found a problem or
``diff`` a difference, 2 bad input (a folder that is not a recording, a newer format
version...), one line on stderr naming it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._usage import HelpFormatter, UsageError

if TYPE_CHECKING:
    from ._folder import LoadedCall

__all__ = ["add_recording_command"]

REDACTED = "[redacted]"


def add_recording_command(subparsers: Any) -> None:
    """Register ``voice-hitl recording`` on the top-level parser's sub-commands."""
    recording = subparsers.add_parser(
        "recording",
        help="inspect, check, compare or redact recorded calls",
        description="Inspect, check, compare or redact calls recorded by CallRecorder.",
        formatter_class=HelpFormatter,
    )
    actions = recording.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", help="what a recorded call holds", formatter_class=HelpFormatter
    )
    show.add_argument("folder")
    show.set_defaults(handler=_show)
    verify = actions.add_parser(
        "verify",
        help="check every file against the manifest (exit 1 when one was truncated or edited)",
        formatter_class=HelpFormatter,
    )
    verify.add_argument("folder")
    verify.set_defaults(handler=_verify)
    migrate = actions.add_parser(
        "migrate",
        help="seal a format version 2 recording's manifest as version 3 (a recording you trust)",
        formatter_class=HelpFormatter,
    )
    migrate.add_argument("folder")
    migrate.set_defaults(handler=_migrate)
    diff = actions.add_parser(
        "diff",
        help="the first differing client frame and the stories' diff (exit 1 when they differ)",
        formatter_class=HelpFormatter,
    )
    diff.add_argument("a")
    diff.add_argument("b")
    diff.add_argument("--strict", action="store_true", help="also compare recogniser figures")
    diff.set_defaults(handler=_diff)
    redact = actions.add_parser(
        "redact", help="write a redacted copy of a recorded call", formatter_class=HelpFormatter
    )
    redact.add_argument("folder")
    redact.add_argument("out", help="the new folder")
    redact.add_argument(
        "--argument",
        action="append",
        default=[],
        metavar="NAME",
        help="blank this tool argument everywhere (repeatable)",
    )
    redact.add_argument("--transcripts", action="store_true", help="blank every transcript")
    redact.add_argument("--drop-audio", action="store_true", help="leave the caller audio out")
    redact.set_defaults(handler=_redact)


def _load(folder: str, *, complete: bool = False) -> LoadedCall:
    from ._folder import load_call
    from ._manifest import RecordingError

    try:
        return load_call(folder, complete=complete)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None


def _show(args: argparse.Namespace) -> int:
    from ._folder import incomplete_at

    call = _load(args.folder)
    m = call.manifest
    provider = m["provider"]
    inbound = sum(1 for line in call.lines if line.dir == "in")
    rate = m["session"].get("input_sample_rate") or 1
    audio = (m.get("stats") or {}).get("caller_samples", 0) / rate
    state = "complete" if m["complete"] else f"NOT COMPLETE: {incomplete_at(call.folder, m)}"
    print(f"{call.folder}: {m['format']} version {m['version']}, voice-hitl {m['voice_hitl']}")
    print(f"  provider {provider['kind']} model {provider.get('model')}; {state}")
    print(
        f"  {m.get('duration', 0):.1f} s; {inbound} frames in, {len(call.lines) - inbound} out; "
        f"caller audio {audio:.1f} s; {len(m['marks'])} marks"
    )
    tools = ", ".join(tool["name"] for tool in m["session"]["tools"])
    print(f"  tools: {tools}")
    if m.get("redacted"):
        print(f"  redacted: {', '.join(m['redacted'])}")
    for story in call.stories:
        answer = story.get("answer")
        shown = answer.get("answer") if isinstance(answer, dict) else answer
        print(
            f"  {story.get('tool')} {json.dumps(story.get('arguments'))}: {story.get('outcome')} "
            f"by {story.get('by')} via {story.get('via')}: {json.dumps(shown)}"
        )
    return 0


def _verify(args: argparse.Namespace) -> int:
    from ._folder import incomplete_at, load_call
    from ._format import MANIFEST_FILE, UNSEALED_VERSION, read_manifest, verify_files
    from ._manifest import RecordingError

    folder = Path(args.folder)
    try:
        manifest = read_manifest(folder)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    problems = verify_files(folder, manifest)
    if manifest["version"] == UNSEALED_VERSION:
        problems.append(
            f"{MANIFEST_FILE}: format version 2 has no seal, so its own fields cannot be "
            f"checked; `voice-hitl recording migrate {folder}` seals a recording you trust"
        )
    if not problems:
        try:
            load_call(folder, complete=False)
        except RecordingError as exc:
            problems = [str(exc)]
    if not manifest["complete"]:
        problems.append(incomplete_at(folder, manifest))
    for problem in problems:
        print(f"{folder}: {problem}", file=sys.stderr)
    if not problems:
        count = len(manifest['files'])
        print(f"{folder}: intact (the manifest matches its seal; {count} files match the manifest)")
    return 1 if problems else 0


def _migrate(args: argparse.Namespace) -> int:
    from ._format import migrate_manifest
    from ._manifest import RecordingError

    try:
        manifest = migrate_manifest(args.folder)
    except (RecordingError, OSError) as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.folder}: sealed as format version {manifest['version']}")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from ._folder import diff_calls

    lines = diff_calls(_load(args.a), _load(args.b), strict=args.strict)
    for line in lines:
        print(line)
    if not lines:
        print("the same client frames and stories")
    return 1 if lines else 0


def _redact(args: argparse.Namespace) -> int:
    from ._folder import redact_folder
    from ._manifest import RecordingError
    from ._redact import Redaction

    call = _load(args.folder)
    names = set(args.argument)
    if not names and not args.transcripts and not args.drop_audio:
        raise UsageError("nothing to redact: give --argument NAME, --transcripts or --drop-audio")

    def arguments(tool: str, values: dict[str, Any]) -> dict[str, Any]:
        return {k: (REDACTED if k in names else v) for k, v in values.items()}

    redaction = Redaction(
        arguments=arguments if names else None,
        transcript=(lambda text: REDACTED) if args.transcripts else None,
    )
    try:
        out = redact_folder(call, Path(args.out), redaction, drop_audio=args.drop_audio)
    except (RecordingError, OSError) as exc:
        raise UsageError(str(exc)) from None
    print(f"{out}: redacted copy of {call.folder}")
    return 0
