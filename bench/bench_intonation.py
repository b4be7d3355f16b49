"""The rising-end check (`intonation_probe`, measured, not adopted) on development audio
(issue 32: a code read back as a question, its "?" dropped by Whisper).

Sets, each file measured over the speech gate's speech region (`SpeechGate.speech_span`:
Silero VAD, first to last speech window), then `end_rise`:

* ``+ adversarial6/code_as_question``: the 20 positives, a code read back with question
  intonation ("five, two, nine?", "the code is three six four?");
* ``- heldout7_confirmations``, ``heldout6_confirmations``, ``heldout4_confirmations``,
  ``confirmations``: true confirmations that are not questions (every file);
* ``. adversarial6/...``: other no-yes categories, for reference (a rise there costs nothing);
* with ``--synth``, question/statement pairs rendered by ``scripts/fixturegen`` espeak-ng
  voices (which say "?" rising) into a temporary directory, clean, in 10 dB white noise and
  on a telephone line: ``+ synth/<condition>`` the questions, ``- synth/<condition>`` the
  statements.

Printed per set: the files, how many gave a figure, the rise in semitones (median [max]) and
how many were flagged at each threshold (the candidate, `RISE_ST`, marked ``*``); then the
time per file.

Run: ``nice -n 10 python bench/bench_intonation.py [--show] [--synth]`` (``speech`` extra;
``--synth`` needs ``scripts/fixturegen`` and Debian's espeak-ng).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from intonation_probe import RISE_ST, end_rise  # noqa: E402

from voice_hitl.speech._fixtures import load_manifest, read_audio  # noqa: E402
from voice_hitl.speech.asr._quality import SpeechGate  # noqa: E402

FIXTURES = ROOT / "audio_fixtures"
POSITIVES = (("adversarial6", "code_as_question"),)
NEGATIVES = (
    ("heldout7_confirmations", None),
    ("heldout6_confirmations", None),
    ("heldout4_confirmations", None),
    ("confirmations", None),
)
REFERENCE = (
    ("adversarial6", "code_question_back"),
    ("adversarial6", "wrong_code"),
)
THRESHOLDS = (1.5, 2.0, 2.5, RISE_ST, 3.5, 4.0, 5.0)
SYNTH_TEXTS = (
    "five, two, nine",
    "four seven two",
    "the code is three six four",
    "eight four three, is that right",
    "confirm",
    "I confirm",
)
SYNTH_VOICES = (
    ("en-us+f3", 160, None),
    ("en-gb-x-rp", 170, None),
    ("en-us+m3", 150, 40),
    ("en-029+aunty", 155, 60),
)

Rises = list[float | None]


def _rise(gate: SpeechGate, pcm: np.ndarray, rate: int) -> float | None:
    span = gate.speech_span(pcm, rate)
    if span is None:
        return None
    x = pcm[span[0] : span[1]].astype(np.float64) / 32768.0
    return end_rise(x, rate).rise_st


def _fixture_set(gate: SpeechGate, name: str, category: str | None, show: bool) -> Rises:
    folder, entries = load_manifest(FIXTURES / name / "manifest.json")
    if category is not None:
        entries = [e for e in entries if e.get("category") == category]
    rises: Rises = []
    for entry in entries:
        pcm, rate = read_audio(folder / entry["file"])
        rises.append(_rise(gate, pcm, rate))
        if show:
            shown = "-" if rises[-1] is None else f"{rises[-1]:+.1f}"
            print(f"  {shown:>6}  {entry['file']}  {entry.get('text', '')!r}")
    return rises


def _synth(gate: SpeechGate, show: bool) -> Iterator[tuple[str, Rises]]:
    sys.path.insert(0, str(ROOT / "scripts"))
    import fixturegen as fg

    rng = np.random.default_rng(32)
    out: dict[str, Rises] = {}
    for variant, speed, pitch in SYNTH_VOICES:
        voice = fg.espeak(variant, speed, pitch=pitch)
        for text in SYNTH_TEXTS:
            for mark, sign in (("?", "+"), (".", "-")):
                said = fg.speech(voice, text + mark)
                x = fg.padded(said, 0.4)
                noisy = fg.at_snr(x, fg.white(len(x), rng), said, 10.0)
                for condition, audio, rate in (
                    ("clean", x, fg.RATE),
                    ("white10", noisy, fg.RATE),
                    ("telephone", fg.telephone(x), fg.TEL_RATE),
                ):
                    rise = _rise(gate, fg.pcm16(audio), rate)
                    out.setdefault(f"{sign} synth/{condition}", []).append(rise)
                    if show:
                        shown = "-" if rise is None else f"{rise:+.1f}"
                        print(f"  {shown:>6}  {variant} {condition} {text + mark!r}")
    yield from sorted(out.items())


def _row(label: str, rises: Rises) -> str:
    known = np.array([r for r in rises if r is not None])
    spread = f"{np.median(known):+5.1f} [{known.max():+5.1f}]" if len(known) else "-"
    cells = []
    for t in THRESHOLDS:
        k = int(np.sum(known >= t)) if len(known) else 0
        mark = "*" if t == RISE_ST else " "
        cells.append(f" {mark}{k:3d} {100.0 * k / max(1, len(rises)):5.1f}%")
    return f"{label:36s} {len(rises):4d} {len(known):4d}  {spread:15s}" + "".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each file's rise")
    parser.add_argument("--synth", action="store_true", help="also render espeak-ng pairs")
    args = parser.parse_args()
    gate = SpeechGate()
    header = "".join(f"{f'>={t:g} st':>12s}" for t in THRESHOLDS)
    print(f"{'set':36s} {'n':>4s} {'fig':>4s}  {'median [max]':15s}{header}")
    started = time.perf_counter()
    count = 0
    for sign, group in (("+", POSITIVES), ("-", NEGATIVES), (".", REFERENCE)):
        for name, category in group:
            rises = _fixture_set(gate, name, category, args.show)
            count += len(rises)
            print(_row(f"{sign} {name}" + (f"/{category}" if category else ""), rises))
    took = time.perf_counter() - started
    if args.synth:
        for label, rises in _synth(gate, args.show):
            print(_row(label, rises))
    print(f"{count} fixture files, {1000.0 * took / max(1, count):.0f} ms per file (VAD and F0)")


if __name__ == "__main__":
    main()
