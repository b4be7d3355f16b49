"""The ``voice-hitl`` command line.

Every failure a user can cause ends in one line on stderr naming the bad input, never a
traceback: exit 2 for a usage error (bad arguments, unusable paths, missing extras), found
before any work starts; the sub-commands document their other exit codes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from ._usage import UsageError
from .demo._cli import add_demo_command
from .journal._cli import add_journal_command
from .recording._cli import add_recording_command
from .service._cli import add_operator_commands
from .speech._replay import add_replay_command

__all__ = ["UsageError", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """Reports a usage error in one line (``voice-hitl demo: error: ...``), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _version() -> str:
    try:
        return version("voice-hitl")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every sub-command."""
    parser = _Parser(
        prog="voice-hitl",
        description="Human-in-the-loop tools for realtime voice agents and conference bots.",
    )
    parser.add_argument("--version", action="version", version=f"voice-hitl {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    add_demo_command(commands)
    add_replay_command(commands)
    add_operator_commands(commands)
    add_journal_command(commands)
    add_recording_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    command = f"{parser.prog} {args.command}"
    try:
        result: int = handler(args)
    except UsageError as exc:
        print(f"{command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    return result
