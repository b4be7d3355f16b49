"""The ``voice-hitl`` command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ._demo import add_demo_command
from .service._cli import add_operator_commands
from .speech._replay import add_replay_command

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every sub-command."""
    parser = argparse.ArgumentParser(
        prog="voice-hitl",
        description="Human-in-the-loop tools for realtime voice agents and conference bots.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_demo_command(commands)
    add_replay_command(commands)
    add_operator_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    result: int = handler(args)
    return result
