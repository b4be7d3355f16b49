"""The speech gate's SNR estimate against the true SNR, per noise colour (issue 32, item 2).

Clean development utterances (``audio_fixtures/confirmations`` clean takes, every second one,
and ``audio_fixtures/adversarial3`` clean sentences, every fourth) are mixed, 0.4 s lead and
trail, with noise at a known true SNR, in two grids:

1. **over the full band** (the noise's power under the power of the trimmed speech, as the
   fixture sets define it: `fixturegen.at_snr`), at 0, 2, 3, 5, 7, 10 and 15 dB:

   * ``white``, ``pink``, ``brown`` (`fixturegen`'s generators);
   * ``babble``: four talkers (`fixturegen.Crowd`) from ``audio_fixtures/heldout``'s clean
     answers;
   * ``tel_white``, ``tel_pink``: the noisy mixture then through a telephone line (300-3400
     Hz, 8 kHz, mu-law; `fixturegen.telephone`). The line removes the noise outside its
     band, so the SNR on the line is higher than the true SNR of the mixture (white: about
     3 dB): the estimate measures what reaches the recogniser;

2. **within the speech band** (`_snr.SPEECH_BAND`, or ``--band``: the trimmed speech's power
   in the band over the noise's power in the band, each from one FFT over the whole signal),
   at 0, 5, 10 and 15 dB: ``white``, ``pink``, ``brown``, ``car`` (`fixturegen.car`: road
   rumble and engine harmonics, nearly all under 300 Hz) and ``babble``.

Printed per colour and true SNR: the true SNR in the other definition (median; before the
line for ``tel_``), the estimate over the full band (before the speech band) and within the
speech band (`_snr.band_snr_db`), median [min, max], and the share at or above the high tier's
floor of each and of the gate's estimate (the better of the two: `_snr.speech_snr_db`). Then
the time the band ratio and the whole gate take.

Run: ``python bench/bench_snr.py [--step K] [--band LO HI]`` (``speech`` extra;
``scripts/fixturegen``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import fixturegen as fg  # noqa: E402

from voice_hitl.responder._risk import EvidencePolicy  # noqa: E402
from voice_hitl.speech._fixtures import load_manifest, read_audio  # noqa: E402
from voice_hitl.speech.asr import SpeechGate  # noqa: E402
from voice_hitl.speech.asr._snr import SPEECH_BAND, band_snr_db, snr_db  # noqa: E402

SNRS = (0, 2, 3, 5, 7, 10, 15)
COLOURS = ("white", "pink", "brown", "babble", "tel_white", "tel_pink")
BAND_SNRS = (0, 5, 10, 15)
BAND_COLOURS = ("white", "pink", "brown", "car", "babble")
Floats = npt.NDArray[np.float64]
Band = tuple[float, float]


def before_db(power: Floats, speech: npt.NDArray[np.bool_]) -> float:
    """The estimate before the speech band (issue 32 item 2, second part): the same ratio
    over each window's full-band power (``SpeechGate.windows``' default)."""
    return snr_db(power, speech)


def band_mean_power(x: Floats, band: Band | None, rate: int = fg.RATE) -> float:
    """``x``'s mean power within ``band`` Hz (``None``: all of it), from one FFT."""
    if band is None:
        return float(np.mean(x**2))
    spectrum = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(len(x), 1.0 / rate)
    inside = (f >= band[0]) & (f < band[1])
    return float(2.0 * np.sum(spectrum[inside]) / len(x) ** 2)


def _clean(folder: str, step: int, condition: str = "clean") -> list[Floats]:
    audio_dir, entries = load_manifest(ROOT / "audio_fixtures" / folder)
    out = []
    for entry in [e for e in entries if e.get("condition") == condition][::step]:
        pcm, rate = read_audio(audio_dir / entry["file"])
        out.append(fg.trim(pcm.astype(np.float64) / 32768.0, rate))
    return out


def _pcm(x: Floats) -> npt.NDArray[np.int16]:
    return np.clip(np.round(x * 32768.0), -32768, 32767).astype(np.int16)


def mixture(
    speech: Floats,
    colour: str,
    snr: float,
    rng: np.random.Generator,
    crowd: fg.Crowd,
    truth: Band | None = None,
) -> tuple[npt.NDArray[np.int16], int, float]:
    """``speech`` (16 kHz, trimmed) in ``colour`` noise at ``snr`` dB true SNR within
    ``truth`` Hz (``None``: the full band, `fixturegen.at_snr`'s definition), as 16-bit
    audio with its rate and the true SNR in the other definition (within `SPEECH_BAND` for
    a full-band mixture, over the full band for one in a band; before the line)."""
    x = fg.padded(speech, 0.4)
    kind = colour.removeprefix("tel_")
    noise: Floats
    if kind == "babble":
        noise = crowd(len(x), rng, 4)
        noise = noise / np.sqrt(np.mean(noise**2))
    else:
        make: Callable[[int, np.random.Generator], Floats] = getattr(fg, kind)
        noise = make(len(x), rng)
    ratio = band_mean_power(speech, truth) / band_mean_power(noise, truth)
    noise = noise * np.sqrt(ratio / 10 ** (snr / 10))
    other = SPEECH_BAND if truth is None else None
    other_db = 10 * np.log10(band_mean_power(speech, other) / band_mean_power(noise, other))
    y = x + noise + rng.normal(0.0, 1e-3, len(x))  # a -60 dBFS floor
    if colour.startswith("tel_"):
        return _pcm(fg.telephone(y)), fg.TEL_RATE, float(other_db)
    return _pcm(y), fg.RATE, float(other_db)


def _cell(label: str, full: Floats, band: Floats, other: Floats, floor: float) -> None:
    gate = np.maximum(full, band)
    print(f"  {label}  {np.median(other):5.1f}   "
          f"{np.median(full):5.1f} [{full.min():4.1f}, {full.max():4.1f}] | "
          f"{np.median(band):5.1f} [{band.min():4.1f}, {band.max():4.1f}]   "
          f"{100 * np.mean(full >= floor):5.1f}% | {100 * np.mean(band >= floor):5.1f}% | "
          f"{100 * np.mean(gate >= floor):5.1f}%")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--step", type=int, default=1, help="use every K-th utterance only")
    parser.add_argument(
        "--band", type=float, nargs=2, default=SPEECH_BAND, metavar=("LO", "HI"),
        help=f"the band of the speech-band estimate and truth, Hz (default {SPEECH_BAND})",
    )
    args = parser.parse_args()
    band: Band = (args.band[0], args.band[1])
    utterances = (_clean("confirmations", 2) + _clean("adversarial3", 4))[:: args.step]
    crowd = fg.Crowd(_clean("heldout", 2))
    gate = SpeechGate()
    floor = EvidencePolicy().min_snr_db
    rng = np.random.default_rng(32)
    estimate_s = gate_s = audio_s = 0.0
    calls = 0
    print(f"{len(utterances)} clean development utterances per cell; speech band "
          f"{band[0]:g}-{band[1]:g} Hz; per cell: the true SNR in the other definition "
          f"(median), the estimate full band | speech band (median [min, max]), the share "
          f">= the {floor:g} dB floor full band | speech band | the gate's (the better of "
          f"the two)")
    grids = (
        ("true SNR over the full band (the fixture sets' definition)", None, COLOURS, SNRS,
         "band truth"),
        (f"true SNR within {band[0]:g}-{band[1]:g} Hz (the speech's power there over the "
         "noise's)", band, BAND_COLOURS, BAND_SNRS, "full truth"),
    )
    for title, truth, colours, snrs, other_name in grids:
        print(f"== {title}; first column: {other_name}")
        for colour in colours:
            print(colour)
            medians = []
            for snr in snrs:
                full, inside, other = [], [], []
                for speech in utterances:
                    pcm, rate, other_db = mixture(speech, colour, snr, rng, crowd, truth)
                    t0 = time.perf_counter()
                    probs, power, _ = gate.windows(pcm, rate)
                    t1 = time.perf_counter()
                    in_band = gate.windows(pcm, rate, band)[1]
                    t2 = time.perf_counter()
                    is_speech = probs > gate.threshold
                    inside.append(band_snr_db(power, in_band, is_speech))
                    t3 = time.perf_counter()
                    full.append(before_db(power, is_speech))
                    other.append(other_db)
                    gate_s += (t1 - t0) + (t3 - t2)
                    estimate_s += t3 - t2
                    audio_s += len(pcm) / rate
                    calls += 1
                a, b = np.array(full), np.array(inside)
                medians.append(float(np.median(b)))
                _cell(f"{snr:2d} dB", a, b, np.array(other), floor)
            monotone = all(x < y for x, y in itertools.pairwise(medians))
            print(f"  speech-band medians monotone in the true SNR: "
                  f"{'yes' if monotone else 'NO'}")
    print(f"time: the band ratio {1e6 * estimate_s / calls:.0f} us per utterance; the gate "
          f"(resampling, VAD, ratio) {1e3 * gate_s / audio_s:.2f} ms per second of audio "
          f"({calls} utterances, {audio_s:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
