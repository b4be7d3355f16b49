"""A disk cache of Whisper's decodings and alignment scores, for benchmark sweeps.

``install(path)`` wraps `WhisperRecognizer`'s ``encode_sync``, ``decode_sync`` and
``score_sync`` so that a result already computed for the same audio (SHA-1 of the PCM the
recogniser is given, after the gate's denoiser), the same model, beam and prompt, or the same
scored text, is read from an SQLite file instead of decoded again. The encoder runs only when
some result is missing. Every decision rule above the decoder (mapping, verification,
alignment margins, the challenge rule, the risk tiers) runs as usual, so a sweep over
thresholds replays the pipeline exactly without spending CPU on the model.

The key holds everything the result depends on; ``VERSION`` is bumped when the scoring
function changes meaning.
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

__all__ = ["VERSION", "install", "stats"]

VERSION = "decode-v1/score-v1"
_STATS = {"hits": 0, "misses": 0}


class _Lazy:
    """The encoder's output for one utterance, computed on first need."""

    def __init__(self, recognizer: WhisperRecognizer, pcm: Any, rate: int, real: Any) -> None:
        digest = hashlib.sha1(np.ascontiguousarray(pcm).tobytes())
        digest.update(str(rate).encode())
        self.key = digest.hexdigest()
        self._args = (recognizer, pcm, rate)
        self._real = real
        self._value: Any = None

    def get(self) -> Any:
        if self._value is None:
            self._value = self._real(*self._args)
        return self._value


def stats() -> dict[str, int]:
    """Cache hits and misses so far."""
    return dict(_STATS)


def install(path: Path) -> None:
    """Route `WhisperRecognizer`'s decoding through the cache at ``path``."""
    db = sqlite3.connect(str(path), check_same_thread=False, timeout=60)
    db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT)")
    db.commit()
    lock = threading.Lock()
    real_encode = WhisperRecognizer.encode_sync
    real_decode = WhisperRecognizer.decode_sync
    real_score = WhisperRecognizer.score_sync
    real_spans = WhisperRecognizer.word_spans_sync

    def lookup(key: str) -> Any:
        with lock:
            row = db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            _STATS["misses"] += 1
            return None
        _STATS["hits"] += 1
        return json.loads(row[0])

    def store(key: str, value: Any) -> None:
        with lock:
            db.execute("INSERT OR REPLACE INTO cache VALUES (?, ?)", (key, json.dumps(value)))
            db.commit()

    def model_key(self: WhisperRecognizer) -> str:
        return f"{self._path}|{self._compute_type}|{self._beam}|{VERSION}"

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
        hit = lookup(key)
        if hit is not None:
            return str(hit[0]), float(hit[1])
        text, logprob = real_decode(self, encoded.get(), spec, hotwords=hotwords, words=words)
        store(key, [text, logprob])
        return text, logprob

    def score_sync(
        self: WhisperRecognizer, encoded: Any, texts: list[str]
    ) -> list[tuple[float, int]]:
        out: list[tuple[float, int] | None] = []
        missing: list[str] = []
        for text in texts:
            hit = lookup(f"score|{model_key(self)}|{encoded.key}|{text!r}")
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
        hit = lookup(key)
        if hit is not None:
            return [(str(w), float(a), float(b)) for w, a, b in hit]
        spans = real_spans(self, encoded.get(), text, num_frames)
        store(key, spans)
        return spans

    WhisperRecognizer.word_spans_sync = word_spans_sync  # type: ignore[method-assign]
    WhisperRecognizer.encode_sync = encode_sync  # type: ignore[method-assign,assignment]
    WhisperRecognizer.decode_sync = decode_sync  # type: ignore[method-assign]
    WhisperRecognizer.score_sync = score_sync  # type: ignore[method-assign]
