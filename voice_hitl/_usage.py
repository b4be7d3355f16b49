"""What the command line's sub-commands raise for bad input (see ``_cli``)."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

__all__ = [
    "HelpFormatter",
    "UsageError",
    "non_negative_float",
    "positive_int",
    "require_packages",
    "writable_folder",
]


class UsageError(Exception):
    """Bad input found before the work starts; the message names it (exit 2)."""


def non_negative_float(text: str) -> float:
    """argparse type: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def writable_folder(path: Path, option: str) -> None:
    """Make sure ``path`` is (or can become) a folder we can write files into.

    Raises:
        UsageError: It is a file, or it cannot be created or written (names the option).
    """
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UsageError(f"{option} {path}: cannot write there ({reason})") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: cannot write there (permission denied)")


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the description's line breaks and shows each option's default (unless None)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or isinstance(action.default, bool):
            return action.help
        return super()._get_help_string(action)


def require_packages(what: str, packages: str, extras: str = "server,redis") -> None:
    """Raise :class:`UsageError` (one line, exit 2) when ``what`` lacks any of ``packages``
    (space-separated import names), naming the extras that bring them."""
    import importlib.util

    missing = [name for name in packages.split() if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(f"{what} needs {', '.join(missing)}: pip install 'voice-hitl[{extras}]'")
