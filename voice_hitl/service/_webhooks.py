""":class:`Webhooks`: the service POSTs each request's events to the subscribed URLs.

The board's events reach :meth:`Webhooks.offer` from the service's feed hub (a listener that
must not block): it builds the event's common part once and puts one delivery on the queue of
each subscription that wants it, without waiting; each event's answer links, body and
signature are made when it is delivered, off the call's path. Every subscription has its own
lane (:mod:`voice_hitl.service._webhook_lane`: its own bounded queue, at most
``max_in_flight`` deliveries at once, its own connections), started and stopped by the
service's lifespan, so a slow or dead receiver never slows a call, the feed, or another
receiver.

Delivery is at least once: an attempt that gets no 2xx (a timeout, a refused connection, a 5xx,
408, 425 or 429) is retried after a backoff that doubles from ``backoff`` up to ``max_backoff``
seconds (with jitter), ``attempts`` times in all; the event keeps its idempotency ``id`` and
is signed afresh with each attempt's timestamp. Another 4xx is final at once. An event that
is not delivered becomes a **dead letter** (kept in this process, the newest
``dead_letter_limit``), which ``voice-hitl webhooks dead`` shows and ``... retry`` sends again
(same ``id``). An event that finds its receiver's queue full is a dead letter at once, counted
and logged (:attr:`Webhooks.overflowed`). Dead letters past ``dead_letter_limit`` are dropped
oldest first, counted in :attr:`Webhooks.dead_dropped` and logged.

Escalations are not on the board: a worker's ``HumanInputHandler`` tells them to its observers.
:meth:`Webhooks.observer` is such an observer, for a dispatcher in the worker's process.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..board import (
    BoardEscalated,
    BoardEvent,
    BoardOpened,
    BoardRequest,
    request_from_pending,
)
from ..board._model import iso
from ..human._lifecycle import RequestEvent, RequestNoted, RequestOpened, RequestSettled
from ..human._pending import PendingInput

if TYPE_CHECKING:
    import httpx

from ._webhook_lane import FULL, Delivery, Lane, Retries
from ._webhook_wire import EventType, WebhookSubscription, webhook_event

__all__ = ["DeadLetter", "LinkMaker", "Webhooks"]

logger = logging.getLogger("voice_hitl.service.webhooks")

LinkMaker = Callable[[BoardRequest, str], Mapping[str, str]]
"""``(request, holder) -> {"yes": url, ...}``: the answer links an event carries."""



@dataclass(frozen=True, slots=True)
class DeadLetter:
    """An event that was not delivered: to whom, how often it was tried, and the last error."""

    subscription: str
    event: Mapping[str, Any]
    attempts: int
    error: str
    at: float

    @property
    def id(self) -> str:
        """``<event id>:<subscription>`` (an event goes to each subscription on its own)."""
        return f"{self.event['id']}:{self.subscription}"

    @property
    def place(self) -> tuple[str, str]:
        """The request's room and channel (who may see this dead letter)."""
        request = self.event.get("request") or {}
        return str(request.get("room") or ""), str(request.get("channel") or "")

    def to_wire(self) -> dict[str, Any]:
        """As ``GET /v1/webhooks/dead`` shows it."""
        request = self.event.get("request") or {}
        return {
            "id": self.id,
            "subscription": self.subscription,
            "event_id": self.event["id"],
            "type": self.event["type"],
            "request_id": request.get("id"),
            "room": request.get("room"),
            "attempts": self.attempts,
            "error": self.error,
            "at": iso(self.at),
        }


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
        queue_size: Events waiting for one receiver before its new ones are dead letters at
            once.
        max_in_flight: Deliveries (attempts and their backoffs) under way at once, per
            receiver (each receiver has its own; one that hangs holds only its own).
        dead_letter_limit: Dead letters kept (the oldest go first).
        transport: An httpx transport (tests); the default opens connections.
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
    ) -> None:
        if attempts < 1 or backoff < 0 or max_backoff < backoff or timeout <= 0:
            raise ValueError(
                "attempts must be >= 1, backoff >= 0, max_backoff >= backoff and timeout > 0"
            )
        if queue_size < 1 or max_in_flight < 1:
            raise ValueError("queue_size and max_in_flight must be at least 1")
        self.subscriptions = list(subscriptions)
        names = [s.name for s in self.subscriptions]
        if len(set(names)) != len(names):
            raise ValueError("each subscription needs its own name (each has its own lane)")
        self._links = links
        retries = Retries(attempts, backoff, max_backoff, timeout)
        self._lanes = {
            s.name: Lane(
                s,
                retries,
                queue_size=queue_size,
                concurrency=max_in_flight,
                bury=self._bury,
                settled=self._settled,
            )
            for s in self.subscriptions
        }
        self._dead: OrderedDict[str, DeadLetter] = OrderedDict()
        self._dead_limit = dead_letter_limit
        self._transport = transport
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._state = _State.UNOPENED
        self._recent: OrderedDict[str, PendingInput] = OrderedDict()
        self._dropped_logged_at = float("-inf")
        self.dead_dropped = 0
        """Dead letters dropped (oldest first) past ``dead_letter_limit``."""

    @property
    def delivered(self) -> int:
        """Events delivered (a 2xx), all receivers."""
        return sum(lane.delivered for lane in self._lanes.values())

    @property
    def retries(self) -> int:
        """Attempts after a first one failed, all receivers."""
        return sum(lane.retries for lane in self._lanes.values())

    @property
    def overflowed(self) -> int:
        """Events refused by a full receiver queue (each one a dead letter), all receivers."""
        return sum(lane.overflowed for lane in self._lanes.values())

    def lanes(self) -> dict[str, dict[str, int]]:
        """Per receiver: ``waiting``, ``delivered``, ``retries``, ``overflowed``."""
        return {
            name: {
                "waiting": lane.waiting,
                "delivered": lane.delivered,
                "retries": lane.retries,
                "overflowed": lane.overflowed,
            }
            for name, lane in self._lanes.items()
        }

    # ---- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Start delivering (the service's lifespan calls this).

        Raises:
            RuntimeError: Started before, or closed.

        Cancellation: safe.
        """
        if self._state is not _State.UNOPENED:
            raise RuntimeError(f"webhooks cannot start: they are {self._state.value}")
        self._state = _State.OPEN
        for lane in self._lanes.values():
            lane.start(self._transport)

    async def aclose(self) -> None:
        """Stop delivering; events not yet delivered are dropped, with a warning (idempotent).

        Cancellation: safe; the tasks are cancelled and the connections closed anyway.
        """
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        if self._busy:
            logger.warning("webhooks closed with %d event(s) not delivered", self._busy)
        # All at once: one by one, 100 receivers' connections took seconds to close.
        await asyncio.gather(*(lane.aclose() for lane in self._lanes.values()))

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
            False when the queue was full (those events are dead letters at once).
        """
        if self._state is _State.CLOSED:
            return False
        base: dict[str, Any] | None = None
        queued = True
        for subscription in self.subscriptions:
            if not subscription.wants(event_type, request):
                continue
            if base is None:
                base = webhook_event(event_type, request, time.time(), escalation=escalation)
            build = self._builder(base, request, subscription.name)
            queued = self._enqueue(subscription.name, Delivery(build)) and queued
        return queued

    def _builder(
        self, base: dict[str, Any], request: BoardRequest, holder: str
    ) -> Callable[[], dict[str, Any]]:
        """Makes the event one receiver gets (its own links), when it is delivered."""
        links = self._links if base["type"] != "request.settled" else None

        def build() -> dict[str, Any]:
            event = dict(base)
            made = links(request, holder) if links is not None else None
            if made:
                event["links"] = dict(made)
            return event

        return build

    def _enqueue(self, name: str, delivery: Delivery) -> bool:
        if not self._lanes[name].put(delivery):
            return False
        self._busy += 1
        self._idle.clear()
        return True

    def _settled(self) -> None:
        self._busy -= 1
        if self._busy == 0:
            self._idle.set()

    # ---- dead letters --------------------------------------------------------------------

    def dead_letters(self) -> list[DeadLetter]:
        """The dead letters, oldest first."""
        return list(self._dead.values())

    def retry(self, dead_id: str) -> bool:
        """Send a dead letter again (same event ``id``); False if there is no such one.

        Raises:
            RuntimeError: The dispatcher is closed.
        """
        if self._state is _State.CLOSED:
            raise RuntimeError("webhooks are closed")
        letter = self._dead.pop(dead_id, None)
        if letter is None:
            return False
        if letter.subscription not in self._lanes:
            return False
        event = dict(letter.event)
        return self._enqueue(letter.subscription, Delivery(lambda: event))

    def _bury(
        self,
        subscription: WebhookSubscription,
        event: Mapping[str, Any],
        tried: int,
        error: str,
    ) -> None:
        letter = DeadLetter(subscription.name, event, tried, error, time.time())
        self._dead[letter.id] = letter
        while len(self._dead) > self._dead_limit:
            _, old = self._dead.popitem(last=False)
            self.dead_dropped += 1
            if letter.at - self._dropped_logged_at >= 1.0:  # one line a second at most
                self._dropped_logged_at = letter.at
                logger.warning(
                    "webhooks: dead letter %s dropped, over the limit of %d (%d dropped in all)",
                    old.id,
                    self._dead_limit,
                    self.dead_dropped,
                )
        if error != FULL:  # a full queue is logged by its lane, once a second
            logger.warning(
                "webhook %s for %s: dead letter after %d attempt(s): %s",
                event["type"],
                subscription.name,
                tried,
                error,
            )
