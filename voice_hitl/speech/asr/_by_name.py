"""Recognisers by name, for the command line (``replay``, ``demo``) and the benchmarks."""

from __future__ import annotations

import asyncio
from typing import Literal

from ._combined import CombinedRecognizer
from ._pocketsphinx import PocketsphinxRecognizer
from ._protocol import Recognizer
from ._whisper import WhisperRecognizer

__all__ = ["RECOGNIZERS", "load_recognizer"]

RECOGNIZERS = ("pocketsphinx", "whisper", "combined")
"""Names `load_recognizer` knows (``whisper`` and ``combined`` need the ``whisper`` extra)."""


async def load_recognizer(
    name: str, *, verify: Literal["yes", "all", "off"] = "yes"
) -> Recognizer:
    """The recogniser called ``name``, its models loaded off the event loop.

    Args:
        name: one of `RECOGNIZERS`.
        verify: PocketSphinx's ``verify`` option (``pocketsphinx`` only).

    Raises:
        ValueError: an unknown name (the message lists the known ones).
        ModuleNotFoundError: the extra the recogniser needs is not installed.

    Cancellation:
        Safe: loading goes on in its threads and is kept for later use.
    """
    if name == "pocketsphinx":
        grammar = await asyncio.to_thread(PocketsphinxRecognizer, verify=verify)
        await grammar.load()
        return grammar
    if name == "whisper":
        whisper = WhisperRecognizer()
        await whisper.load()
        return whisper
    if name == "combined":
        combined = CombinedRecognizer()
        await combined.load()
        return combined
    raise ValueError(f"unknown recognizer {name!r}: use one of {', '.join(RECOGNIZERS)}")
