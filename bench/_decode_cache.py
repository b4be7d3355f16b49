"""A disk cache of Whisper's decodes for the benchmarks (``--cache DIR``).

Rule changes in `understand` and in the mapping of transcripts onto answers do not change
what the decoder writes for a given audio and prompt, so a bench run can replay the decodes of
an earlier run and decode only what it has not seen: a new prompt, or new audio. The key is
the audio Whisper was given (its SHA-1 and rate, after the denoiser), the model, the beam and
the prompt's words. Encoding runs lazily, only when a decode misses.

Installed by patching `WhisperRecognizer` for the process (a benchmark helper; the library
itself never caches).
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voice_hitl.speech.asr._whisper import WhisperRecognizer

try:
    from voice_hitl.speech.asr import _no_support
except ImportError:  # code from before the no-support rule (a "before" measurement)
    _no_support = None  # type: ignore[assignment]

__all__ = ["install"]


class _Lazy:
    """Stands in for an encoding: the audio, its key, and the encoding once computed."""

    def __init__(
        self, recognizer: WhisperRecognizer, pcm16: npt.NDArray[np.int16], rate: int
    ) -> None:
        self.recognizer = recognizer
        self.pcm16 = pcm16
        self.rate = rate
        digest = hashlib.sha1(np.ascontiguousarray(pcm16).tobytes())
        self.key = digest.hexdigest() + f"@{rate}"
        digest.update(str(rate).encode())
        self.other_key = digest.hexdigest()
        self._encoded: Any = None

    def encoded(self, encode: Any) -> Any:
        if self._encoded is None:
            self._encoded = encode(self.recognizer, self.pcm16, self.rate)
        return self._encoded


def _sqlite_reader(path: Path | None) -> Any:
    """A lookup into another bench's SQLite decode cache (read only), or ``None``."""
    if path is None or not path.exists():
        return None
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=5)
    db_lock = threading.Lock()

    def lookup(key: str) -> tuple[str, float] | None:
        try:
            with db_lock:
                row = db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
        text, logprob = json.loads(row[0])
        return str(text), float(logprob)

    return lookup


def install(folder: Path, also: Path | None = None) -> dict[str, int]:
    """Patch `WhisperRecognizer` to read and write decodes under ``folder`` (and to read
    those of another bench's SQLite cache at ``also``, keyed the same way); returns live
    counters (``hits``, ``misses``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "decodes.jsonl"
    cache: dict[str, tuple[str, float]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut short by a killed run
            cache[row["k"]] = (row["t"], float(row["p"]))
    lock = threading.Lock()
    stats = {"hits": 0, "misses": 0}
    other = _sqlite_reader(also)
    encode = WhisperRecognizer.encode_sync
    decode = WhisperRecognizer.decode_sync

    def encode_sync(self: WhisperRecognizer, pcm16: npt.NDArray[np.int16], rate: int) -> Any:
        return _Lazy(self, pcm16, rate)

    def decode_sync(
        self: WhisperRecognizer,
        encoded: Any,
        spec: Any,
        *,
        hotwords: bool,
        words: str | None = None,
    ) -> tuple[str, float]:
        prompt = words if words is not None else self.hotwords_for(spec) if hotwords else None
        key = f"{encoded.key}|{self._path}|{self._compute_type}|{self._beam}|{prompt!r}"
        with lock:
            found = cache.get(key)
        if found is None and other is not None:
            found = other(
                f"decode|{self._path}|{self._compute_type}|{self._beam}|decode-v1/score-v1|"
                f"{encoded.other_key}|{prompt!r}"
            )
            if found is not None:
                with lock:
                    cache[key] = found
        if found is not None:
            stats["hits"] += 1
            return found
        stats["misses"] += 1
        text, logprob = decode(
            self, encoded.encoded(encode), spec, hotwords=hotwords, words=words
        )
        with lock:
            cache[key] = (text, logprob)
            with path.open("a") as out:
                out.write(json.dumps({"k": key, "t": text, "p": logprob}) + "\n")
        return text, logprob

    WhisperRecognizer.encode_sync = encode_sync  # type: ignore[method-assign]
    WhisperRecognizer.decode_sync = decode_sync  # type: ignore[method-assign]
    if _no_support is not None:
        _cache_timings(folder, lock, stats, encode)
    return stats


def _cache_timings(folder: Path, lock: threading.Lock, stats: dict[str, int], encode: Any) -> None:
    """Patch `_no_support.word_timings` to read and write word timings under ``folder``."""
    timings_path = folder / "timings.jsonl"
    timings: dict[str, list[_no_support.WordTiming]] = {}
    if timings_path.exists():
        for line in timings_path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            timings[row["k"]] = [_no_support.WordTiming(*w) for w in row["w"]]
    align = _no_support.word_timings

    def word_timings(
        model: Any, model_lock: Any, encoded: Any, text: str, seconds: float
    ) -> list[_no_support.WordTiming]:
        key = f"{encoded.key}|{text}|{seconds:.3f}"
        with lock:
            found = timings.get(key)
        if found is not None:
            stats["hits"] += 1
            return found
        stats["misses"] += 1
        aligned = align(model, model_lock, encoded.encoded(encode), text, seconds)
        with lock:
            timings[key] = aligned
            with timings_path.open("a") as out:
                words = [[w.word, w.start, w.end] for w in aligned]
                out.write(json.dumps({"k": key, "w": words}) + "\n")
        return aligned

    _no_support.word_timings = word_timings  # type: ignore[assignment]
