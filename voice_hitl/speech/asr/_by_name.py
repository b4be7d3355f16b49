"""Recognisers by name, for the command line (``replay``, ``demo``) and the benchmarks."""

from __future__ import annotations

import asyncio
from typing import Literal

from .._recognizer_names import DEFAULT_RECOGNIZER, RECOGNIZERS
from ._combined import CombinedRecognizer
from ._denoise import Denoiser
from ._moonshine import MoonshineReader
from ._pocketsphinx import PocketsphinxRecognizer
from ._protocol import Recognizer
from ._quality import GatedRecognizer, SpeechGate
from ._second_reading import SecondReadingRecognizer
from ._whisper import WhisperRecognizer

__all__ = ["DEFAULT_RECOGNIZER", "RECOGNIZERS", "load_recognizer"]



async def load_recognizer(
    name: str = DEFAULT_RECOGNIZER,
    *,
    verify: Literal["yes", "all", "off"] = "yes",
    gate: bool = True,
) -> Recognizer:
    """The recogniser called ``name``, its models loaded off the event loop.

    Args:
        name: one of `RECOGNIZERS`.
        verify: PocketSphinx's ``verify`` option (``pocketsphinx`` only).
        gate: hear only speech (`GatedRecognizer`): noise, clicks and silence give no
            hypothesis, and hypotheses carry the utterance's `AudioQuality`. Behind the gate,
            Whisper hears noisy utterances with their steady noise subtracted (`Denoiser`).

    Raises:
        ValueError: an unknown name (the message lists the known ones).
        ModuleNotFoundError: the extra the recogniser needs is not installed.
        MoonshineUnsupportedError: ``whisper+moonshine`` on a CPU the ``moonshine-cpp`` wheel
            cannot run on (probed in a child process; the message gives the reason).

    Cancellation:
        Safe: loading goes on in its threads and is kept for later use.
    """
    inner: Recognizer
    denoiser: Denoiser | None = None
    speech_gate = SpeechGate()
    if name == "pocketsphinx":
        grammar = await asyncio.to_thread(PocketsphinxRecognizer, verify=verify)
        await grammar.load()
        inner = grammar
    elif name == "whisper":
        whisper = WhisperRecognizer()
        await whisper.load()
        inner = whisper
        denoiser = Denoiser()
    elif name == "whisper+moonshine":
        # the reader finds the speech span with the gate's own VAD (one Silero model)
        second = SecondReadingRecognizer(WhisperRecognizer(), MoonshineReader(gate=speech_gate))
        await second.load()
        inner = second
        denoiser = Denoiser()
    elif name == "combined":
        combined = CombinedRecognizer()
        await combined.load()
        inner = combined
    else:
        raise ValueError(f"unknown recognizer {name!r}: use one of {', '.join(RECOGNIZERS)}")
    if not gate:
        return inner
    gated = GatedRecognizer(inner, speech_gate, denoiser=denoiser)
    await gated.load()
    return gated
