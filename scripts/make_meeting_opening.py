"""Regenerate the meeting demo's opening line (audio_fixtures/demo/meeting_opening.wav).

The phone call's lines come from flite (``make_demo_call.py``); this one is spoken by the
``speech`` extra's piper voice (deterministic: zero noise scales), at 16 kHz with the same 0.3 s
lead and -60 dBFS noise floor. The demo itself only reads the committed WAV file.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from providers.local._synth import PiperSynthesizer
from voice_hitl.voice._audio import resample_pcm16, write_wav_pcm16

OUT = Path(__file__).resolve().parent.parent / "audio_fixtures" / "demo" / "meeting_opening.wav"
RATE = 16_000
TEXT = "Let's move five hundred dollars from the team budget to savings."


def main() -> None:
    audio, rate = asyncio.run(PiperSynthesizer().synthesize(TEXT))
    speech = resample_pcm16(audio, rate, RATE).astype(np.float64)
    lead = np.zeros(int(0.3 * RATE))
    signal = np.concatenate([lead, speech])
    signal += np.random.default_rng(0).normal(0.0, 32768.0 * 10 ** (-60 / 20), len(signal))
    pcm = np.clip(np.round(signal), -32768, 32767).astype(np.int16)
    write_wav_pcm16(OUT, pcm, RATE)
    print(f"{OUT.name}  {len(pcm) / RATE:.2f}s  {TEXT!r}")


if __name__ == "__main__":
    main()
