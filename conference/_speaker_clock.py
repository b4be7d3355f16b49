"""Who was speaking when a mixed frame was heard (sans I/O).

Two sources, both on one clock of the mix (the time a mixed frame carries the audio):

- **Seat levels.** A participant heard on their own stream (a Janus seat, an in-memory
  participant with a seat) has each of its frames' levels recorded with :meth:`SpeakerClock.
  level`, at the time the room mix carries it (on Janus its arrival plus AudioBridge's mixing
  delay, ``janus._media.MIX_LAG``), so a participant heard in the mix at time t has a loud
  frame within ``window`` of t.
- **Talking events** (participants without a stream of their own: WebRTC clients, whose
  browsers send the audio-level extension). Janus decides after ``talk_lag`` seconds of audio
  (its ``audio_active_packets`` window), so :meth:`SpeakerClock.talking` back-dates each start
  and stop by that lag.

:meth:`SpeakerClock.speakers_at` joins them with a frame's time (the mix's speaker labels);
:meth:`SpeakerClock.possibly_at` widens the talking spans by margins for the timing's
uncertainty (cutting the mix into unseated participants' streams, ``_mix_cut``).
"""

from __future__ import annotations

from collections import deque

__all__ = ["SpeakerClock"]

_OPEN = float("inf")


class SpeakerClock:
    """Speech intervals per participant, from seat levels and talking events.

    Args:
        window: Seconds either side of a frame's time in which a loud seat frame counts.
        talk_lag: Seconds by which talking decisions trail the speech.
        keep: Seconds of history kept.
    """

    def __init__(self, *, window: float = 0.045, talk_lag: float = 0.2, keep: float = 5.0) -> None:
        self.window = window
        self.talk_lag = talk_lag
        self.keep = keep
        self._loud: dict[str, deque[float]] = {}
        self._talks: dict[str, list[list[float]]] = {}  # [start, end (inf while talking)]

    def level(self, participant_id: str, at: float, loud: bool) -> None:
        """A seat frame of ``participant_id`` is in the mix at ``at``; ``loud`` when it had
        speech."""
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
            if not spans or spans[-1][1] != _OPEN:
                spans.append([moment, _OPEN])
        elif spans and spans[-1][1] == _OPEN:
            spans[-1][1] = max(spans[-1][0], moment)
        while len(spans) > 1 and spans[0][1] < at - self.keep:
            spans.pop(0)

    def forget(self, participant_id: str) -> None:
        """Drop a participant who left."""
        self._loud.pop(participant_id, None)
        self._talks.pop(participant_id, None)

    @property
    def talkers(self) -> frozenset[str]:
        """The participants known from talking events (who may have no stream of their own)."""
        return frozenset(self._talks)

    def talking_at(
        self, participant_id: str, at: float, lead: float = 0.0, trail: float = 0.0
    ) -> bool:
        """Whether ``participant_id``'s talking spans, widened by ``lead`` before and
        ``trail`` after, cover ``at``."""
        spans = self._talks.get(participant_id, ())
        return any(start - lead <= at <= end + trail for start, end in spans)

    def _loud_at(self, times: deque[float], at: float) -> bool:
        low, high = at - self.window, at + self.window
        return any(low <= t <= high for t in reversed(times))

    def speakers_at(self, at: float) -> frozenset[str]:
        """The participants speaking at time ``at``."""
        return self.possibly_at(at)

    def possibly_at(self, at: float, lead: float = 0.0, trail: float = 0.0) -> frozenset[str]:
        """The participants who may be speaking at ``at``: a loud seat frame within
        ``window``, or a talking span widened by ``lead`` before and ``trail`` after."""
        found = {pid for pid, times in self._loud.items() if self._loud_at(times, at)}
        found.update(pid for pid in self._talks if self.talking_at(pid, at, lead, trail))
        return frozenset(found)
