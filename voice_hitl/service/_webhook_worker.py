"""The webhook delivery core (the delivery process, :mod:`._webhook_child`, runs it).

:class:`DeliveryCore` owns the lanes (:mod:`._webhook_lane`): it takes one event for some
lanes at a time (:meth:`DeliveryCore.take`), mints each receiver's answer links, signs,
sends and retries, and reports back through ``emit``: a ``dead`` message per dead letter, and
``stats`` (what each lane settled, delivered and retried, and which events are done)
coalesced over ``flush`` seconds, so the service reads a few messages, not one per receiver.

:class:`~voice_hitl.service.Webhooks` runs the core in this module's process (the default)
or, with a test transport, on the service's own loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..board import BoardRequest
from ._webhook_frames import FrameError
from ._webhook_lane import Delivery, Lane, Retries
from ._webhook_wire import WebhookSubscription

if TYPE_CHECKING:
    import httpx

__all__ = ["DeliveryCore", "Emit", "LinkMaker"]

logger = logging.getLogger("voice_hitl.service.webhooks")

Emit = Callable[[dict[str, Any]], None]
LinkMaker = Callable[[BoardRequest, str], Mapping[str, str]]


def _request(wire: Mapping[str, Any]) -> BoardRequest:
    """Enough of the event's request for its links (id and answer spec)."""
    return BoardRequest(
        str(wire["id"]), str(wire.get("tool") or ""), wire.get("arguments") or {},
        str(wire.get("worker") or ""), 0.0, spec=wire.get("spec"),
    )


class DeliveryCore:
    """Every receiver's lane, and the reports back (module docstring)."""

    def __init__(
        self,
        subscriptions: list[WebhookSubscription],
        retries: Retries,
        *,
        concurrency: int,
        links: LinkMaker | None,
        emit: Emit,
        flush: float,
    ) -> None:
        self._lanes = [
            Lane(s, retries, concurrency=concurrency, bury=self._bury, settled=self._settled)
            for s in subscriptions
        ]
        self._index = {s.name: n for n, s in enumerate(subscriptions)}
        self._links = links
        self._emit = emit
        self._flush_after = flush
        self._left: dict[int, int] = {}  # event seq -> lanes not settled yet
        self._settles: dict[int, int] = {}
        self._done: list[int] = []
        self._reported = [(0, 0)] * len(self._lanes)
        self._flush_handle: asyncio.Handle | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    def start(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """Open every lane's connections."""
        for lane in self._lanes:
            lane.start(transport)

    def take(self, seq: int, event: dict[str, Any], lanes: list[int]) -> None:
        """Deliver ``event`` (number ``seq``) to the receivers numbered ``lanes``.

        Raises:
            FrameError: A lane number that is not a receiver's, or an event without an id.
        """
        if not isinstance(event.get("id"), str) or not isinstance(event.get("request"), dict):
            raise FrameError(f"an event without an id or a request: {str(event)[:80]}")
        if not lanes or any(not isinstance(n, int) or not 0 <= n < len(self._lanes) for n in lanes):
            raise FrameError(f"lane numbers {lanes!r} for {len(self._lanes)} receiver(s)")
        self._left[seq] = len(lanes)
        self._idle.clear()
        for n in lanes:
            self._lanes[n].put(Delivery(self._builder(event, n), seq, n))

    def _builder(self, base: dict[str, Any], n: int) -> Callable[[], dict[str, Any]]:
        links = self._links
        if links is None or base["type"] == "request.settled" or "links" in base:
            return lambda: base
        holder = self._lanes[n].subscription.name

        def build() -> dict[str, Any]:
            event = dict(base)
            made = links(_request(base["request"]), holder)
            if made:
                event["links"] = dict(made)
            return event

        return build

    def _bury(
        self, subscription: WebhookSubscription, event: Mapping[str, Any], tried: int, error: str
    ) -> None:
        lane = self._index[subscription.name]
        self._emit({"t": "dead", "l": lane, "ev": event, "n": tried, "err": error})

    def _settled(self, delivery: Delivery) -> None:
        n = delivery.lane
        self._settles[n] = self._settles.get(n, 0) + 1
        left = self._left.get(delivery.seq, 1) - 1
        if left > 0:
            self._left[delivery.seq] = left
        else:
            self._left.pop(delivery.seq, None)
            self._done.append(delivery.seq)
        if self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(self._flush_after, self.flush)

    def flush(self) -> None:
        """Report what settled since the last report (one ``stats`` message)."""
        self._flush_handle = None
        lanes: dict[str, list[int]] = {}
        for n, lane in enumerate(self._lanes):
            delivered, retries = self._reported[n]
            settled = self._settles.get(n, 0)
            if settled or lane.delivered != delivered or lane.retries != retries:
                lanes[str(n)] = [settled, lane.delivered - delivered, lane.retries - retries]
                self._reported[n] = (lane.delivered, lane.retries)
        if lanes or self._done:
            self._emit({"t": "stats", "l": lanes, "done": self._done})
        self._settles, self._done = {}, []
        if not self._left:
            self._idle.set()

    async def aclose(self, grace: float) -> int:
        """Deliver what is queued for up to ``grace`` seconds, report, close every lane;
        returns the events not settled.

        Cancellation: safe; the lanes are closed anyway.
        """
        try:
            async with asyncio.timeout(grace):
                await self._idle.wait()
        except TimeoutError:
            pass
        finally:
            if self._flush_handle is not None:
                self._flush_handle.cancel()
            self.flush()
            await asyncio.gather(*(lane.aclose() for lane in self._lanes))
        return len(self._left)
