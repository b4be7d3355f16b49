"""`TurnAudio`: audio evidence for what a provider transcribed (issue 32, item 3).

A provider that transcribes the caller itself (OpenAI, Gemini) sends only text: no confidence
and no audio figures, so a high-risk yes on that path had nothing but the words. The voice line
forwards the caller's audio to the provider, so it can measure that audio itself: this tap
keeps the caller audio of the current turn (everything since the previous final transcription,
at most ``max_seconds``), and when the provider's final user transcription arrives without
figures, the speech gate (`SpeechGate`: Silero VAD, the SNR estimate, clipping) measures that
turn in a worker thread and the transcription reaches the inbox with its `AudioQuality`
attached. The non-speech part of the turn (the caller listening to the question) gives the
noise floor.

Where the gate cannot run (the ``speech`` extra is not installed) or no audio was forwarded,
the transcription goes on unmeasured, and `EvidencePolicy.unmeasured` decides.

Measurement tasks belong to the tap; :meth:`TurnAudio.close` cancels them (the inbox calls it).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..responder._call_line import Heard, Inbox, feed_provider_event
from ._provider_events import PCM16, ProviderEvent, TranscriptionEvent

if TYPE_CHECKING:
    from ..speech import AudioQuality
    from ..speech.asr import SpeechGate

__all__ = ["TurnAudio"]

logger = logging.getLogger("voice_hitl.turn_audio")

_GATE: SpeechGate | None = None


def _shared_gate() -> SpeechGate:
    """One gate for every line (it serialises its VAD behind a lock)."""
    global _GATE
    if _GATE is None:
        from ..speech.asr._quality import SpeechGate

        _GATE = SpeechGate()
    return _GATE


class TurnAudio:
    """Keeps the caller audio of the current turn and measures it for the provider's
    transcription (see the module docstring).

    Args:
        inbox: where the transcriptions (and the line's other provider events) go.
        sample_rate: the rate of the caller frames.
        gate: the speech gate (default: one shared `SpeechGate`).
        max_seconds: how much of a turn is kept (the most recent part).
    """

    def __init__(
        self,
        inbox: Inbox,
        sample_rate: int,
        gate: SpeechGate | None = None,
        *,
        max_seconds: float = 20.0,
    ) -> None:
        if not max_seconds > 0:
            raise ValueError(f"max_seconds must be > 0, got {max_seconds!r}")
        self._inbox = inbox
        self._rate = sample_rate
        self._gate = gate
        self._max = int(max_seconds * sample_rate)
        self._frames: deque[PCM16] = deque()
        self._held = 0
        self._tasks: set[asyncio.Task[None]] = set()
        inbox.on_close(self.close)

    def __call__(self, frame: PCM16) -> None:
        """An audio tap: keep ``frame`` (the oldest audio goes past ``max_seconds``)."""
        self._frames.append(frame)
        self._held += len(frame)
        while self._frames and self._held - len(self._frames[0]) >= self._max:
            self._held -= len(self._frames.popleft())

    def feed(self, event: ProviderEvent) -> None:
        """A provider event listener: a final user transcription without audio figures is
        measured over the turn's audio first; everything else goes to the inbox as is."""
        if not (
            isinstance(event, TranscriptionEvent)
            and event.role == "user"
            and event.final
            and event.quality is None
        ):
            feed_provider_event(self._inbox, event)
            return
        audio = np.concatenate(list(self._frames)) if self._frames else None
        self._frames.clear()
        self._held = 0
        if audio is None or len(audio) < self._rate // 10:
            feed_provider_event(self._inbox, event)  # nothing forwarded: unmeasured
            return
        task = asyncio.get_running_loop().create_task(self._measured(event, audio))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _measured(self, event: TranscriptionEvent, audio: PCM16) -> None:
        quality: AudioQuality | None = None
        try:
            gate = self._gate or _shared_gate()
            quality = await asyncio.to_thread(gate.measure, audio, self._rate)
        except ModuleNotFoundError as exc:
            logger.info("caller audio not measured (%s); the transcription goes unmeasured", exc)
        except Exception:
            logger.exception("measuring the caller audio failed; the transcription is unmeasured")
        self._inbox.offer(Heard.of(replace(event, quality=quality)))

    def close(self) -> None:
        """Cancel measurements still running (their transcriptions are not delivered)."""
        for task in list(self._tasks):
            task.cancel()
