"""The speech gate's SNR estimate against the true SNR, per noise colour (issue 32, item 2).

Clean development utterances (``audio_fixtures/confirmations`` clean takes, every second one,
and ``audio_fixtures/adversarial3`` clean sentences, every fourth) are mixed, 0.4 s lead and
trail, with noise at 0, 2, 3, 5, 7, 10 and 15 dB true SNR (the noise's power under the power
of the trimmed speech, as the fixture sets define it: `fixturegen.at_snr`):

* ``white``, ``pink``, ``brown`` (`fixturegen`'s generators);
* ``babble``: four talkers (`fixturegen.Crowd`) from ``audio_fixtures/heldout``'s clean
  answers;
* ``tel_white``, ``tel_pink``: the noisy mixture then through a telephone line (300-3400 Hz,
  8 kHz, mu-law; `fixturegen.telephone`). The line removes the noise outside its band, and
  the speech keeps most of its power there, so the SNR on the line is higher than the true
  SNR of the mixture (white: about 3 dB): the estimate measures what reaches the recogniser.

Printed per colour and true SNR: the estimate now and the one before this change (the
quietest tenth of the non-speech windows as the noise floor), median [min, max], and the
share at or above the high tier's floor. Then the time the estimate and the whole gate take.

Run: ``python bench/bench_snr.py [--step K]`` (``speech`` extra; ``scripts/fixturegen``).
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
from voice_hitl.speech.asr._snr import quietest_tenth, snr_db  # noqa: E402

SNRS = (0, 2, 3, 5, 7, 10, 15)
COLOURS = ("white", "pink", "brown", "babble", "tel_white", "tel_pink")
Floats = npt.NDArray[np.float64]


def before_db(power: Floats, speech: npt.NDArray[np.bool_]) -> float:
    """The estimate before issue 32 item 2's fix: the noise floor was the quietest tenth of
    the non-speech windows (of all windows when fewer than 3)."""
    return snr_db(power, speech, noise=quietest_tenth(power, speech))


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
    speech: Floats, colour: str, snr: float, rng: np.random.Generator, crowd: fg.Crowd
) -> tuple[npt.NDArray[np.int16], int]:
    """``speech`` (16 kHz, trimmed) in ``colour`` noise at ``snr`` dB, as 16-bit audio."""
    x = fg.padded(speech, 0.4)
    kind = colour.removeprefix("tel_")
    noise: Floats
    if kind == "babble":
        noise = crowd(len(x), rng, 4)
        noise = noise / np.sqrt(np.mean(noise**2))
    else:
        make: Callable[[int, np.random.Generator], Floats] = getattr(fg, kind)
        noise = make(len(x), rng)
    y = fg.at_snr(x, noise, speech, snr) + rng.normal(0.0, 1e-3, len(x))  # a -60 dBFS floor
    if colour.startswith("tel_"):
        return _pcm(fg.telephone(y)), fg.TEL_RATE
    return _pcm(y), fg.RATE


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--step", type=int, default=1, help="use every K-th utterance only")
    args = parser.parse_args()
    utterances = (_clean("confirmations", 2) + _clean("adversarial3", 4))[:: args.step]
    crowd = fg.Crowd(_clean("heldout", 2))
    gate = SpeechGate()
    floor = EvidencePolicy().min_snr_db
    rng = np.random.default_rng(32)
    estimate_s = gate_s = audio_s = 0.0
    calls = 0
    print(f"{len(utterances)} clean development utterances per cell; estimate now | before "
          f"(median [min, max]); share >= {floor:g} dB now | before")
    for colour in COLOURS:
        print(colour)
        medians = []
        for snr in SNRS:
            now, before = [], []
            for speech in utterances:
                pcm, rate = mixture(speech, colour, snr, rng, crowd)
                t0 = time.perf_counter()
                probs, power, _ = gate.windows(pcm, rate)
                t1 = time.perf_counter()
                now.append(snr_db(power, probs > gate.threshold))
                t2 = time.perf_counter()
                before.append(before_db(power, probs > gate.threshold))
                gate_s += t2 - t0
                estimate_s += t2 - t1
                audio_s += len(pcm) / rate
                calls += 1
            a, b = np.array(now), np.array(before)
            medians.append(float(np.median(a)))
            print(f"  {snr:2d} dB  {np.median(a):5.1f} [{a.min():4.1f}, {a.max():4.1f}] | "
                  f"{np.median(b):5.1f} [{b.min():4.1f}, {b.max():4.1f}]   "
                  f"{100 * np.mean(a >= floor):5.1f}% | {100 * np.mean(b >= floor):5.1f}%")
        monotone = all(x < y for x, y in itertools.pairwise(medians))
        print(f"  medians monotone in the true SNR: {'yes' if monotone else 'NO'}")
    print(f"time: the estimate {1e6 * estimate_s / calls:.0f} us per utterance; the whole gate "
          f"(resampling, VAD, estimate) {1e3 * gate_s / audio_s:.2f} ms per second of audio "
          f"({calls} utterances, {audio_s:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
