"""One webhook receiver's lane: its own queue, its own deliveries and connections.

Each subscription gets a :class:`Lane` in the delivery core
(:mod:`voice_hitl.service._webhook_worker`), so a receiver that accepts connections and never
replies holds only its own lane: its ``concurrency`` deliveries wait (up to ``timeout`` per
attempt, retried with backoff) and every other receiver's events go out as before, on their
own connections. The queue itself is not bounded here: :class:`~voice_hitl.service.Webhooks`
counts each lane's events in the service's process and refuses (as dead letters) those past
``queue_size``, so the refusal is known at once where the event is offered.
"""

from __future__ import annotations

import asyncio
import functools
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

__all__ = ["Delivery", "Lane", "Retries"]

logger = logging.getLogger("voice_hitl.service.webhooks")

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
    delivery, off the call's path); ``seq`` is the event's number, ``lane`` the receiver's."""

    build: Callable[[], dict[str, Any]]
    seq: int
    lane: int


Bury = Callable[[WebhookSubscription, Mapping[str, Any], int, str], None]
"""``bury(subscription, event, attempts, error)``: make an event a dead letter."""


class Lane:
    """A receiver's queue, deliveries and HTTP connections (module docstring)."""

    def __init__(
        self,
        subscription: WebhookSubscription,
        retries: Retries,
        *,
        concurrency: int,
        bury: Bury,
        settled: Callable[[Delivery], None],
    ) -> None:
        self.subscription = subscription
        self._retries = retries
        self._queue: asyncio.Queue[Delivery] = asyncio.Queue()
        self._concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._bury = bury
        self._settled = settled
        self._client: httpx.AsyncClient | None = None
        self._runner: asyncio.Task[None] | None = None
        self._deliveries: set[asyncio.Task[None]] = set()
        self.delivered = 0
        """Events this receiver took (a 2xx)."""
        self.retries = 0
        """Attempts after a first one failed."""

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

    def put(self, delivery: Delivery) -> None:
        """Queue ``delivery`` (the service bounds how many a lane holds)."""
        self._queue.put_nowait(delivery)

    async def _run(self) -> None:
        while True:
            await self._slots.acquire()  # a slot first: queued events wait in the queue
            delivery = await self._queue.get()
            task = asyncio.create_task(self._deliver(delivery))
            self._deliveries.add(task)
            task.add_done_callback(functools.partial(self._done, delivery))

    def _done(self, delivery: Delivery, task: asyncio.Task[None]) -> None:
        self._deliveries.discard(task)
        self._slots.release()
        if not task.cancelled() and task.exception() is not None:
            logger.error("webhook delivery failed", exc_info=task.exception())
        if not task.cancelled():
            self._settled(delivery)

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
                self._bury(subscription, event, attempt, error + " (not retried)")
                return
        self._bury(subscription, event, retries.attempts, error)
