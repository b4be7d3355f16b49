"""Stopping the service without losing an answer: the gate every answer passes, and the drain.

Every answer and rejection (HTTP API, live feed, answer links: all through
:class:`~voice_hitl.service.OperatorDesk`) passes one :class:`AnswerGate`. A rolling restart
(``voice-hitl serve`` on SIGTERM or SIGINT, or the end of
:func:`~voice_hitl.service._serve.running_service`) closes the gate, so new answers are refused
with 503 ``shutting_down`` and ``Retry-After`` (nothing was tried: another instance, or this
one restarted, takes them), waits for the answers already in flight to end (taken, refused or
unknown, each told to its operator), and only then stops the server, ends the lifespan and
closes the journal. ``GET /v1/health`` says ``draining`` (503) from the moment the gate closes,
so a load balancer stops sending traffic.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from ._refusals import ShuttingDownError

__all__ = ["AnswerGate"]


class AnswerGate:
    """Counts the answers in flight and refuses new ones once :meth:`close` is called."""

    def __init__(self) -> None:
        self._open = True
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def closed(self) -> bool:
        """True once the service started stopping."""
        return not self._open

    @property
    def in_flight(self) -> int:
        """Answers and rejections under way."""
        return self._in_flight

    @contextlib.contextmanager
    def admit(self) -> Iterator[None]:
        """Let one answer through, counted until the block ends.

        Raises:
            ShuttingDownError: The gate is closed.
        """
        if not self._open:
            raise ShuttingDownError(
                "the service is stopping (a restart): the answer was not tried; send it again",
                retry_after=1,
            )
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    def close(self) -> None:
        """Refuse every answer from now on (idempotent)."""
        self._open = False

    async def drained(self) -> None:
        """Wait until no answer is in flight.

        Cancellation: safe.
        """
        await self._idle.wait()
