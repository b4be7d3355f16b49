"""One webhook receiver's lane: its own bounded queue, its own deliveries and connections.

Each subscription of :class:`~voice_hitl.service.Webhooks` gets a :class:`Lane`, so a receiver
that accepts connections and never replies holds only its own lane: its ``concurrency``
deliveries wait (up to ``timeout`` per attempt, retried with backoff), its queue fills, and
every other receiver's events go out as before, on their own connections.

A lane's queue holds ``queue_size`` events; an event that finds it full is not queued but
made a dead letter at once (counted in :attr:`Lane.overflowed`, logged at most once a second
per receiver, listed by ``voice-hitl webhooks dead`` and sent again by ``... retry``): the
newest event is the one refused, so what was queued keeps its order, and nothing is lost
without a trace.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..board._tasks import stop_tasks
from ._webhook_wire import EVENT_HEADER, WebhookSubscription, sign_webhook

if TYPE_CHECKING:
    import httpx

__all__ = ["FULL", "Delivery", "Lane", "Retries"]

logger = logging.getLogger("voice_hitl.service.webhooks")

FULL = "the receiver's delivery queue was full"
_RETRYABLE = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class Retries:
    """How each event is tried: ``attempts`` in all, backoff doubling from ``backoff`` up to
    ``max_backoff`` seconds (with jitter), ``timeout`` seconds per attempt."""

    attempts: int
    backoff: float
    max_backoff: float
    timeout: float


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event for this lane's receiver: ``build()`` makes its body (links are minted at
    delivery, off the call's path); ``tried`` attempts were made before (a retried dead
    letter starts again at 0)."""

    build: Callable[[], dict[str, Any]]
    tried: int = 0


Bury = Callable[[WebhookSubscription, Mapping[str, Any], int, str], None]
"""``bury(subscription, event, attempts, error)``: make an event a dead letter."""


class Lane:
    """A receiver's queue, deliveries and HTTP connections (module docstring)."""

    def __init__(
        self,
        subscription: WebhookSubscription,
        retries: Retries,
        *,
        queue_size: int,
        concurrency: int,
        bury: Bury,
        settled: Callable[[], None],
    ) -> None:
        self.subscription = subscription
        self._retries = retries
        self._queue: asyncio.Queue[Delivery] = asyncio.Queue(queue_size)
        self._concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._bury = bury
        self._settled = settled
        self._client: httpx.AsyncClient | None = None
        self._runner: asyncio.Task[None] | None = None
        self._deliveries: set[asyncio.Task[None]] = set()
        self._overflow_logged_at = float("-inf")
        self._overflow_since_log = 0
        self.delivered = 0
        """Events this receiver took (a 2xx)."""
        self.retries = 0
        """Attempts after a first one failed."""
        self.overflowed = 0
        """Events refused because this lane's queue was full (each one a dead letter)."""

    @property
    def waiting(self) -> int:
        """Events queued or being delivered."""
        return self._queue.qsize() + len(self._deliveries)

    def start(self, transport: httpx.AsyncBaseTransport | None) -> None:
        """Open this receiver's connections and start delivering."""
        import httpx

        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=self._retries.timeout,
            follow_redirects=False,
            limits=httpx.Limits(
                max_connections=self._concurrency, max_keepalive_connections=self._concurrency
            ),
        )
        self._runner = asyncio.create_task(
            self._run(), name=f"webhooks-{self.subscription.name}"
        )

    async def aclose(self) -> None:
        """Stop delivering and close the connections (what is queued is dropped).

        Cancellation: safe; the tasks are stopped and the connections closed anyway.
        """
        try:
            await stop_tasks([*self._deliveries, *([self._runner] if self._runner else [])])
        finally:
            if self._client is not None:
                await self._client.aclose()

    def put(self, delivery: Delivery) -> bool:
        """Queue ``delivery`` without waiting; False (and a dead letter) when the queue is full."""
        try:
            self._queue.put_nowait(delivery)
        except asyncio.QueueFull:
            self._overflow(delivery)
            return False
        return True

    def _overflow(self, delivery: Delivery) -> None:
        self.overflowed += 1
        self._bury(self.subscription, delivery.build(), delivery.tried, FULL)
        self._overflow_since_log += 1
        now = time.monotonic()
        if now - self._overflow_logged_at >= 1.0:  # a burst: one line a second per receiver
            logger.warning(
                "webhook receiver %s: queue full (%d waiting), %d event(s) made dead letters "
                "(%d in all)",
                self.subscription.name,
                self._queue.qsize(),
                self._overflow_since_log,
                self.overflowed,
            )
            self._overflow_logged_at, self._overflow_since_log = now, 0

    async def _run(self) -> None:
        while True:
            delivery = await self._queue.get()
            await self._slots.acquire()
            task = asyncio.create_task(self._deliver(delivery))
            self._deliveries.add(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._deliveries.discard(task)
        self._slots.release()
        if not task.cancelled() and task.exception() is not None:
            logger.error("webhook delivery failed", exc_info=task.exception())
        self._settled()

    async def _deliver(self, delivery: Delivery) -> None:
        assert self._client is not None
        subscription, retries = self.subscription, self._retries
        event = delivery.build()
        body = json.dumps(event, separators=(",", ":"), default=str).encode()
        error = ""
        for attempt in range(1, retries.attempts + 1):
            if attempt > 1:
                self.retries += 1
                delay = min(retries.max_backoff, retries.backoff * 2 ** (attempt - 2))
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
                self._bury(subscription, event, delivery.tried + attempt, error + " (not retried)")
                return
        self._bury(subscription, event, delivery.tried + retries.attempts, error)
