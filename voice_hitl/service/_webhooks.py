""":class:`Webhooks`: the service POSTs each request's events to the subscribed URLs.

The board's events reach :meth:`Webhooks.offer` from the service's feed hub (a listener that
must not block): it builds the event's common part once, counts it on the lane of each
subscription that wants it, and hands it, once, to the **delivery process**
(:mod:`._webhook_process`, started and stopped by the service's lifespan): that process mints
each receiver's answer links, signs, sends and retries, on its own interpreter and at a lower
priority, so 100 receivers cost the service's loop one small message per event. Every
subscription has its own lane there (:mod:`._webhook_lane`: its own queue, at most
``max_in_flight`` deliveries at once, its own connections), so a slow or dead receiver never
slows a call, the feed, or another receiver. With a test ``transport`` (or a ``links``
callable other than :meth:`AnswerLinks.for_request`, which another process cannot call) the
same delivery core runs on the service's own loop instead.

If the delivery process dies (or sends a message that is not the protocol's), it is logged,
every event not yet confirmed becomes a dead letter with the reason, and a new process starts
after a backoff; events offered while none runs are dead letters at once
(:attr:`Webhooks.unsent`). Closing flushes for up to ``close_timeout`` seconds, then ends the
process.

Delivery is at least once: an attempt that gets no 2xx (a timeout, a refused connection, a 5xx,
408, 425 or 429) is retried after a backoff that doubles from ``backoff`` up to ``max_backoff``
seconds (with jitter), ``attempts`` times in all; the event keeps its idempotency ``id`` and
is signed afresh with each attempt's timestamp. Another 4xx is final at once. An event that
is not delivered becomes a **dead letter** (kept in this process, the newest
``dead_letter_limit``), which ``voice-hitl webhooks dead`` shows and ``... retry`` sends again
(same ``id``). An event that finds its receiver's lane full (``max_in_flight`` being
delivered and ``queue_size`` waiting; ``queue_size`` before the service starts) is a dead
letter at once, counted and logged (:attr:`Webhooks.overflowed`). Dead letters past
``dead_letter_limit`` are dropped oldest first, counted in :attr:`Webhooks.dead_dropped` and logged.

Escalations are not on the board: a worker's ``HumanInputHandler`` tells them to its observers.
:meth:`Webhooks.observer` is such an observer, for a dispatcher in the worker's process.
"""

from __future__ import annotations

import asyncio
import base64
import enum
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import astuple
from typing import TYPE_CHECKING, Any

from ..board import (
    BoardEscalated,
    BoardEvent,
    BoardOpened,
    BoardRequest,
    request_from_pending,
)
from ..human._lifecycle import RequestEvent, RequestNoted, RequestOpened, RequestSettled
from ..human._pending import PendingInput

if TYPE_CHECKING:
    import httpx

from ._links import AnswerLinks as _Links
from ._webhook_dead import FULL, DeadLetter, DeadLetters
from ._webhook_frames import FrameError
from ._webhook_gauge import Gauge
from ._webhook_lane import Retries
from ._webhook_process import DeliveryProcess
from ._webhook_wire import EventType, WebhookSubscription, webhook_event
from ._webhook_worker import DeliveryCore

__all__ = ["DeadLetter", "LinkMaker", "Webhooks"]

logger = logging.getLogger("voice_hitl.service.webhooks")

LinkMaker = Callable[[BoardRequest, str], Mapping[str, str]]
"""``(request, holder) -> {"yes": url, ...}``: the answer links an event carries."""



class _State(enum.Enum):
    UNOPENED = "unopened"
    OPEN = "open"
    CLOSED = "closed"


class Webhooks:
    """Signed, retried, bounded webhook delivery to ``subscriptions`` (module docstring).

    Args:
        subscriptions: The receivers.
        links: Makes the answer links ``request.opened`` / ``request.escalated`` events carry.
        attempts: Tries per event and receiver before it is a dead letter (at least 1).
        backoff: Seconds before the first retry; doubled each time, up to ``max_backoff``.
        timeout: Seconds one attempt may take.
        queue_size: Events waiting for one receiver (beyond those being delivered) before
            its new ones are dead letters at once.
        max_in_flight: Deliveries (attempts and their backoffs) under way at once, per
            receiver (each receiver has its own; one that hangs holds only its own).
        dead_letter_limit: Dead letters kept (the oldest go first).
        transport: An httpx transport (tests): delivery then runs on the service's loop.
        close_timeout: Seconds :meth:`aclose` lets queued events go out before it stops.
        nice: How much lower the delivery process's priority is (``os.nice``).
    """

    def __init__(
        self,
        subscriptions: Sequence[WebhookSubscription],
        *,
        links: LinkMaker | None = None,
        attempts: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        timeout: float = 5.0,
        queue_size: int = 10_000,
        max_in_flight: int = 16,
        dead_letter_limit: int = 1000,
        transport: httpx.AsyncBaseTransport | None = None,
        close_timeout: float = 5.0,
        nice: int = 10,
    ) -> None:
        if attempts < 1 or backoff < 0 or max_backoff < backoff or timeout <= 0:
            raise ValueError(
                "attempts must be >= 1, backoff >= 0, max_backoff >= backoff and timeout > 0"
            )
        if queue_size < 1 or max_in_flight < 1:
            raise ValueError("queue_size and max_in_flight must be at least 1")
        if close_timeout < 0 or nice < 0:
            raise ValueError("close_timeout and nice must not be negative")
        self.subscriptions = list(subscriptions)
        names = [s.name for s in self.subscriptions]
        if len(set(names)) != len(names):
            raise ValueError("each subscription needs its own name (each has its own lane)")
        self._links = links
        self._retries = Retries(attempts, backoff, max_backoff, timeout)
        self._gauges = [Gauge(name) for name in names]
        self._index = {name: n for n, name in enumerate(names)}
        self._queue_size, self._in_flight = queue_size, max_in_flight
        self._close_timeout, self._nice = close_timeout, nice
        self._dead = DeadLetters(dead_letter_limit)
        self._transport = transport
        self._seq = 0
        self._sent: dict[int, tuple[dict[str, Any], list[int]]] = {}  # not yet confirmed
        self._early: list[dict[str, Any]] = []  # offered before start
        self._core: DeliveryCore | None = None
        self.process: DeliveryProcess | None = None
        """The delivery process (None before :meth:`start`, or when delivery runs here)."""
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._state = _State.UNOPENED
        self._recent: OrderedDict[str, PendingInput] = OrderedDict()
        self.unsent = 0
        """Events made dead letters because no delivery process was running (restarting, or
        given up after failing twice), or lost unconfirmed when one failed."""

    @property
    def dead_dropped(self) -> int:
        """Dead letters dropped (oldest first) past ``dead_letter_limit``."""
        return self._dead.dropped

    @property
    def delivered(self) -> int:
        """Events delivered (a 2xx), all receivers."""
        return sum(g.delivered for g in self._gauges)

    @property
    def retries(self) -> int:
        """Attempts after a first one failed, all receivers."""
        return sum(g.retries for g in self._gauges)

    @property
    def overflowed(self) -> int:
        """Events refused by a full receiver queue (each one a dead letter), all receivers."""
        return sum(g.overflowed for g in self._gauges)

    def lanes(self) -> dict[str, dict[str, int]]:
        """Per receiver: ``waiting``, ``delivered``, ``retries``, ``overflowed``."""
        return {
            g.name: {
                "waiting": g.waiting,
                "delivered": g.delivered,
                "retries": g.retries,
                "overflowed": g.overflowed,
            }
            for g in self._gauges
        }

    # ---- lifecycle -----------------------------------------------------------------------

    def _in_process(self) -> bool:
        """True when delivery can run in its own process (no test transport, and links the
        process can mint itself)."""
        if self._transport is not None:
            return False
        return self._links is None or isinstance(getattr(self._links, "__self__", None), _Links)

    async def start(self) -> None:
        """Start delivering (the service's lifespan calls this): start the delivery process.

        Raises:
            RuntimeError: Started before, or closed, or the delivery process did not start.

        Cancellation: safe; a process half started is killed.
        """
        if self._state is not _State.UNOPENED:
            raise RuntimeError(f"webhooks cannot start: they are {self._state.value}")
        self._state = _State.OPEN
        if self._in_process():
            links = getattr(self._links, "__self__", None)
            config = {
                "subs": [[s.name, s.url, s.secret] for s in self.subscriptions],
                "retries": list(astuple(self._retries)),
                "concurrency": self._in_flight,
                "links": None
                if links is None
                else {
                    "key": base64.b64encode(links._key).decode(),
                    "base_url": links.base_url,
                    "ttl": links.ttl,
                },
                "flush": 0.01,
                "nice": self._nice,
                "grace": self._close_timeout,
            }
            self.process = DeliveryProcess(config, on_report=self._report, on_lost=self._lost)
            await self.process.start()
        else:
            self._core = DeliveryCore(
                self.subscriptions,
                self._retries,
                concurrency=self._in_flight,
                links=self._links,
                emit=self._report,
                flush=0.0,
            )
            self._core.start(self._transport)
        early, self._early = self._early, []
        for message in early:
            self._send(message)

    async def aclose(self) -> None:
        """Stop delivering: what is queued has ``close_timeout`` seconds to go out, the rest
        is dropped with a warning, and the delivery process ends (idempotent).

        Cancellation: safe; the process is killed and the connections closed anyway.
        """
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        if self.process is not None:
            await self.process.aclose(self._close_timeout)
        elif self._core is not None:
            await self._core.aclose(self._close_timeout)
        if self._busy:
            logger.warning("webhooks closed with %d event(s) not delivered", self._busy)

    async def drain(self) -> None:
        """Wait until every event offered so far is delivered or a dead letter.

        Cancellation: safe.
        """
        await self._idle.wait()

    # ---- intake (never blocks) -----------------------------------------------------------

    def board_listener(self, event: BoardEvent) -> None:
        """A feed-hub listener: ``request.opened`` / ``request.escalated`` /
        ``request.settled`` for board events (an escalation reaches the board through the
        worker's :class:`~voice_hitl.board.BoardBridge`)."""
        if isinstance(event, BoardOpened):
            self.offer("request.opened", event.request)
        elif isinstance(event, BoardEscalated):
            self.offer("request.escalated", event.request, escalation=event.escalation)
        else:
            self.offer("request.settled", event.request)

    def observer(self, worker: str = "local") -> Callable[[RequestEvent], None]:
        """A request observer (``handler.add_observer``) that sends ``request.escalated``
        when the handler notes an escalation (``escalate_to`` policies)."""

        def observe(event: RequestEvent) -> None:
            if isinstance(event, RequestOpened):
                self._recent[event.pending_id] = event.source  # the view is built if needed
                while len(self._recent) > 10_000:
                    self._recent.popitem(last=False)
            elif isinstance(event, RequestSettled):
                self._recent.pop(event.pending_id, None)
            elif isinstance(event, RequestNoted) and event.note == "escalated":
                source = self._recent.get(event.pending_id)
                if source is not None:
                    request = request_from_pending(source.to_event(), worker)
                    self.offer("request.escalated", request, escalation=event.data)

        return observe

    def offer(
        self,
        event_type: EventType,
        request: BoardRequest,
        *,
        escalation: Mapping[str, Any] | None = None,
    ) -> bool:
        """Queue ``event_type`` for every subscription that wants it; never waits.

        Returns:
            False when a receiver's queue was full, or no delivery process was running
            (those events are dead letters at once).
        """
        if self._state is _State.CLOSED:
            return False
        lanes = [n for n, s in enumerate(self.subscriptions) if s.wants(event_type, request)]
        if not lanes:
            return True
        event = webhook_event(event_type, request, time.time(), escalation=escalation)
        return self._enqueue(event, lanes)

    def _enqueue(self, event: dict[str, Any], lanes: list[int]) -> bool:
        room = self._queue_size + (self._in_flight if self._state is _State.OPEN else 0)
        taken: list[int] = []
        for n in lanes:
            gauge = self._gauges[n]
            if gauge.waiting >= room:
                self._overflow(gauge, event)
            else:
                gauge.waiting += 1
                taken.append(n)
        if taken:
            self._seq += 1
            self._sent[self._seq] = (event, taken)
            self._busy += len(taken)
            self._idle.clear()
            message = {"t": "e", "s": self._seq, "ev": event, "l": taken}
            if self._state is _State.UNOPENED:
                self._early.append(message)
            elif not self._send(message):
                return False
        return len(taken) == len(lanes)

    def _send(self, message: dict[str, Any]) -> bool:
        """Hand an event to the delivery core; False (and dead letters) when none runs."""
        if self._core is not None:
            self._core.take(message["s"], message["ev"], message["l"])
            return True
        if self.process is not None and self.process.up:
            self.process.send(message)
            return True
        self._lost("was not running", message["s"])
        return False

    def _overflow(self, gauge: Gauge, event: dict[str, Any]) -> None:
        gauge.overflow()
        self._bury(gauge.name, event, 0, FULL)

    # ---- what the delivery core reports --------------------------------------------------

    def _report(self, message: dict[str, Any]) -> None:
        """A ``dead`` or ``stats`` message from the delivery core.

        Raises:
            FrameError: Not one of those, or naming a receiver or event it does not have.
        """
        kind = message["t"]
        if kind == "dead":
            gauge = self._gauge(message["l"])
            self._bury(gauge.name, message["ev"], int(message["n"]), str(message["err"]))
        elif kind == "stats":
            for n, (settled, delivered, retried) in message["l"].items():
                gauge = self._gauge(int(n))
                gauge.waiting -= settled
                gauge.delivered += delivered
                gauge.retries += retried
                self._settle(settled)
            for seq in message["done"]:
                self._sent.pop(seq, None)
        else:
            raise FrameError(f"an unknown message type {kind!r} from the delivery process")

    def _gauge(self, n: Any) -> Gauge:
        if not isinstance(n, int) or not 0 <= n < len(self._gauges):
            raise FrameError(f"a receiver number {n!r} (there are {len(self._gauges)})")
        return self._gauges[n]

    def _settle(self, count: int) -> None:
        self._busy -= count
        if self._busy <= 0:
            self._busy = 0
            self._idle.set()

    def _lost(self, reason: str, seq: int | None = None) -> None:
        """The delivery process failed (or none runs): every event not confirmed (or just
        ``seq``) is a dead letter with the reason."""
        seqs = list(self._sent) if seq is None else [seq]
        for s in seqs:
            event, lanes = self._sent.pop(s)
            for n in lanes:
                gauge = self._gauges[n]
                gauge.waiting -= 1
                self.unsent += 1
                self._bury(gauge.name, event, 0, f"the webhook delivery process {reason}")
                self._settle(1)
        if seq is None:
            for gauge in self._gauges:
                gauge.waiting = 0
            self._settle(self._busy)

    # ---- dead letters --------------------------------------------------------------------

    def dead_letters(self) -> list[DeadLetter]:
        """The dead letters, oldest first."""
        return self._dead.letters()

    def retry(self, dead_id: str) -> bool:
        """Send a dead letter again (same event ``id``); False if there is no such one.

        Raises:
            RuntimeError: The dispatcher is closed.
        """
        if self._state is _State.CLOSED:
            raise RuntimeError("webhooks are closed")
        letter = self._dead.take(dead_id)
        if letter is None or letter.subscription not in self._index:
            return False
        return self._enqueue(dict(letter.event), [self._index[letter.subscription]])

    def _bury(self, subscription: str, event: Mapping[str, Any], tried: int, error: str) -> None:
        self._dead.add(DeadLetter(subscription, event, tried, error, time.time()))
