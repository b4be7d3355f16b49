"""Who was speaking when a mixed frame was heard (sans I/O).

Two sources, both on the monotonic clock of the frames' arrival:

- **Seat levels.** A seated plain-RTP participant sends its RTP through the bot (``_relay``),
  and :meth:`SpeakerClock.level` records each of its packets' level, at the time the room mix
  carries it (its arrival plus AudioBridge's mixing delay, ``_media.MIX_LAG``), so a
  participant heard in the room mix at time t has a loud frame within ``window`` of t.
- **Talking events** (WebRTC participants, whose browsers send the audio-level extension).
  Janus decides after ``talk_lag`` seconds of audio (its ``audio_active_packets`` window), so
  :meth:`SpeakerClock.talking` back-dates each start and stop by that lag.

:meth:`SpeakerClock.speakers_at` joins them with a frame's arrival time.
"""

from __future__ import annotations

from collections import deque

__all__ = ["SpeakerClock"]


class SpeakerClock:
    """Speech intervals per participant, from seat levels and talking events.

    Args:
        window: Seconds either side of a frame's time in which a loud seat frame counts.
        talk_lag: Seconds by which Janus's talking decisions trail the speech.
        keep: Seconds of history kept.
    """

    def __init__(self, *, window: float = 0.045, talk_lag: float = 0.2, keep: float = 5.0) -> None:
        self.window = window
        self.talk_lag = talk_lag
        self.keep = keep
        self._loud: dict[str, deque[float]] = {}
        self._talks: dict[str, list[list[float]]] = {}  # [start, end (inf while talking)]

    def level(self, participant_id: str, at: float, loud: bool) -> None:
        """A seat frame of ``participant_id`` arrived at ``at``; ``loud`` when it had speech."""
        times = self._loud.setdefault(participant_id, deque())
        if loud:
            times.append(at)
        while times and times[0] < at - self.keep:
            times.popleft()

    def talking(self, participant_id: str, talking: bool, at: float) -> None:
        """A talking (``True``) or stopped-talking event for ``participant_id`` at ``at``."""
        spans = self._talks.setdefault(participant_id, [])
        moment = at - self.talk_lag
        if talking:
            if not spans or spans[-1][1] != float("inf"):
                spans.append([moment, float("inf")])
        elif spans and spans[-1][1] == float("inf"):
            spans[-1][1] = max(spans[-1][0], moment)
        while len(spans) > 1 and spans[0][1] < at - self.keep:
            spans.pop(0)

    def forget(self, participant_id: str) -> None:
        """Drop a participant who left."""
        self._loud.pop(participant_id, None)
        self._talks.pop(participant_id, None)

    def speakers_at(self, at: float) -> frozenset[str]:
        """The participants speaking at time ``at``."""
        found: set[str] = set()
        low, high = at - self.window, at + self.window
        for participant_id, times in self._loud.items():
            if any(low <= t <= high for t in reversed(times)):
                found.add(participant_id)
        for participant_id, spans in self._talks.items():
            if any(start <= at <= end for start, end in spans):
                found.add(participant_id)
        return frozenset(found)
