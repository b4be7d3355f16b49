#!/usr/bin/env python3
"""Spoken-answer benchmark: accuracy per voice and condition, false accepts, RTF, DTMF.

Usage (needs the ``speech`` extra)::

    python bench/bench_speech.py [audio_fixtures] [--recognizer whisper|pocketsphinx|combined]
        [--verify yes|all|off] [--no-dtmf] [--report PATH] [--heldout] [--risk] [--sample K]

The recogniser defaults to the embedded default (`DEFAULT_RECOGNIZER`, Whisper tiny.en behind
the speech gate). ``--heldout`` adds the tuning-set and held-out figures side by side and the
adversarial counts (``bench/bench_heldout.py``); ``--risk`` adds false approvals per 1,000
adversarial utterances beside the acceptance of true confirmations, per risk tier
(``bench/bench_risk.py``). ``--sample K`` runs a stratified 1/K of those sets.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import time
from pathlib import Path

import numpy as np

from voice_hitl.speech._fixtures import report_json, summarise
from voice_hitl.speech._replay import RECOGNIZERS, replay
from voice_hitl.speech.asr import DEFAULT_RECOGNIZER, read_wav
from voice_hitl.speech.dtmf import KEYS, DtmfDetector, generate_dtmf


def bench_dtmf(fixtures: Path) -> None:
    rng = np.random.default_rng(1234)
    for rate in (8000, 16000, 24000):
        for snr in (20.0, 10.0, 5.0):
            ok = 0
            trials = 50
            for t in range(trials):
                keys = "".join(rng.choice(list(KEYS), 6))
                sig = generate_dtmf(keys, rate, tone_ms=70, gap_ms=60, snr_db=snr, seed=t)
                ok += "".join(DtmfDetector(rate).feed(sig)) == keys
            print(f"dtmf {rate:5d} Hz  SNR {snr:4.0f} dB: {ok}/{trials} 6-key strings exact")
    false_keys = 0
    audio = 0.0
    start = time.perf_counter()
    wavs = sorted(fixtures.glob("*.flac"))
    for wav in wavs:
        pcm, rate = read_wav(wav)
        audio += len(pcm) / rate
        false_keys += len(DtmfDetector(rate).feed(pcm))
    rtf = (time.perf_counter() - start) / audio
    print(
        f"dtmf on {len(wavs)} speech fixtures ({audio:.0f} s): {false_keys} false keys; "
        f"RTF {rtf:.4f}"
    )


def _companions(args: argparse.Namespace) -> int:
    """Run the held-out and risk-tier reports of the sibling bench scripts."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.heldout:
        heldout = importlib.import_module("bench_heldout")
        sets = "tuning,heldout,heldout3,heldout2,heldout4,adversarial,adversarial2"
        ns = argparse.Namespace(
            recognizer=args.recognizer, verify=args.verify, sample=args.sample, sets=sets,
            report=None, whisper_model=None, no_denoise=False,
        )  # fmt: skip
        if asyncio.run(heldout.amain(ns)) != 0:
            return 1
    if args.risk:
        risk = importlib.import_module("bench_risk")
        ns = argparse.Namespace(
            recognizer=[args.recognizer], sample=args.sample,
            adversarial=risk.ADVERSARIAL_SETS, confirmations=risk.CONFIRMATION_SETS,
        )  # fmt: skip
        asyncio.run(risk.main_async(ns))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fixtures", nargs="?", type=Path, default=Path("audio_fixtures"))
    parser.add_argument("--recognizer", choices=RECOGNIZERS, default=DEFAULT_RECOGNIZER)
    parser.add_argument("--verify", choices=["yes", "all", "off"], default="yes")
    parser.add_argument("--no-dtmf", action="store_true", help="skip the DTMF benchmark")
    parser.add_argument("--report", type=Path, default=None, help="write the JSON report here")
    parser.add_argument("--heldout", action="store_true", help="tuning vs held-out, adversarial")
    parser.add_argument("--risk", action="store_true", help="false approvals, true yeses per tier")
    parser.add_argument("--sample", type=int, default=1, help="1/K of the held-out/risk sets")
    args = parser.parse_args()
    if args.heldout or args.risk:
        return _companions(args)
    results = asyncio.run(replay(args.fixtures, verify=args.verify, recognizer=args.recognizer))
    s = summarise(results)
    if args.report is not None:
        args.report.write_text(report_json(results, s) + "\n")
    label = {
        "pocketsphinx": f"pocketsphinx grammar, verify={args.verify}",
        "whisper": "whisper tiny.en (hotwords, nearest answer)",
        "combined": "combined: pocketsphinx grammar, whisper tiny.en when unsure",
    }[args.recognizer]
    print(f"{label}: {s['fixtures']} fixtures")
    print(f"overall accuracy {s['accuracy']:.1%}   RTF {s['rtf']:.3f}")
    conditions = sorted(s["condition"])
    print(f"{'voice':8}" + "".join(f"{c:>11}" for c in conditions) + f"{'all':>9}")
    for voice in sorted(s["voice"]):
        cells = "".join(f"{s['voice_condition'][f'{voice}/{c}']:>11.1%}" for c in conditions)
        print(f"{voice:8}{cells}{s['voice'][voice]:>9.1%}")
    print("per category: " + ", ".join(f"{k} {v:.0%}" for k, v in s["category"].items()))
    print(
        f"out-of-set false accepts {s['out_of_set_false_accepts']}/{s['out_of_set']} "
        f"({s['out_of_set_false_accepts'] / max(1, s['out_of_set']):.0%}); "
        f"negated read as yes {s['negated_false_yes']}/{s['negated']}; "
        f"false yes overall {s['false_yes']}"
    )
    if not args.no_dtmf:
        bench_dtmf(args.fixtures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
