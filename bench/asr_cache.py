"""A disk cache of Whisper's work for the benchmarks (``--cache FILE``, one SQLite file).

``install(path)`` patches `WhisperRecognizer` for the process (a benchmark helper; the library
itself never caches) so that what Whisper computed for an utterance is read back from an
SQLite file instead of computed again:

* decodings (``decode_sync``: text and mean log-probability, per prompt),
* alignment scores (``score_sync``, per scored text) and word spans (``word_spans_sync``),
* the word timings of the no-support rule (``_no_support.word_timings``, per reading).

The encoder (``encode_sync``) runs lazily, only when one of these misses. Every decision rule
above the decoder (understanding, mapping, verification, alignment margins, the challenge
rule, the risk tiers) runs as usual, so a rule change or a sweep over thresholds replays the
pipeline exactly and spends CPU only on what it has not seen (a new prompt, new audio). Times
(RTF, seconds per turn) then measure the replay, not the model; the figures are identical.

The key holds everything the result depends on: the audio Whisper was given (SHA-1 of the PCM
and its rate, after the gate's denoiser), the model path, compute type and beam, the prompt or
the text, and ``VERSION``, bumped when a cached function changes meaning. Parts of Whisper
missing from older code (a "before" measurement) are left unpatched.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np

from voice_hitl.speech.asr import WhisperRecognizer

try:
    from voice_hitl.speech.asr import _no_support
except ImportError:  # code from before the no-support rule (a "before" measurement)
    _no_support = None  # type: ignore[assignment]

__all__ = ["VERSION", "install", "stats", "summary"]

VERSION = "decode-v1/score-v1"
_KINDS = ("decode", "score", "spans", "timings")
_STATS = {f"{kind} {what}": 0 for kind in _KINDS for what in ("hits", "misses")} | {"encodes": 0}


class _Lazy:
    """Stands in for an encoding: the audio's key, and the encoder's output on first need."""

    def __init__(self, recognizer: WhisperRecognizer, pcm: Any, rate: int, real: Any) -> None:
        digest = hashlib.sha1(np.ascontiguousarray(pcm).tobytes())
        digest.update(str(rate).encode())
        self.key = digest.hexdigest()
        self.recognizer = recognizer
        self._args = (recognizer, pcm, rate)
        self._real = real
        self._value: Any = None

    def get(self) -> Any:
        if self._value is None:
            self._value = self._real(*self._args)
            _STATS["encodes"] += 1
        return self._value


def stats() -> dict[str, int]:
    """Hits and misses per kind of result so far, and how often the encoder ran."""
    return dict(_STATS)


def summary() -> str:
    """`stats` on one line, for a bench to print at its end."""
    return "asr cache: " + ", ".join(f"{k} {v}" for k, v in _STATS.items())


def install(path: Path) -> None:
    """Route `WhisperRecognizer`'s work through the SQLite cache at ``path`` (created if
    missing).

    Raises:
        ValueError: ``path`` is a folder (the JSON cache benches used to keep).
    """
    if path.is_dir():
        raise ValueError(f"--cache takes an SQLite file, and {path} is a folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
    db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT)")
    db.commit()
    lock = threading.Lock()

    def lookup(kind: str, key: str) -> Any:
        with lock:
            row = db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
            _STATS[f"{kind} {'misses' if row is None else 'hits'}"] += 1
        return None if row is None else json.loads(row[0])

    def store(key: str, value: Any) -> None:
        with lock:
            db.execute("INSERT OR REPLACE INTO cache VALUES (?, ?)", (key, json.dumps(value)))
            db.commit()

    def model_key(self: WhisperRecognizer) -> str:
        return f"{self._path}|{self._compute_type}|{self._beam}|{VERSION}"

    real_encode = WhisperRecognizer.encode_sync
    real_decode = WhisperRecognizer.decode_sync

    def encode_sync(self: WhisperRecognizer, pcm16: Any, sample_rate: int) -> Any:
        return _Lazy(self, pcm16, sample_rate, real_encode)

    def decode_sync(
        self: WhisperRecognizer,
        encoded: Any,
        spec: Any,
        *,
        hotwords: bool,
        words: str | None = None,
    ) -> tuple[str, float]:
        prompt = words if words is not None else self.hotwords_for(spec) if hotwords else None
        key = f"decode|{model_key(self)}|{encoded.key}|{prompt!r}"
        hit = lookup("decode", key)
        if hit is not None:
            return str(hit[0]), float(hit[1])
        text, logprob = real_decode(self, encoded.get(), spec, hotwords=hotwords, words=words)
        store(key, [text, logprob])
        return text, logprob

    WhisperRecognizer.encode_sync = encode_sync  # type: ignore[method-assign]
    WhisperRecognizer.decode_sync = decode_sync  # type: ignore[method-assign]
    if hasattr(WhisperRecognizer, "score_sync"):
        _cache_scores(lookup, store, model_key)
    if _no_support is not None:
        _cache_timings(lookup, store, model_key)


def _cache_scores(lookup: Any, store: Any, model_key: Any) -> None:
    """Patch ``score_sync`` and ``word_spans_sync`` (the alignment of `_align`)."""
    real_score = WhisperRecognizer.score_sync
    real_spans = WhisperRecognizer.word_spans_sync

    def score_sync(
        self: WhisperRecognizer, encoded: Any, texts: list[str]
    ) -> list[tuple[float, int]]:
        out: list[tuple[float, int] | None] = []
        missing: list[str] = []
        for text in texts:
            hit = lookup("score", f"score|{model_key(self)}|{encoded.key}|{text!r}")
            out.append(None if hit is None else (float(hit[0]), int(hit[1])))
            if hit is None:
                missing.append(text)
        if missing:
            fresh = dict(zip(missing, real_score(self, encoded.get(), missing), strict=True))
            for text, (total, count) in fresh.items():
                store(f"score|{model_key(self)}|{encoded.key}|{text!r}", [total, count])
            out = [o if o is not None else fresh[t] for o, t in zip(out, texts, strict=True)]
        return [o for o in out if o is not None]

    def word_spans_sync(
        self: WhisperRecognizer, encoded: Any, text: str, num_frames: int
    ) -> list[tuple[str, float, float]]:
        key = f"spans|{model_key(self)}|{encoded.key}|{num_frames}|{text!r}"
        hit = lookup("spans", key)
        if hit is not None:
            return [(str(w), float(a), float(b)) for w, a, b in hit]
        spans = real_spans(self, encoded.get(), text, num_frames)
        store(key, spans)
        return spans

    WhisperRecognizer.score_sync = score_sync  # type: ignore[method-assign]
    WhisperRecognizer.word_spans_sync = word_spans_sync  # type: ignore[method-assign]


def _cache_timings(lookup: Any, store: Any, model_key: Any) -> None:
    """Patch `_no_support.word_timings` (the no-support rule's word timings)."""
    real_timings = _no_support.word_timings

    def word_timings(
        model: Any, model_lock: Any, encoded: Any, text: str, seconds: float
    ) -> list[_no_support.WordTiming]:
        key = f"timings|{model_key(encoded.recognizer)}|{encoded.key}|{seconds:.3f}|{text!r}"
        hit = lookup("timings", key)
        if hit is not None:
            return [_no_support.WordTiming(str(w), float(a), float(b)) for w, a, b in hit]
        timings = real_timings(model, model_lock, encoded.get(), text, seconds)
        store(key, [[t.word, t.start, t.end] for t in timings])
        return timings

    _no_support.word_timings = word_timings  # type: ignore[assignment]
