#!/usr/bin/env python3
"""Generate a fixture set from its recipe, ``scripts/fixturegen/sets/<name>.toml`` (what it
says, in which voices and conditions, seeded how: see ``fixturegen._plans`` and
``fixturegen._recipe``). Run from the repository root::

    python scripts/make_set.py --list
    python scripts/make_set.py adversarial6 [--out DIR]   # default audio_fixtures

Needs the synthesisers the recipe's voices use (Debian's ``espeak-ng``, ``espeak`` 1.48,
``flite``, ``festival``, ``sox``; the ``speech`` extra for piper). Seeds come from the file
names: a rerun gives identical files.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixturegen import make

if __name__ == "__main__":
    raise SystemExit(make())
