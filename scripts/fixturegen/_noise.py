"""Noise and channels: what a recipe adds to speech, or puts it through.

Noise (unit RMS unless said): `white`, `pink`, `brown`; babble mixed from spoken lines
(`all_talkers`, `two_talkers`, `Crowd`); bursts (`clicks`, `coughs`) and `near_silence`.
Channels: `band` (a band-pass with raised-cosine skirts), `mulaw` (the G.711 mu-law round
trip), `mulaw_line` (8 kHz, mu-law), `telephone` (300-3400 Hz, 8 kHz, mu-law) and `codec`
(a round trip through a sox codec: A-law, GSM 06.10 raw or in WAV, AMR-NB, IMA ADPCM).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soxr

from ._audio import RATE, TEL_RATE, FloatArray, read_wav, to_dbfs, write_wav

__all__ = [
    "CODECS",
    "Crowd",
    "all_talkers",
    "at_snr",
    "band",
    "brown",
    "clicks",
    "codec",
    "coughs",
    "mulaw",
    "mulaw_line",
    "near_silence",
    "phone_line",
    "pink",
    "telephone",
    "two_talkers",
    "white",
]


def white(n: int, rng: np.random.Generator) -> FloatArray:
    """Gaussian white noise."""
    x: FloatArray = rng.normal(0.0, 1.0, n)
    return x


def pink(n: int, rng: np.random.Generator) -> FloatArray:
    """1/f noise (white noise shaped in the frequency domain)."""
    spectrum = np.fft.rfft(rng.normal(size=n))
    f = np.arange(len(spectrum), dtype=np.float64)
    f[0] = 1.0
    x: FloatArray = np.fft.irfft(spectrum / np.sqrt(f), n)
    y: FloatArray = x / np.sqrt(np.mean(x**2))
    return y


def brown(n: int, rng: np.random.Generator) -> FloatArray:
    """1/f^2 (brown, red) noise above 20 Hz: a rumble, most of its power under 200 Hz."""
    spectrum = np.fft.rfft(rng.normal(size=n))
    f = np.fft.rfftfreq(n, 1 / RATE)
    gain = np.where(f >= 20.0, 1.0 / np.maximum(f, 20.0), 0.0)
    x: FloatArray = np.fft.irfft(spectrum * gain, n)
    y: FloatArray = x / np.sqrt(np.mean(x**2))
    return y


def band(x: FloatArray, rate: int, lo: float, hi: float) -> FloatArray:
    """``x`` band-passed to ``lo``-``hi`` Hz, with raised-cosine skirts 100 Hz wide."""
    spectrum = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1 / rate)
    gain = np.clip((f - (lo - 100)) / 100, 0, 1) * np.clip(((hi + 100) - f) / 100, 0, 1)
    gain = 0.5 - 0.5 * np.cos(np.pi * gain)
    y: FloatArray = np.fft.irfft(spectrum * gain, len(x))
    return y


def mulaw(x: FloatArray) -> FloatArray:
    """The G.711 mu-law round trip (8-bit codes)."""
    mu = 255.0
    y = np.sign(x) * np.log1p(mu * np.abs(np.clip(x, -1, 1))) / np.log1p(mu)
    y = np.round(y * 127) / 127
    out: FloatArray = np.sign(y) * ((1 + mu) ** np.abs(y) - 1) / mu
    return out


def mulaw_line(x: FloatArray) -> FloatArray:
    """16 kHz audio down to 8 kHz and through mu-law (no band limit)."""
    return mulaw(soxr.resample(x, RATE, TEL_RATE, quality="HQ"))


def telephone(x: FloatArray) -> FloatArray:
    """16 kHz audio through a G.711 channel: 300-3400 Hz, 8 kHz, mu-law."""
    return mulaw_line(band(x, RATE, 300.0, 3400.0))


CODECS: dict[str, tuple[str, ...]] = {
    "alaw": ("-t", "wav", "-e", "a-law"),
    "gsm": ("-t", "gsm"),
    "gsm_fr": ("-t", "wav", "-e", "gsm-full-rate"),
    "amr475": ("-t", "amr-nb", "-C", "0"),
    "amr122": ("-t", "amr-nb", "-C", "7"),
    "ima_adpcm": ("-t", "wav", "-e", "ima-adpcm"),
}
"""sox output options of each codec `codec` knows (GSM 06.10 as a raw ``.gsm`` stream and
inside WAV, AMR-NB at 4.75 and 12.2 kbit/s, IMA ADPCM in WAV: 4 bits a sample, 32 kbit/s at
8 kHz, the rate of a DECT cordless phone's G.726)."""


def codec(x: FloatArray, name: str, rate: int = TEL_RATE) -> FloatArray:
    """``x`` (at ``rate``) encoded with sox's ``name`` codec (`CODECS`) and decoded back
    (AMR-NB may come back a frame short, IMA ADPCM a block long: whole frames and blocks).

    Raises:
        ValueError: an unknown codec.
    """
    if name not in CODECS:
        raise ValueError(f"unknown codec {name!r}; known: {', '.join(CODECS)}")
    with tempfile.TemporaryDirectory() as tmp:
        source, coded, out = Path(tmp) / "in.wav", Path(tmp) / "coded", Path(tmp) / "out.wav"
        write_wav(source, x, rate)
        run = ["sox", "-R", "-D"]
        encode = [*run, str(source), *CODECS[name], str(coded)]
        subprocess.run(encode, check=True, capture_output=True)
        kind = CODECS[name][1]
        decode = [*run, "-t", kind, str(coded), "-e", "signed-integer", "-b", "16", str(out)]
        subprocess.run(decode, check=True, capture_output=True)
        y, got = read_wav(out)
    if got != rate:
        raise ValueError(f"codec {name} came back at {got} Hz, not {rate}")
    return y


def phone_line(x: FloatArray, name: str, lo: float = 300.0, hi: float = 3400.0) -> FloatArray:
    """16 kHz audio through a narrowband phone line: ``lo``-``hi`` Hz, 8 kHz, the sox codec
    ``name`` (`CODECS`) and back; 8 kHz out."""
    narrow: FloatArray = soxr.resample(band(x, RATE, lo, hi), RATE, TEL_RATE, quality="HQ")
    return codec(narrow, name)


def at_snr(x: FloatArray, noise: FloatArray, speech: FloatArray, snr_db: float) -> FloatArray:
    """``x`` plus ``noise`` (unit RMS, as long as ``x``) at ``snr_db`` below the power of
    ``speech`` (the speech alone, without the lead and trail)."""
    power = float(np.mean(speech**2))
    y: FloatArray = x + noise * np.sqrt(power / 10 ** (snr_db / 10))
    return y


def all_talkers(n: int, babblers: list[FloatArray], rng: np.random.Generator) -> FloatArray:
    """Every babbler at once, each from a random point of its line (looped), unit RMS."""
    out = np.zeros(n)
    for b in babblers:
        start = int(rng.integers(0, max(1, len(b) - n))) if len(b) > n else 0
        piece = np.resize(b[start:], n)
        out += piece * rng.uniform(0.7, 1.0)
    x: FloatArray = out / np.sqrt(np.mean(out**2))
    return x


def two_talkers(n: int, babblers: list[FloatArray], rng: np.random.Generator) -> FloatArray:
    """Two babblers at once, each from a random point of its line (looped), unit RMS."""
    out = np.zeros(n)
    for b in rng.choice(len(babblers), size=2, replace=False):
        line = babblers[int(b)]
        start = int(rng.integers(0, len(line)))
        out += np.resize(np.roll(line, -start), n) * rng.uniform(0.7, 1.0)
    x: FloatArray = out / np.sqrt(np.mean(out**2))
    return x


class Crowd:
    """Babble of 3-6 talkers (or ``talkers``), each clip looped from a random point, mixed at
    random gains, -20 dBFS."""

    def __init__(self, clips: list[FloatArray]) -> None:
        self.clips = clips

    def __call__(self, n: int, rng: np.random.Generator, talkers: int | None = None) -> FloatArray:
        k = talkers if talkers is not None else int(rng.integers(3, 7))
        out = np.zeros(n)
        for idx in rng.choice(len(self.clips), size=k, replace=False):
            clip = self.clips[int(idx)]
            reps = np.tile(clip, n // len(clip) + 2)
            start = int(rng.integers(0, len(clip)))
            out += reps[start : start + n] * rng.uniform(0.6, 1.0)
        return to_dbfs(out, -20.0)


def clicks(n: int, rng: np.random.Generator) -> FloatArray:
    """3-14 decaying noise clicks."""
    out = np.zeros(n)
    for _ in range(int(rng.integers(3, 15))):
        at = int(rng.integers(0, n - 400))
        length = int(rng.integers(40, 400))
        decay = np.exp(-np.arange(length) / rng.uniform(5, 60))
        out[at : at + length] += rng.normal(0.0, 1.0, length) * decay * rng.uniform(0.3, 1.0)
    return out


def _resonate(x: FloatArray, f: float, bw: float, rate: int) -> FloatArray:
    """A two-pole resonator (one formant) run over ``x``."""
    r = np.exp(-np.pi * bw / rate)
    a1, a2 = -2 * r * np.cos(2 * np.pi * f / rate), r * r
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] - a1 * (y[i - 1] if i else 0.0) - a2 * (y[i - 2] if i > 1 else 0.0)
    return y


def coughs(n: int, rng: np.random.Generator) -> FloatArray:
    """1-3 synthetic coughs: noise bursts through three formants, fast attack, -12 dBFS."""
    out = np.zeros(n)
    for _ in range(int(rng.integers(1, 4))):
        length = int(RATE * rng.uniform(0.15, 0.4))
        at = int(rng.integers(0, max(1, n - length)))
        burst = rng.normal(0.0, 1.0, length)
        shaped = sum(
            _resonate(burst, f * rng.uniform(0.85, 1.15), bw, RATE)
            for f, bw in ((500.0, 150.0), (1400.0, 250.0), (2600.0, 400.0))
        )
        t = np.arange(length) / RATE
        env = (1 - np.exp(-t / 0.008)) * np.exp(-t / rng.uniform(0.04, 0.12))
        out[at : at + length] += to_dbfs(shaped * env, -12.0)
    return out


def near_silence(n: int, rng: np.random.Generator) -> FloatArray:
    """White noise under a 50 Hz mains hum three times its level."""
    x = rng.normal(0.0, 1.0, n)
    t = np.arange(n) / RATE
    hum: FloatArray = x + 3.0 * np.sin(2 * np.pi * 50.0 * t + rng.uniform(0, 6.28))
    return hum
