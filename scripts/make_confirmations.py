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

import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturegen as fg

OUT = fg.fixtures_root() / "confirmations"
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


def voices() -> dict[str, fg.Voice]:
    return {
        "piper": fg.piper(1.0),
        "piper_slow": fg.piper(1.25),
        "flite_kal": fg.flite("kal"),
        "flite_awb": fg.flite("awb"),
        "flite_rms": fg.flite("rms"),
        "espeak_m3": fg.espeak("en-us+m3", 160),
        "espeak_gb_f3": fg.espeak("en-gb+f3", 160),
    }


def main() -> int:
    speakers = voices()
    babblers = [fg.speech(speakers["piper"], line) for line in BABBLE_LINES[:2]]
    babblers += [fg.speech(speakers["flite_kal"], line) for line in BABBLE_LINES[2:]]
    render = fg.recipe(partial(fg.render_take, babblers=babblers))
    entries = fg.generate(OUT, fg.challenges(PHRASES), speakers, CONDITIONS, render, takes=fg.TAKES)
    description = "True high-risk confirmations; regenerate with scripts/make_confirmations.py"
    fg.write_manifest(OUT, description, entries, voices=list(speakers), conditions=list(CONDITIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
