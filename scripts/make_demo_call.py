"""Regenerate the demo's recorded caller (audio_fixtures/demo/*.wav) deterministically.

Needs Debian's ``flite`` (``apt-get install flite``); the demo itself only reads the committed
WAV files. Each line is spoken by flite's "slt" voice at 16 kHz, given 0.3 s of lead and a
-60 dBFS noise floor (exact digital silence hurts recognisers).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from voice_hitl.voice._audio import read_wav_pcm16, resample_pcm16, write_wav_pcm16

OUT = Path(__file__).resolve().parent.parent / "audio_fixtures" / "demo"
RATE = 16_000
LINES = {
    "01_opening": "Hi, I would like to move some money to my savings account.",
    "02_amount": "five hundred dollars",
    "03_confirm": "yes, go ahead",
    "alice_approve": "yes, I approve",
    "bob_approve": "yes, approved",
    "carol_chatter": "what time is lunch",
    "mumble": "purple monkey dishwasher",
    "cancel": "never mind, cancel that",
    "barge_in_amount": "five hundred dollars",
    # the challenge word a high-risk confirmation asks for (sorts last: the seeds of the
    # lines above stay as they were)
    "say_confirm": "confirm",
}


def speak(text: str) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "line.wav"
        subprocess.run(
            ["flite", "-voice", "slt", "-t", text, "-o", str(path)], check=True, capture_output=True
        )
        audio, rate = read_wav_pcm16(path)
    return resample_pcm16(audio, rate, RATE)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for index, (name, text) in enumerate(sorted(LINES.items())):
        speech = speak(text).astype(np.float64)
        lead = np.zeros(int(0.3 * RATE))
        audio = np.concatenate([lead, speech])
        rng = np.random.default_rng(index)
        audio += rng.normal(0.0, 32768.0 * 10 ** (-60 / 20), len(audio))
        pcm = np.clip(np.round(audio), -32768, 32767).astype(np.int16)
        write_wav_pcm16(OUT / f"{name}.wav", pcm, RATE)
        print(f"{name}.wav  {len(pcm) / RATE:.2f}s  {text!r}")


if __name__ == "__main__":
    main()
