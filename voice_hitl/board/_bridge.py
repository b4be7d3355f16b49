""":class:`BoardBridge`: one worker's :class:`~voice_hitl.HumanInputHandler` on a request board.

The bridge is a request observer (``handler.add_observer``) plus three tasks it owns:

- the **publisher** sends the handler's events to the board in order: each opened request is
  published, each local settle (a spoken answer, a timeout, a withdrawal) settles the board's
  record at once, so other processes see it immediately; an escalation the handler notes
  (``escalate_to`` policies) goes out as :meth:`RequestBoard.escalate`, so the operator
  service's webhooks send ``request.escalated`` for any worker's requests;
- the **inbox** follows the board's events for this worker's requests. An operator's answer
  or rejection arrives as a *claim* (:mod:`voice_hitl.board._protocol`): the inbox takes it
  on the board (atomically, only within the claim's window), hands it to the handler
  (``resolve`` / ``reject`` with ``by`` and ``via``), and settles the board's record with it,
  which is the operator's acknowledgement. When the handler settled first (the call timed out
  or withdrew the request), its own outcome is what the board records. A settle made
  elsewhere without a claim is delivered the same way; the handler's first-settle-wins makes
  either exactly once;
- the **heartbeat** keeps the worker alive on the board every ``heartbeat`` seconds; after
  ``misses`` missed beats its requests are abandoned.

When the board's server drops (a Redis restart, a broken connection, a failover, any error
reply: whatever a board step raises, not only :class:`BoardUnavailableError`) every task
notices, the inbox reconnects with a short backoff, heartbeats, and re-publishes the handler's
open requests (``revive=True``, in batches that yield to the loop while the heartbeat task
keeps beating, so a re-publish of 100,000 requests does not let the worker lapse); a request
the board settled meanwhile is delivered instead. It also puts back the settled records of its
last ``remember`` requests (``restore``: never overwriting a settled record, and settling one
the board shows open, whose settle a failover lost), so a server restarted without
persistence still answers a late operator "already settled".
The bridge is where the truth about its requests lives: it keeps the record of each of its own
settles (with the operator's claim it took) *before* sending it, so a settle the restarted
board no longer knows (the request was taken just before the restart, and the
acknowledgement met the empty server) is restored from that record, and a retried answer gets
its first outcome. The board's atomic settle means nothing settles twice.

A local settle that loses on the board (the handler timed out in the same instant an operator
answered) is counted in :attr:`BoardBridge.conflicts` and logged: the handler's outcome is what
the model read.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import replace
from types import TracebackType
from typing import Any

from .._checks import positive_seconds
from .._edge import scrub
from ..human._human_input import HumanInputHandler
from ..human._lifecycle import RequestEvent, RequestNoted, RequestOpened, RequestSettled
from ._model import (
    BoardClaim,
    BoardClaimed,
    BoardEvent,
    BoardRequest,
    BoardSettled,
    BoardStatus,
    BoardUnavailableError,
    request_from_pending,
)
from ._protocol import RequestBoard
from ._recall import SettledRecords
from ._tasks import check_cancelled as _check_cancelled
from ._tasks import default_worker_id, stop_tasks

__all__ = ["BoardBridge", "default_worker_id", "stop_tasks"]

logger = logging.getLogger("voice_hitl.board")

_RESYNC_BATCH = 500

_STATUS = {
    "answered": BoardStatus.ANSWERED,
    "rejected": BoardStatus.REJECTED,
    "timed_out": BoardStatus.TIMED_OUT,
    "withdrawn": BoardStatus.WITHDRAWN,
}


def _unavailable_from(exc: Exception) -> BoardUnavailableError:
    if isinstance(exc, BoardUnavailableError):
        return exc
    error = BoardUnavailableError(f"the board failed: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


async def _as_unavailable(step: Coroutine[Any, Any, Any]) -> Any:
    """Await a board step; an error of a type the board did not name becomes
    :class:`BoardUnavailableError` (chained)."""
    try:
        return await step
    except Exception as exc:
        raise _unavailable_from(exc) from exc


class _State(enum.Enum):
    UNOPENED = "unopened"
    OPEN = "open"
    CLOSED = "closed"


class BoardBridge:
    """Publish a handler's requests on a board and take answers from it (module docstring).

    Use it as ``async with BoardBridge(handler, board): ...``.

    Args:
        handler: The worker's handler.
        board: The board (its owner closes it).
        worker_id: This worker's id on the board; :func:`default_worker_id` by default.
        heartbeat: Seconds between heartbeats.
        misses: Missed heartbeats after which the board abandons this worker's requests.
        reconnect_delay: Seconds between reconnection attempts.
        drain_timeout: Seconds :meth:`aclose` waits for queued events to reach the board.
        remember: How many settled records of its requests the bridge keeps to restore.
        connect_timeout: Seconds ``async with`` waits for the first connection (subscribed,
            re-published) before it fails with the last reason.
    """

    def __init__(
        self,
        handler: HumanInputHandler,
        board: RequestBoard,
        *,
        worker_id: str | None = None,
        heartbeat: float = 2.0,
        misses: int = 3,
        reconnect_delay: float = 0.2,
        drain_timeout: float = 1.0,
        remember: int = 10_000,
        connect_timeout: float = 30.0,
    ) -> None:
        heartbeat = positive_seconds("heartbeat", heartbeat)  # inf: never abandoned
        if misses < 1:
            raise ValueError(f"misses must be at least 1, got {misses!r}")
        self.handler = handler
        self.board = board
        self.worker_id = worker_id or default_worker_id()
        self.heartbeat_interval = heartbeat
        self.ttl = heartbeat * misses
        self._reconnect_delay = reconnect_delay
        self._drain_timeout = drain_timeout
        self._connect_timeout = positive_seconds("connect_timeout", connect_timeout)
        self._queue: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self._up = asyncio.Event()
        self._broken = asyncio.Event()
        self._delivering: set[str] = set()
        self._settled = SettledRecords(remember)
        self._open: dict[str, BoardRequest] = {}  # this worker's requests not yet settled
        self._tasks: list[asyncio.Task[None]] = []
        self._remove_observer: Any = None
        self._state = _State.UNOPENED
        self._down_logged = False
        self._last_error = ""
        self._syncing = False  # subscribed and re-publishing: the heartbeat keeps beating
        self._taking = True
        self._takes_done = asyncio.Event()
        self._takes_done.set()
        self.delivered = 0
        """Answers and rejections from the board this bridge delivered to the handler."""
        self.conflicts = 0
        """Local settles that lost on the board (see the module docstring)."""
        self.reconnects = 0
        """Times the bridge re-subscribed and re-published after losing the board."""
        self.failures = 0
        """Events the board refused for a reason other than being unreachable (logged)."""

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> BoardBridge:
        """Heartbeat, subscribe, publish the handler's open requests, and start the tasks.

        Raises:
            RuntimeError: The bridge was opened before.
            BoardUnavailableError: The board cannot be reached or refused (the message says
                why), or the first connection took longer than ``connect_timeout``.

        Cancellation: safe; nothing keeps running.
        """
        if self._state is not _State.UNOPENED:
            raise RuntimeError("a BoardBridge can be opened once")
        self._state = _State.OPEN
        first = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(self._connect_timeout):
                await _as_unavailable(self.board.heartbeat(self.worker_id, self.ttl))
                self._remove_observer = self.handler.add_observer(self._observe)
                self._tasks = [
                    asyncio.create_task(
                        self._guard(self._connection_loop(first)), name="board-inbox"
                    ),
                    asyncio.create_task(self._guard(self._publish_loop()), name="board-publisher"),
                    asyncio.create_task(
                        self._guard(self._heartbeat_loop()), name="board-heartbeat"
                    ),
                ]
                await first
        except TimeoutError:
            await self.aclose()
            raise BoardUnavailableError(
                f"worker {self.worker_id} not on the board within {self._connect_timeout:g}s"
                f" (last error: {self._last_error or 'none'})"
            ) from None
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _guard(self, loop: Coroutine[Any, Any, None]) -> None:
        try:
            await loop
        except Exception:
            logger.exception("worker %s: a board task failed", self.worker_id)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop observing, give queued events ``drain_timeout`` to reach the board, stop.

        Idempotent. Requests still open stay on the board until this worker's heartbeat
        lapses (then they are abandoned).

        Cancellation: the tasks are cancelled and awaited anyway.
        """
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        if self._remove_observer is not None:
            self._remove_observer()
        try:
            if self._tasks and self._up.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._drain_timeout):
                        await self._queue.join()
        finally:
            await stop_tasks(self._tasks)

    async def stop_taking(self) -> None:
        """Take no more operator answers, and wait for the one being taken to be handed to the
        handler and acknowledged on the board (a worker's first step on SIGTERM).

        A claim that arrives afterwards is left to lapse: its operator is told it was not
        taken (nothing was delivered). Then withdraw the calls (``handler.close()``) and close
        the bridge, whose drain sends the withdrawals. Idempotent.

        Cancellation: safe; no more answers are taken either way.
        """
        self._taking = False
        await self._takes_done.wait()

    @property
    def connected(self) -> bool:
        """True while the bridge is subscribed and its requests are on the board."""
        return self._up.is_set()

    async def wait_connected(self) -> None:
        """Wait until the bridge is (again) subscribed and re-published.

        Cancellation: safe.
        """
        await self._up.wait()

    async def drain(self) -> None:
        """Wait until every event observed so far has reached the board.

        Cancellation: safe.
        """
        await self._queue.join()

    # -- handler side --------------------------------------------------------------------

    def _observe(self, event: RequestEvent) -> None:
        if isinstance(event, RequestOpened):
            request = request_from_pending(event.request, self.worker_id)
            self._open[request.id] = request
            self._queue.put_nowait(("open", request))
        elif isinstance(event, RequestNoted) and event.note == "escalated":
            self._queue.put_nowait(("escalate", event.pending_id, scrub(dict(event.data))))
        elif isinstance(event, RequestSettled):
            if event.pending_id in self._delivering:
                return  # the board settled it first; nothing to send back
            status = _STATUS[event.outcome]
            self._queue.put_nowait(
                (
                    "settle",
                    event.pending_id,
                    status,
                    scrub(event.text),
                    scrub(event.by),
                    scrub(event.via),
                    scrub(event.detail),
                    None,
                )
            )

    async def _publish_loop(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                while True:
                    await self._up.wait()
                    try:
                        await self._apply(item)
                        break
                    except BoardUnavailableError as exc:
                        _check_cancelled()
                        self._last_error = f"{type(exc).__name__}: {exc}"
                        self._lost()
                    except Exception:
                        # One bad item must not stop the others reaching the board.
                        logger.exception(
                            "worker %s: could not put %s %s on the board",
                            self.worker_id,
                            item[0],
                            getattr(item[1], "id", item[1]),
                        )
                        self.failures += 1
                        break
            finally:
                self._queue.task_done()

    def _keep(self, record: BoardRequest | None) -> None:
        if record is not None and record.worker == self.worker_id:
            self._settled.keep(record)

    async def _apply(self, item: tuple[Any, ...]) -> None:
        if item[0] == "open":
            record = await self.board.publish(item[1])
            if not record.is_open:
                self._deliver(record)
            return
        if item[0] == "escalate":
            await self.board.escalate(item[1], item[2])
            return
        _, pending_id, status, text, by, via, detail, claim = item
        opened = self._open.pop(pending_id, None)
        ours = None
        if opened is not None:  # kept before it is sent: the board may forget it (docstring)
            ours = replace(opened.settled(status, text, time.time(), by, via, detail), claim=claim)
            self._settled.keep(ours)
        try:
            result = await self.board.settle(
                pending_id, status, text, by=by, via=via, detail=detail, worker=self.worker_id
            )
        except BaseException:
            if opened is not None:
                self._open[pending_id] = opened  # sent again after reconnecting
            raise
        current = result.request
        if current is None and ours is not None:
            # The board lost the request (its server restarted empty) after we took it.
            await self.board.restore([ours])
            return
        self._keep(current)
        if (
            not result.won
            and current is not None
            and current.status is not status
            and current.status in (BoardStatus.ANSWERED, BoardStatus.REJECTED)
        ):
            self.conflicts += 1
            logger.warning(
                "request %s: settled %s here but %s on the board by %s",
                pending_id,
                status,
                current.status,
                current.settled_by,
            )

    # -- board side ----------------------------------------------------------------------

    def _deliver(self, request: BoardRequest) -> None:
        """Hand a settle made on the board to the handler (once; the handler decides)."""
        if request.worker != self.worker_id:
            return
        self._keep(request)
        pending = self.handler.get(request.id)
        if pending is None or pending.status != "pending":
            return
        if request.status is BoardStatus.ABANDONED:
            # The board gave up on us while we were away; we are back: open it again.
            self._queue.put_nowait(
                ("open", request_from_pending(pending.to_event(), self.worker_id))
            )
            return
        if request.status not in (BoardStatus.ANSWERED, BoardStatus.REJECTED):
            return
        self._open.pop(request.id, None)  # settled on the board: nothing of ours to send
        self._delivering.add(request.id)
        try:
            by, via = request.settled_by, request.settled_via or "board"
            if request.status is BoardStatus.ANSWERED:
                won = self.handler.resolve(request.id, request.text, by=by, via=via)
            else:
                won = self.handler.reject(request.id, request.text, by=by, via=via)
        finally:
            self._delivering.discard(request.id)
        if won:
            self.delivered += 1

    def _lost(self) -> None:
        self._up.clear()
        self._broken.set()

    async def _take(self, request: BoardRequest) -> None:
        """Take an operator's claim, hand it to the handler, acknowledge it (module docstring)."""
        claim = request.claim
        if claim is None or request.worker != self.worker_id or not self._taking:
            return
        pending = self.handler.get(request.id)
        if pending is None or pending.status != "pending":
            return  # the handler's own settle is on its way to the board
        self._takes_done.clear()  # stop_taking() waits for this take to be acknowledged
        try:
            await self._take_claim(request, claim)
        finally:
            self._takes_done.set()

    async def _take_claim(self, request: BoardRequest, claim: BoardClaim) -> None:
        if not await self.board.take(request.id, claim.token, self.worker_id):
            return  # the window closed (the operator was told), or another step won
        self._delivering.add(request.id)
        try:
            if claim.status is BoardStatus.ANSWERED:
                won = self.handler.resolve(request.id, claim.text, by=claim.by, via=claim.via)
            else:
                won = self.handler.reject(request.id, claim.text, by=claim.by, via=claim.via)
        finally:
            self._delivering.discard(request.id)
        if not won:
            return  # the handler settled during the take; that settle is queued already
        self.delivered += 1
        taken = replace(claim, taken=True)
        ack = ("settle", request.id, claim.status, claim.text, claim.by, claim.via, "", taken)
        try:
            await self._apply(ack)  # at once: the operator is waiting for it
        except BoardUnavailableError:
            _check_cancelled()
            self._queue.put_nowait(ack)  # the publisher retries it after reconnecting
            raise

    async def _pump(self, events: AsyncIterator[BoardEvent]) -> None:
        async for event in events:
            if isinstance(event, BoardClaimed):
                await self._take(event.request)
            elif isinstance(event, BoardSettled):
                self._deliver(event.request)

    async def _resync(self) -> None:
        """Re-publish the open requests, :data:`_RESYNC_BATCH` per round trip (one by one,
        500 of them kept a restarted board's answers waiting for seconds; 100,000 must not
        starve the heartbeat task: each batch yields to the loop), then restore the settled
        records the board may have lost."""
        pendings = list(self.handler.pending.values())
        for start in range(0, len(pendings), _RESYNC_BATCH):
            requests = [
                request_from_pending(pending.to_event(), self.worker_id)
                for pending in pendings[start : start + _RESYNC_BATCH]
            ]
            for record in await self.board.publish_many(requests, revive=True):
                if not record.is_open:
                    self._deliver(record)
                elif record.claim is not None:
                    await self._take(record)
        await self._settled.restore(self.board)

    async def _connection_loop(self, first: asyncio.Future[None]) -> None:
        while True:
            try:
                async with self.board.subscribe(self.worker_id) as events:
                    self._broken.clear()  # a lapse seen during the re-publish breaks again
                    self._syncing = True
                    await self.board.heartbeat(self.worker_id, self.ttl)
                    await self._resync()
                    self._syncing = False
                    self._up.set()
                    if self._down_logged:
                        logger.warning("worker %s is back on the board", self.worker_id)
                        self._down_logged = False
                    if not first.done():
                        first.set_result(None)
                    await self._run_until_broken(events)
            except Exception as exc:  # any reply or fault: reconnect (never end this task)
                _check_cancelled()
                if not isinstance(exc, BoardUnavailableError):
                    logger.warning(
                        "worker %s: board step failed (%s: %s); reconnecting",
                        self.worker_id,
                        type(exc).__name__,
                        exc,
                        exc_info=exc,
                    )
                self._last_error = f"{type(exc).__name__}: {exc}"
                if not first.done():
                    first.set_exception(_unavailable_from(exc))
                    return
                if not self._down_logged:
                    logger.warning("worker %s lost the board: %s", self.worker_id, exc)
                    self._down_logged = True
                else:
                    logger.debug("worker %s: board still unreachable: %s", self.worker_id, exc)
            self._syncing = False
            self._up.clear()
            self.reconnects += 1
            await asyncio.sleep(self._reconnect_delay)

    async def _run_until_broken(self, events: AsyncIterator[BoardEvent]) -> None:
        pump = asyncio.create_task(self._pump(events), name="board-pump")
        broken = asyncio.create_task(self._broken.wait(), name="board-broken")
        try:
            await asyncio.wait({pump, broken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await stop_tasks([pump, broken])
        if pump.done() and not pump.cancelled() and pump.exception() is not None:
            raise pump.exception()  # type: ignore[misc]

    async def _heartbeat_loop(self) -> None:
        """Beats while connected and while re-publishing (its own task: a long re-publish
        never starves it); any failure is a lost board, never the end of this task."""
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            _check_cancelled()
            if not (self._up.is_set() or self._syncing):
                continue
            try:
                lapsed = await self.board.heartbeat(self.worker_id, self.ttl)
            except Exception as exc:
                _check_cancelled()
                self._last_error = f"{type(exc).__name__}: {exc}"
                self._lost()
                continue
            if lapsed:  # the board may have abandoned our requests: re-publish them
                self._lost()
