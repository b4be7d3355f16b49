"""Energy endpointing: where an utterance starts and ends in a stream of caller audio."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..voice._provider_events import PCM16

__all__ = ["Pause", "SpeechStart", "StreamingEndpointer", "Utterance"]


@dataclass(frozen=True, slots=True)
class SpeechStart:
    """The caller started speaking."""


@dataclass(frozen=True, slots=True)
class Pause:
    """The caller paused (``pause_ms`` of quiet): the utterance may end here. ``audio`` is
    the utterance as it would be if it ended here (the quiet tail repeated to the full
    end-of-speech length); recognising it now has the answer ready when the end comes."""

    audio: PCM16 = field(repr=False)


@dataclass(frozen=True, slots=True)
class Utterance:
    """A finished utterance, with some audio before its start and after its end."""

    audio: PCM16 = field(repr=False)


class StreamingEndpointer:
    """Finds utterances by frame energy: speech above ``threshold_dbfs`` for
    ``start_ms``, ended by ``end_silence_ms`` below it.

    Args:
        sample_rate: Rate of the audio fed in.
        threshold_dbfs: Level that counts as speech (the fixtures' floor is -60 dBFS).
        start_ms: Speech needed before an utterance starts (ignores clicks).
        end_silence_ms: Quiet that ends an utterance.
        padding_ms: Audio kept before the start.
        pause_ms: Quiet after which a :class:`Pause` is reported (before the end).
    """

    def __init__(
        self,
        sample_rate: int,
        *,
        threshold_dbfs: float = -40.0,
        start_ms: int = 60,
        end_silence_ms: int = 500,
        padding_ms: int = 200,
        pause_ms: int = 150,
        max_utterance_s: float = 15.0,
    ) -> None:
        self.sample_rate = sample_rate
        self._block = sample_rate // 100  # 10 ms
        self._threshold = (32768.0 * 10 ** (threshold_dbfs / 20)) ** 2
        self._start_blocks = max(1, start_ms // 10)
        self._end_blocks = max(1, end_silence_ms // 10)
        self._pad_blocks = padding_ms // 10
        self._pause_blocks = max(1, min(pause_ms // 10, self._end_blocks - 1))
        self._max_blocks = int(max_utterance_s * 100)
        self._pending = np.zeros(0, dtype=np.int16)
        self._history: list[PCM16] = []
        self._utterance: list[PCM16] = []
        self._voiced_run = 0
        self._quiet_run = 0
        self._in_speech = False

    def feed(self, frame: PCM16) -> list[SpeechStart | Pause | Utterance]:
        """Add caller audio; returns what it found (in order)."""
        self._pending = np.concatenate([self._pending, frame])
        events: list[SpeechStart | Pause | Utterance] = []
        block = self._block
        while len(self._pending) >= block:
            chunk, self._pending = self._pending[:block], self._pending[block:]
            voiced = float(np.mean(chunk.astype(np.float64) ** 2)) > self._threshold
            event = self._step(chunk, voiced)
            if event is not None:
                events.append(event)
        return events

    def _as_if_ended(self) -> PCM16:
        """The utterance so far, its quiet tail repeated to the full end-of-speech length, so
        a recogniser hears what it would hear if the utterance ends here."""
        quiet = self._utterance[-self._pause_blocks :]
        missing = self._end_blocks - self._pause_blocks
        filler = [quiet[i % len(quiet)] for i in range(missing)]
        return np.concatenate(self._utterance + filler)

    def _step(self, chunk: PCM16, voiced: bool) -> SpeechStart | Pause | Utterance | None:
        if not self._in_speech:
            self._history.append(chunk)
            self._voiced_run = self._voiced_run + 1 if voiced else 0
            if self._voiced_run < self._start_blocks:
                del self._history[: -(self._pad_blocks + self._start_blocks)]
                return None
            self._in_speech = True
            self._utterance = self._history
            self._history = []
            self._quiet_run = 0
            return SpeechStart()
        self._utterance.append(chunk)
        self._quiet_run = 0 if voiced else self._quiet_run + 1
        if self._quiet_run == self._pause_blocks:
            return Pause(self._as_if_ended())
        if self._quiet_run < self._end_blocks and len(self._utterance) < self._max_blocks:
            return None
        audio = np.concatenate(self._utterance)
        self._utterance = []
        self._in_speech = False
        self._voiced_run = 0
        return Utterance(audio)
