"""Which RTP a socket takes: only its latched source and SSRC (sans I/O).

A socket facing Janus expects Janus's address (from the join reply); a socket facing a
participant latches the first address that sends it valid RTP. Either way the SSRC of the
first accepted packet is latched too. Everything else is counted and dropped: a spoofed or
stray packet never reaches the audio, and never names anyone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

__all__ = ["RtpLatch", "RtpStats"]

logger = logging.getLogger("conference.janus")

Address = tuple[str, int]


@dataclass(slots=True)
class RtpStats:
    """What the bot's RTP sockets received, in total.

    Attributes:
        received: Packets accepted.
        malformed: Datagrams that were not RTP the socket expects (bad header, payload type).
        foreign: RTP from a source or SSRC other than the one latched, dropped.
    """

    received: int = 0
    malformed: int = 0
    foreign: int = 0


class RtpLatch:
    """Accepts datagrams from one source and one SSRC.

    Args:
        stats: Where drops are counted (shared by a backend's sockets).
        what: What the socket carries, for the log ("the room mix", "a seat").
        expected: The only address accepted (None: latch the first valid sender's).
    """

    def __init__(self, stats: RtpStats, what: str, expected: Address | None = None) -> None:
        self.stats = stats
        self.what = what
        self.source: Address | None = expected
        self.ssrc: int | None = None
        self._warned = False

    def expect(self, source: Address) -> None:
        """Accept only ``source`` from now on (a new SSRC is latched from it)."""
        self.source = source
        self.ssrc = None

    def accepts(self, source: Address, ssrc: int) -> bool:
        """True when a valid RTP packet from ``source`` with ``ssrc`` is the latched
        stream's (latching it when nothing is latched yet); else counts it as foreign."""
        if self.source is None:
            self.source = source
        if self.source == source and self.ssrc in (None, ssrc):
            self.ssrc = ssrc
            return True
        self.stats.foreign += 1
        if not self._warned:  # once per socket: a flood must not flood the log
            self._warned = True
            logger.warning(
                "janus rtp: dropping packets on %s from another source or SSRC "
                "(counted in stats.foreign)",
                self.what,
            )
        return False
