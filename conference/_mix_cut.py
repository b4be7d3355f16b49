"""Streams for participants without one of their own, cut from the room mix by time (sans I/O).

A participant who joins a room without a stream the bot can hear on its own (a WebRTC client
of a Janus AudioBridge, an unseated in-memory participant) is heard only in the mix. Their
conferencing server still says when they talk (AudioBridge's talking events, computed from
each participant's own audio-level extension), and the bot knows when every seated
participant is loud on their own stream: :class:`MixCut` hands each such participant the mix
while they are the only one who may be speaking, as :class:`~conference.SpeakerFrame` values
of their own, each marked with how sure the cut is that the audio is theirs alone
(``SpeakerFrame.attribution``, which per-speaker hearing carries into ``Heard.attribution``).

For each frame of the mix, for each participant P known from talking events:

- P's talking span, widened by ``lead`` before and ``trail`` after (the talking decision's lag
  and the mix delay are known only roughly), does not cover it: P's stream gets silence.
- Nobody else may be speaking then (another's widened span, a seat loud within the clock's
  window): P's stream gets the mix, attribution :data:`CLEAN` (enough for a high-risk yes).
- Someone else may be speaking and the frame is in P's span proper: P's stream gets the mix,
  attribution :data:`AMBIGUOUS` (below ``EvidencePolicy.min_attribution``: a high-risk yes
  said over someone else is re-asked, never counted; the utterance is not cut apart).
- Someone else may be speaking and the frame is only in P's widening: P's stream gets silence
  (it is more likely the other person's speech than P's).

A line that reports no levels (a plain-RTP joiner without the audio-level extension; Janus
1.1.2 reads the extension only from WebRTC participants) is never flagged talking, so its
speech could fall inside someone's span unseen. :class:`MixCut` notices such a talker when
it speaks alone: ``unaccounted_s`` seconds of voiced mix in which nobody may be speaking.
From then on every cut is attributed at most :data:`UNACCOUNTED` (logged once, with the
reason in :attr:`MixCut.unaccounted`): utterances cut from the mix still reach the provider
and low-risk answers, but no high-risk vote is counted from them.

Decisions wait ``hold`` seconds, so that talking events (which trail the speech) are in. The
backends cut (and watch for unaccounted talkers) only while a per-speaker lane is open.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from providers.base import PCM16

from ._backend import SpeakerFrame
from ._speaker_clock import SpeakerClock

__all__ = ["AMBIGUOUS", "CLEAN", "UNACCOUNTED", "MixCut"]

logger = logging.getLogger("conference.mix_cut")

CLEAN = 0.95
"""Attribution of mix audio cut while only its speaker may be speaking (under 1.0: it is
timing, not a stream of their own; over the 0.9 a high-risk yes needs)."""
AMBIGUOUS = 0.5
"""Attribution of mix audio cut while someone else may be speaking too."""
UNACCOUNTED = 0.5
"""The most any cut is attributed once the room has a talker no event or seat accounts for."""


@dataclass(slots=True)
class _Held:
    samples: PCM16 = field(repr=False)
    at: float


class MixCut:
    """Cuts the room mix into a stream per participant known from talking events.

    Args:
        clock: Who spoke when (talking spans and seat levels, on the mix's clock).
        rate: The mix's sample rate.
        seated: Whether a participant has a stream of their own (never cut for them).
        lead: Seconds by which talking spans are widened before their start. Janus's starts,
            back-dated by the clock's ``talk_lag``, came 0.15-0.22 s before the mix carried
            the voice (a WebRTC participant on loopback).
        trail: Seconds by which talking spans are widened after their end (Janus's back-dated
            ends came from 0.12 s before to 0.05 s after the mix's).
        hold: Seconds a mixed frame waits before it is cut (talking events trail speech).
        shift: Seconds subtracted from a mixed frame's time to stamp its cuts (the mix's
            delay, so cut frames share the seated streams' clock).
        voiced_dbfs: The RMS level of a mixed frame that counts as speech.
        unaccounted_s: Seconds of voiced mix with nobody possibly speaking that reveal a
            talker without levels.

    Raises:
        ValueError: A number is out of range.
    """

    def __init__(
        self,
        clock: SpeakerClock,
        rate: int,
        *,
        seated: Callable[[str], bool] = lambda participant_id: False,
        lead: float = 0.15,
        trail: float = 0.3,
        hold: float = 0.6,
        shift: float = 0.0,
        voiced_dbfs: float = -40.0,
        unaccounted_s: float = 0.3,
    ) -> None:
        if rate < 8_000:
            raise ValueError(f"rate must be at least 8000, got {rate}")
        seconds = {"lead": lead, "trail": trail, "hold": hold, "unaccounted_s": unaccounted_s}
        for name, value in seconds.items():
            if not 0.0 <= value <= 10.0:
                raise ValueError(f"{name} must be in 0..10 seconds, got {value}")
        self.clock = clock
        self.rate = rate
        self.lead = lead
        self.trail = trail
        self.hold = hold
        self.shift = shift
        self._seated = seated
        self._voiced = (32768.0 * 10 ** (voiced_dbfs / 20)) ** 2
        self.unaccounted_s = unaccounted_s
        self._held: deque[_Held] = deque()
        self._run = 0.0
        self.unaccounted: str | None = None
        """Why cuts are attributed at most :data:`UNACCOUNTED` (None: they are not)."""

    def push(self, samples: PCM16, at: float) -> list[SpeakerFrame]:
        """One mixed frame, in the mix at ``at``; returns the cuts of frames now decided."""
        self._held.append(_Held(samples, at))
        cuts: list[SpeakerFrame] = []
        while self._held and self._held[0].at <= at - self.hold:
            cuts.extend(self._cut(self._held.popleft()))
        return cuts

    def forget(self, participant_id: str) -> None:
        """A participant left: no more cuts for them."""
        self.clock.forget(participant_id)

    def _cut(self, frame: _Held) -> list[SpeakerFrame]:
        at = frame.at
        near = self.clock.possibly_at(at, self.lead, self.trail)
        self._account(frame, near)
        cuts: list[SpeakerFrame] = []
        for pid in sorted(self.clock.talkers):
            if self._seated(pid):
                continue
            attribution = self._share(pid, at, near)
            if attribution is None:  # not P's: silence on P's stream
                cuts.append(SpeakerFrame(pid, np.zeros_like(frame.samples), at - self.shift))
            else:
                cuts.append(SpeakerFrame(pid, frame.samples, at - self.shift, attribution))
        return cuts

    def _share(self, pid: str, at: float, near: frozenset[str]) -> float | None:
        """How surely the mix at ``at`` is ``pid``'s (None: it goes to them as silence)."""
        if pid not in near:
            return None
        ceiling = CLEAN if self.unaccounted is None else UNACCOUNTED
        if near == {pid}:
            return ceiling
        if self.clock.talking_at(pid, at):
            return min(ceiling, AMBIGUOUS)
        return None

    def _account(self, frame: _Held, near: frozenset[str]) -> None:
        """Notice voiced mix that nobody accounts for (a line without levels)."""
        x = frame.samples.astype(np.float64)
        voiced = len(x) > 0 and float(np.mean(x * x)) > self._voiced
        if not voiced or near:
            self._run = 0.0
            return
        self._run += len(frame.samples) / self.rate
        if self._run >= self.unaccounted_s and self.unaccounted is None:
            self.unaccounted = (
                f"{self._run:.1f} s of speech in the mix (at {frame.at:.2f} s) while nobody "
                "was flagged talking and no seat was loud: a line without audio levels is "
                "talking"
            )
            logger.warning(
                "%s; utterances cut from the mix are attributed at most %.2f from now on "
                "(no high-risk vote is counted from them)",
                self.unaccounted,
                UNACCOUNTED,
            )
