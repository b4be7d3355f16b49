""":class:`Webhooks`: the service POSTs each request's events to the subscribed URLs.

The board's events reach :meth:`Webhooks.offer` from the service's feed hub (a listener that
must not block): it builds one signed event per subscription that wants it and puts it on a
bounded queue, without waiting. A task of its own (started and stopped by the service's
lifespan) takes the queue and delivers each event in its own task, at most ``max_in_flight``
at once, so a slow or dead receiver never slows a call, the feed, or the other receivers.

Delivery is at least once: an attempt that gets no 2xx (a timeout, a refused connection, a 5xx,
408, 425 or 429) is retried after a backoff that doubles from ``backoff`` up to ``max_backoff``
seconds (with jitter), ``attempts`` times in all; the event keeps its idempotency ``id`` and
is signed afresh with each attempt's timestamp. Another 4xx is final at once. An event that
is not delivered becomes a **dead letter** (kept in this process, the newest
``dead_letter_limit``), which ``voice-hitl webhooks dead`` shows and ``... retry`` sends again
(same ``id``). An event that finds the queue full is a dead letter at once.

Escalations are not on the board: a worker's ``HumanInputHandler`` tells them to its observers.
:meth:`Webhooks.observer` is such an observer, for a dispatcher in the worker's process.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import random
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
from ..board._bridge import stop_tasks
from ..board._model import iso
from ..human._lifecycle import RequestEvent, RequestNoted, RequestOpened, RequestSettled
from ..human._pending import PendingInput

if TYPE_CHECKING:
    import httpx

from ._webhook_wire import EVENT_HEADER, EventType, WebhookSubscription, sign_webhook, webhook_event

__all__ = ["DeadLetter", "LinkMaker", "Webhooks"]

logger = logging.getLogger("voice_hitl.service.webhooks")

LinkMaker = Callable[[BoardRequest, str], Mapping[str, str]]
"""``(request, holder) -> {"yes": url, ...}``: the answer links an event carries."""

_RETRYABLE = frozenset({408, 425, 429})
_FULL = "the delivery queue was full"


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
        queue_size: Events waiting for delivery before new ones are dead letters at once.
        max_in_flight: Deliveries (attempts and their backoffs) under way at once.
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
        max_in_flight: int = 256,
        dead_letter_limit: int = 1000,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if attempts < 1 or backoff < 0 or max_backoff < backoff or timeout <= 0:
            raise ValueError(
                "attempts must be >= 1, backoff >= 0, max_backoff >= backoff and timeout > 0"
            )
        self.subscriptions = list(subscriptions)
        self._links = links
        self._attempts = attempts
        self._backoff = backoff
        self._max_backoff = max_backoff
        self._timeout = timeout
        self._queue: asyncio.Queue[tuple[WebhookSubscription, dict[str, Any], int]] = (
            asyncio.Queue(queue_size)
        )
        self._slots = asyncio.Semaphore(max_in_flight)
        self._max_in_flight = max_in_flight
        self._dead: OrderedDict[str, DeadLetter] = OrderedDict()
        self._dead_limit = dead_letter_limit
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._runner: asyncio.Task[None] | None = None
        self._deliveries: set[asyncio.Task[None]] = set()
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._state = _State.UNOPENED
        self._recent: OrderedDict[str, PendingInput] = OrderedDict()
        self._full_logged_at = float("-inf")
        self._full_since_log = 0
        self.delivered = 0
        """Events delivered (a 2xx)."""
        self.retries = 0
        """Attempts after a first one failed."""

    # ---- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Start delivering (the service's lifespan calls this).

        Raises:
            RuntimeError: Started before, or closed.

        Cancellation: safe.
        """
        if self._state is not _State.UNOPENED:
            raise RuntimeError(f"webhooks cannot start: they are {self._state.value}")
        import httpx  # the HTTP client only where webhooks run (the `voice-hitl` CLI stays light)

        self._state = _State.OPEN
        self._client = httpx.AsyncClient(
            transport=self._transport,
            timeout=self._timeout,
            follow_redirects=False,
            # Keep a connection per concurrent delivery alive (httpx keeps 20 by default).
            limits=httpx.Limits(
                max_connections=self._max_in_flight, max_keepalive_connections=self._max_in_flight
            ),
        )
        self._runner = asyncio.create_task(self._run(), name="operator-webhooks")

    async def aclose(self) -> None:
        """Stop delivering; events not yet delivered are dropped, with a warning (idempotent).

        Cancellation: safe; the tasks are cancelled and the connections closed anyway.
        """
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        if self._busy:
            logger.warning("webhooks closed with %d event(s) not delivered", self._busy)
        tasks = [*self._deliveries, *([self._runner] if self._runner else [])]
        try:
            await stop_tasks(tasks)
        finally:
            if self._client is not None:
                await self._client.aclose()

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
            event = dict(base)
            if self._links is not None and event_type != "request.settled":
                links = self._links(request, subscription.name)
                if links:
                    event["links"] = dict(links)
            queued = self._enqueue(subscription, event, 0) and queued
        return queued

    def _enqueue(
        self, subscription: WebhookSubscription, event: dict[str, Any], tried: int
    ) -> bool:
        try:
            self._queue.put_nowait((subscription, event, tried))
        except asyncio.QueueFull:
            self._bury(subscription, event, tried, _FULL)
            return False
        self._busy += 1
        self._idle.clear()
        return True

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
        subscription = next((s for s in self.subscriptions if s.name == letter.subscription), None)
        if subscription is None:
            return False
        return self._enqueue(subscription, dict(letter.event), 0)

    def _bury(
        self, subscription: WebhookSubscription, event: Mapping[str, Any], tried: int, error: str
    ) -> None:
        letter = DeadLetter(subscription.name, event, tried, error, time.time())
        self._dead[letter.id] = letter
        while len(self._dead) > self._dead_limit:
            self._dead.popitem(last=False)
        if error == _FULL:
            # A burst fills the queue for many subscribers at once: one line a second.
            self._full_since_log += 1
            if letter.at - self._full_logged_at < 1.0:
                return
            self._full_logged_at, count = letter.at, self._full_since_log
            self._full_since_log = 0
            logger.warning("webhooks: queue full, %d event(s) made dead letters at once", count)
            return
        logger.warning(
            "webhook %s for %s: dead letter after %d attempt(s): %s",
            event["type"],
            subscription.name,
            tried,
            error,
        )

    # ---- delivery ------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            subscription, event, tried = await self._queue.get()
            await self._slots.acquire()
            task = asyncio.create_task(self._deliver(subscription, event, tried))
            self._deliveries.add(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._deliveries.discard(task)
        self._slots.release()
        self._busy -= 1
        if self._busy == 0:
            self._idle.set()
        if not task.cancelled() and task.exception() is not None:
            logger.error("webhook delivery failed", exc_info=task.exception())

    async def _deliver(
        self, subscription: WebhookSubscription, event: dict[str, Any], tried: int
    ) -> None:
        assert self._client is not None
        body = json.dumps(event, separators=(",", ":"), default=str).encode()
        error = ""
        for attempt in range(1, self._attempts + 1):
            if attempt > 1:
                self.retries += 1
                delay = min(self._max_backoff, self._backoff * 2 ** (attempt - 2))
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "voice-hitl-webhooks",
                EVENT_HEADER: event["id"],
                **sign_webhook(subscription.secret, body, time.time()),
            }
            try:
                response = await self._client.post(subscription.url, content=body, headers=headers)
            except Exception as exc:  # a transport error, a bad URL: tried again, then buried
                error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            if 200 <= response.status_code < 300:
                self.delivered += 1
                return
            error = f"HTTP {response.status_code}"
            if response.status_code < 500 and response.status_code not in _RETRYABLE:
                self._bury(subscription, event, tried + attempt, error + " (not retried)")
                return
        self._bury(subscription, event, tried + self._attempts, error)
