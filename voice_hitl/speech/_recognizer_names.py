"""The recognisers' names, apart from the recognisers: a command line lists them without
loading any (``voice-hitl --help`` stays free of numpy and the recognisers' libraries)."""

from __future__ import annotations

__all__ = ["DEFAULT_RECOGNIZER", "RECOGNIZERS"]

RECOGNIZERS = ("whisper", "pocketsphinx", "combined", "whisper+moonshine")
"""Names `load_recognizer` knows (all need the ``speech`` extra; ``whisper+moonshine``, the
default with Moonshine base reading what Whisper rejects, also the ``moonshine`` extra)."""

DEFAULT_RECOGNIZER = "whisper"
"""The embedded default: Whisper tiny.en behind the speech gate. On the held-out set it
understood far more answers than the PocketSphinx grammar (bench/results_heldout.txt)."""
