"""``HumanInputHandler``: the primitive that pauses one call until a person answers.

A request is answerable as soon as :meth:`HumanInputHandler.create` returns. Its notification
(the ``ON_USER_INPUT_REQUIRED`` callback of its channel) runs in a task alongside the wait, so a
slow broadcast never delays an answer. :meth:`HumanInputHandler.wait` owns the cleanup: it
retires the request when the outcome arrives, and the outcome stays replayable in a bounded
retention. Observers (:meth:`HumanInputHandler.add_observer`) follow every request's life from
outside the call path; see :mod:`voice_hitl.human._lifecycle`.

Threads: :meth:`~HumanInputHandler.resolve`, :meth:`~HumanInputHandler.reject` and
:meth:`~HumanInputHandler.release` may be called from any thread (a web framework's worker, a
GUI callback). Off the request's event loop the call is handed to that loop and the calling
thread blocks until the loop has run it, so it returns the same boolean and the waiter wakes at
once. Everything else is for the loop's own thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import itertools
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Protocol, TypeVar

from .._checks import MAX_SECONDS, non_negative_int, optional_seconds
from .._types import ChannelType
from ._lifecycle import (
    RequestDelivered,
    RequestEvent,
    RequestNoted,
    RequestNotified,
    RequestObserver,
    RequestOpened,
    RequestSettled,
    SettledOutcome,
)
from ._pending import (
    NO_CONTEXT,
    OutcomeKind,
    PendingInput,
    PendingInputEvent,
    PendingInputStatus,
    unwrap,
    utc_now,
)
from ._slots import Deadlines, Request

__all__ = [
    "DENIED_BY_HOOK",
    "DeadlineClock",
    "HumanInputHandler",
    "InputRequiredCallback",
    "ambient_input",
]

logger = logging.getLogger("voice_hitl.human_input")

InputRequiredCallback = Callable[[PendingInputEvent], Awaitable[str | None]]
"""Notifies that a request needs an answer; returns a denial reason, or None to allow."""

DENIED_BY_HOOK = "Denied by ON_USER_INPUT_REQUIRED hook"


class DeadlineClock(Protocol):
    """A clock that wait deadlines count on instead of the event loop's (for example a
    scripted call's own time, so a replay's verdict does not depend on the machine's load)."""

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once ``seconds`` have passed on this clock; returns a canceller."""
        ...


_AMBIENT: contextvars.ContextVar[tuple[InputRequiredCallback, str | None] | None] = (
    contextvars.ContextVar("voice_hitl_ambient_input", default=None)
)


@contextlib.contextmanager
def ambient_input(notifier: InputRequiredCallback, actor_id: str | None) -> Iterator[None]:
    """For the block (a channel asking a runtime's own handler about a call): a request
    created by a handler with no notifier for its channel is notified through ``notifier``,
    and one created without an ``actor_id`` gets ``actor_id`` (the turn's author)."""
    token = _AMBIENT.set((notifier, actor_id))
    try:
        yield
    finally:
        _AMBIENT.reset(token)

_STATUS_OF = {
    OutcomeKind.ANSWERED: PendingInputStatus.RESOLVED,
    OutcomeKind.REJECTED: PendingInputStatus.REJECTED,
    OutcomeKind.TIMED_OUT: PendingInputStatus.TIMED_OUT,
    OutcomeKind.GIVEN_UP: PendingInputStatus.REJECTED,
}


_OUTCOME_NAME: dict[OutcomeKind, SettledOutcome] = {
    OutcomeKind.ANSWERED: "answered",
    OutcomeKind.REJECTED: "rejected",
    OutcomeKind.TIMED_OUT: "timed_out",
    OutcomeKind.GIVEN_UP: "withdrawn",
}

_ANSWERED = OutcomeKind.ANSWERED
_PENDING = PendingInputStatus.PENDING
_RESOLVED = PendingInputStatus.RESOLVED

# An outcome as the retention keeps it: (kind, text).
_Outcome = tuple[OutcomeKind, str]

_T = TypeVar("_T")
_get_ident = threading.get_ident
_NO_THREAD_ID = object()


def _runs_elsewhere(loop: asyncio.AbstractEventLoop) -> bool:
    """True when ``loop`` is running in another thread than this one (cheap on asyncio's own
    loops: the thread id they record while running; other loops are asked)."""
    thread_id = getattr(loop, "_thread_id", _NO_THREAD_ID)
    if thread_id is _NO_THREAD_ID:
        return loop.is_running() and asyncio._get_running_loop() is not loop
    return thread_id is not None and thread_id != _get_ident()


def _kind(value: object) -> str:
    return type(value).__name__


_CLOSE_SLICE = 256  # waiters woken per loop turn when close() gives many requests up


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _wake_in_slices(
    loop: asyncio.AbstractEventLoop, waiters: list[asyncio.Future[None]], start: int
) -> None:
    """Wake ``waiters[start:start + _CLOSE_SLICE]``, then the rest on later loop turns."""
    end = start + _CLOSE_SLICE
    for waiter in waiters[start:end]:
        if not waiter.done():
            waiter.set_result(None)
    if end < len(waiters):
        loop.call_soon(_wake_in_slices, loop, waiters, end)


_HANDOFF_POLL = 0.05  # seconds between checks that the owning loop still runs

_ID_BATCH = 64  # request ids made at a time
_TOKEN_STARTS = range(0, 16 * _ID_BATCH, 16)  # each id's 16 hex digits in a batch's draw
_now = datetime.now


class HumanInputHandler:
    """Creates, waits on and settles requests for human input.

    One handler may serve several channels: notification callbacks are registered per
    ``channel_id`` and :meth:`close` can close a single channel's scope.

    Args:
        retention: How many settled outcomes stay replayable by :meth:`wait` (an LRU);
            ``0`` switches retention off.
        clock: What :meth:`wait`'s ``timeout`` counts on (a :class:`DeadlineClock`); the
            event loop's clock when None.

    Raises:
        ValueError: ``retention`` is negative or not a whole number.
    """

    def __init__(self, retention: int = 128, *, clock: DeadlineClock | None = None) -> None:
        self._retention = non_negative_int("retention", retention)
        self._clock = clock
        self._active: dict[str, Request] = {}
        self._retained: OrderedDict[str, _Outcome] = OrderedDict()
        self._deadlines: dict[float, Deadlines] = {}
        self._notifiers: dict[str, InputRequiredCallback] = {}
        self._notify_tasks: dict[str, set[asyncio.Task[None]]] = {}
        self._closed = False
        self._closed_channels: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop creates last came from
        self._id_prefix = f"hi_{secrets.token_hex(4)}_"
        self._ids = itertools.count(1)
        self._fresh_ids: Iterator[str] = iter(())  # ids made ahead, in batches
        self._observers: list[RequestObserver] = []
        # Settled outcomes an observer must store before wait() returns them (sync journal).
        self._holds: dict[str, list[concurrent.futures.Future[None]]] = {}

    # -- observers -----------------------------------------------------------------------

    def add_observer(self, observer: RequestObserver) -> Callable[[], None]:
        """Send every request's lifecycle events to ``observer``; returns its remover.

        ``observer`` is called synchronously and must not block; an exception it raises is
        logged and does not reach the call path.
        """
        self._observers.append(observer)

        def remove() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return remove

    def _emit(self, event: RequestEvent) -> None:
        for observer in tuple(self._observers):
            try:
                hold = observer(event)
            except Exception:
                logger.exception("request observer %r failed on %s", observer, event.type)
            else:
                if isinstance(hold, concurrent.futures.Future):
                    self._hold(event.pending_id, hold)

    def _hold(self, pending_id: str, hold: concurrent.futures.Future[None]) -> None:
        holds = self._holds
        if len(holds) >= 1024:  # requests nobody waits on: forget the finished holds
            for key in [k for k, fs in holds.items() if all(f.done() for f in fs)]:
                del holds[key]
        holds.setdefault(pending_id, []).append(hold)

    async def _held(self, pending_id: str) -> None:
        """Await what observers must store before the outcome is returned (sync journal)."""
        for hold in self._holds.pop(pending_id, ()):
            await asyncio.wrap_future(hold)

    def note(self, pending_id: str, note: str, data: Mapping[str, Any] | None = None) -> bool:
        """Tell observers about a step of an open request (e.g. ``escalated``, ``approval``).

        Returns:
            False when no open request has that id (nothing is emitted).
        """
        request = self._active.get(pending_id)
        if request is None or request._outcome is not None:
            return False
        if self._observers:
            self._emit(RequestNoted(pending_id, utc_now(), note, dict(data or {})))
        return True

    def tell(self, pending_id: str, note: str, data: Mapping[str, Any] | None = None) -> None:
        """Tell observers about a request whatever its state, settled ones included (e.g. an
        approval given for the rest of a call, and its later revocation)."""
        if self._observers:
            self._emit(RequestNoted(pending_id, utc_now(), note, dict(data or {})))

    def record_delivery(
        self, pending_id: str, tool_call_id: str, outcome: str, text: str, detail: str = ""
    ) -> None:
        """Tell observers what the model reads for a request's tool call (the gate calls this)."""
        if self._observers:
            self._emit(RequestDelivered(pending_id, utc_now(), tool_call_id, outcome, text, detail))

    # -- notification routing ------------------------------------------------------------

    def set_notifier(self, channel_id: str, callback: InputRequiredCallback | None) -> None:
        """Route ``ON_USER_INPUT_REQUIRED`` for ``channel_id`` to ``callback`` (None removes)."""
        if callback is None:
            self._notifiers.pop(channel_id, None)
        else:
            self._notifiers[channel_id] = callback

    # -- creating ------------------------------------------------------------------------

    async def create(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        *,
        room_id: str = "",
        tool_call_id: str = "",
        channel_id: str = "",
        channel_type: ChannelType = ChannelType.AI,
        actor_id: str | None = None,
        timeout: float | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> PendingInput:
        """Register a request; it is answerable as soon as this returns.

        The channel's notification callback is scheduled in a task that runs alongside the
        wait. Call :meth:`wait` next: it owns the cleanup. ``timeout`` (the wait's, if known)
        sets the request's ``deadline``; ``context`` is kept on it for observers and hooks.

        Raises:
            RuntimeError: The handler, or this channel's scope, is closed.
            ValueError: ``timeout`` is not None and not a finite number of seconds above
                zero (at most ten years).

        Cancellation: safe; nothing is registered unless this returns.
        """
        if timeout is not None:
            optional_seconds("timeout", timeout)
        return self._create(
            tool_name,
            arguments,
            room_id,
            tool_call_id,
            channel_id,
            channel_type,
            actor_id,
            False,
            timeout,
            context,
        )

    async def create_detached(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        *,
        room_id: str = "",
        tool_call_id: str = "",
        channel_id: str = "",
        channel_type: ChannelType = ChannelType.AI,
        actor_id: str | None = None,
        timeout: float | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> PendingInput:
        """Register a request nobody will :meth:`wait` on; the caller must :meth:`release` it.

        Raises:
            RuntimeError: The handler, or this channel's scope, is closed.
            ValueError: A ``timeout`` that is not a finite number of seconds above zero.

        Cancellation: safe; nothing is registered unless this returns.
        """
        if timeout is not None:
            optional_seconds("timeout", timeout)
        return self._create(
            tool_name,
            arguments,
            room_id,
            tool_call_id,
            channel_id,
            channel_type,
            actor_id,
            True,
            timeout,
            context,
        )

    def _create(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        room_id: str,
        tool_call_id: str,
        channel_id: str,
        channel_type: ChannelType,
        actor_id: str | None,
        detached: bool,
        timeout: float | None,
        context: Mapping[str, Any] | None,
    ) -> PendingInput:
        if self._closed:
            raise RuntimeError("HumanInputHandler is closed")
        if self._closed_channels and channel_id in self._closed_channels:
            raise RuntimeError(f"HumanInputHandler is closed for channel {channel_id!r}")
        ambient = _AMBIENT.get()
        if ambient is not None and actor_id is None:
            actor_id = ambient[1]
        pending_id = next(self._fresh_ids, None) or self._more_ids()
        created_at = _now(UTC)
        # Every field positionally: much cheaper than keywords and default factories.
        request = Request(
            pending_id,
            tool_name,
            arguments,
            room_id,
            tool_call_id,
            channel_id,
            channel_type,
            _PENDING,
            None,
            detached,
            created_at,
            actor_id,
            None if timeout is None else created_at + timedelta(seconds=timeout),
            context or NO_CONTEXT,
        )
        loop = self._loop
        if loop is None or getattr(loop, "_thread_id", None) != _get_ident():
            # Not the loop this thread is running: look it up (rare: a new loop or thread).
            loop = self._loop = asyncio.get_running_loop()
        request._loop = loop
        request._outcome = request._waiter = request._watchers = None
        self._active[pending_id] = request
        if self._observers:
            self._emit(RequestOpened(request, created_at))
        notifier = self._notifiers.get(channel_id) if self._notifiers else None
        if notifier is None and ambient is not None:
            notifier = ambient[0]
        if notifier is not None:
            task = asyncio.create_task(
                self._notify(request, notifier), name=f"notify-input-required-{pending_id}"
            )
            tasks = self._notify_tasks.setdefault(channel_id, set())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return request

    def _more_ids(self) -> str:
        """Make the next ``_ID_BATCH`` request ids and return the first.

        Each id is the handler's random prefix, a counter (ids sort in creation order) and a
        random part of its own, so one id does not give away the next (an operator outside a
        request's scope cannot guess it). The random parts are drawn for the whole batch at
        once: one call to the system's random source instead of one per request.
        """
        prefix, counter = self._id_prefix, self._ids
        tokens = secrets.token_hex(8 * _ID_BATCH)
        batch = [f"{prefix}{next(counter):x}_{tokens[i : i + 16]}" for i in _TOKEN_STARTS]
        ids = self._fresh_ids = iter(batch)
        return next(ids)

    async def _notify(self, request: Request, notifier: InputRequiredCallback) -> None:
        pending_id = request.pending_id
        try:
            denial = await notifier(request.to_event())
        except Exception as exc:
            logger.exception(
                "ON_USER_INPUT_REQUIRED notification failed for %s; the request stays open",
                pending_id,
            )
            if self._observers:
                self._emit(RequestNotified(pending_id, utc_now(), None, repr(exc)))
            return
        if self._observers:
            self._emit(RequestNotified(pending_id, utc_now(), denial))
        if denial is not None:
            reason = f"{DENIED_BY_HOOK}: {denial}" if denial else DENIED_BY_HOOK
            self._settle(request, OutcomeKind.REJECTED, reason)

    # -- waiting -------------------------------------------------------------------------

    async def wait(self, pending_id: str, *, timeout: float | None = 300.0) -> str:
        """Wait for the request's outcome and retire it.

        An id that already left the active set replays its retained outcome.

        Returns:
            The answer.

        Raises:
            TimeoutError: Nobody answered within ``timeout`` seconds (status ``TIMED_OUT``).
            HumanInputRejectedError: The request was rejected; carries the reason.
            RuntimeError: The handler gave the request up (closed, released, withdrawn).
            ValueError: The id was never seen, or was evicted from the retention; or
                ``timeout`` is not None and not a finite number of seconds above zero.
            ToolFailedError: An observer that must store the outcome first (a journal with
                ``durability="sync"``) could not (``journal.JournalUnavailableError``).

        Cancellation: withdraws the request: it is given up and a later ``resolve()``
        returns False (once it is settled, e.g. while a sync journal stores the outcome, the
        outcome stands).
        """
        if timeout is not None and not (0 < timeout <= MAX_SECONDS):  # NaN fails too
            optional_seconds("timeout", timeout)  # raises, naming what is wrong
        request = self._active.get(pending_id)
        if request is None:
            outcome = self._retained.get(pending_id)
            if outcome is None:
                raise ValueError(f"unknown pending id {pending_id!r} (never created, or evicted)")
            self._retained.move_to_end(pending_id)
            return unwrap(*outcome)
        if request._outcome is None:
            if request._waiter is not None:
                raise RuntimeError(f"request {pending_id!r} is already being waited on")
            loop = asyncio.get_running_loop()
            waiter = request._waiter = loop.create_future()
            timer: asyncio.TimerHandle | None = None
            stop_clock: Callable[[], None] | None = None
            if timeout is not None and self._clock is not None:
                stop_clock = self._clock.call_later(
                    timeout, partial(self._time_out, request, timeout)
                )
            elif timeout is not None:
                deadlines = self._deadlines.get(timeout)
                if deadlines is not None and deadlines.loop is loop:
                    deadlines.add(request)  # the common case: one shared timer
                else:
                    timer = self._time(request, loop, timeout, deadlines)
            try:
                await waiter
            except asyncio.CancelledError as cancelled:
                detail = str(cancelled.args[0]) if cancelled.args else ""
                self._settle(request, OutcomeKind.GIVEN_UP, "Human input request withdrawn", detail)
                self._retire(request)
                raise
            finally:
                request._waiter = None
                if timer is not None:
                    timer.cancel()
                if stop_clock is not None:
                    stop_clock()
        if not request.detached:
            self._active.pop(pending_id, None)
        if self._holds:
            await self._held(pending_id)
        outcome = request._outcome
        assert outcome is not None
        kind, text = outcome
        return text if kind is _ANSWERED else unwrap(kind, text)

    def _time(
        self,
        request: Request,
        loop: asyncio.AbstractEventLoop,
        timeout: float,
        deadlines: Deadlines | None,
    ) -> asyncio.TimerHandle | None:
        """Time a wait whose loop has no shared timer for ``timeout`` yet: start one, or,
        while another loop still has live waits of this timeout (rare), a timer of its own.

        Returns:
            The wait's own timer, to cancel when it ends; None when the shared one serves it.
        """
        if deadlines is not None and deadlines.idle:
            deadlines.drop()  # left behind by a loop with no live wait: start afresh
            deadlines = None
        if deadlines is None:
            deadlines = self._deadlines[timeout] = Deadlines(
                loop, timeout, self._time_out, self._forget_deadlines
            )
            deadlines.add(request)
            return None
        return loop.call_later(timeout, self._time_out, request, timeout)

    def _forget_deadlines(self, deadlines: Deadlines) -> None:
        if self._deadlines.get(deadlines.timeout) is deadlines:
            del self._deadlines[deadlines.timeout]

    def _time_out(self, request: Request, timeout: float) -> None:
        self._settle(request, OutcomeKind.TIMED_OUT, f"Human input timed out after {timeout:g}s")

    def _retire(self, request: Request) -> None:
        if not request.detached:
            self._active.pop(request.pending_id, None)

    # -- settling ------------------------------------------------------------------------

    def _settle(
        self,
        request: Request,
        kind: OutcomeKind,
        text: str,
        detail: str = "",
        by: str | None = None,
        via: str | None = None,
    ) -> bool:
        if request._outcome is not None:
            return False
        outcome = request._outcome = (kind, text)
        if kind is _ANSWERED:
            request.status = _RESOLVED
            request.result = text
        else:
            request.status = _STATUS_OF[kind]
        if self._retention:
            retained = self._retained
            retained[request.pending_id] = outcome
            if len(retained) > self._retention:
                retained.popitem(last=False)
        if self._observers:
            self._emit(
                RequestSettled(
                    request.pending_id,
                    utc_now(),
                    request.status,
                    _OUTCOME_NAME[kind],
                    text,
                    detail,
                    by,
                    via,
                )
            )
        waiter = request._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        watchers = request._watchers
        if watchers is not None:
            request._watchers = None
            for watcher in watchers:
                try:
                    watcher(request)
                except Exception:
                    logger.exception("settle watcher of %s failed", request.pending_id)
        return True

    def watch(self, pending_id: str, callback: Callable[[PendingInput], None]) -> bool:
        """Call ``callback(pending)`` once the active request settles (now, if it has).

        For code that answers a request (a spoken dialogue, an operator UI) and must stop
        when someone else settles it. The callback must not block.

        Returns:
            False when no active request has that id.
        """
        request = self._active.get(pending_id)
        if request is None:
            return False
        if request._outcome is not None:
            callback(request)
        elif request._watchers is None:
            request._watchers = [callback]
        else:
            request._watchers.append(callback)
        return True

    def resolve(
        self, pending_id: str, result: str, *, by: str | None = None, via: str | None = None
    ) -> bool:
        """Answer a request. True only if it was still pending (the first settle wins).

        ``by`` and ``via`` (who answered, and how) are told to observers.

        Thread-safe: from another thread the answer is handed to the request's loop and this
        returns once the loop has taken it (see the module docstring).

        Raises:
            TypeError: ``result`` is not text (the model reads it as is: JSON text, say).
            RuntimeError: Called off the request's loop while that loop is not running.
        """
        if not isinstance(result, str):
            raise TypeError(f"result must be str (the text the model reads), got {_kind(result)}")
        request = self._active.get(pending_id)
        if request is None:
            return False
        loop = request._loop
        if getattr(loop, "_thread_id", None) != _get_ident() and _runs_elsewhere(loop):
            return self._on_loop(loop, partial(self.resolve, by=by, via=via), pending_id, result)
        return self._settle(request, _ANSWERED, result, "", by, via)

    def reject(
        self, pending_id: str, reason: str = "", *, by: str | None = None, via: str | None = None
    ) -> bool:
        """Refuse a request with a reason the model reads. True only if it was still pending.

        ``by`` and ``via`` (who refused, and how) are told to observers.

        Thread-safe, like :meth:`resolve`.

        Raises:
            TypeError: ``reason`` is not text.
            RuntimeError: Called off the request's loop while that loop is not running.
        """
        if not isinstance(reason, str):
            raise TypeError(f"reason must be str, got {_kind(reason)}")
        request = self._active.get(pending_id)
        if request is None:
            return False
        loop = request._loop
        if getattr(loop, "_thread_id", None) != _get_ident() and _runs_elsewhere(loop):
            return self._on_loop(loop, partial(self.reject, by=by, via=via), pending_id, reason)
        return self._settle(request, OutcomeKind.REJECTED, reason, "", by, via)

    def release(self, pending_id: str) -> bool:
        """Drop a request its caller owns, giving it up if still unanswered.

        Thread-safe, like :meth:`resolve`.

        Returns:
            True if an active request was dropped.
        """
        request = self._active.get(pending_id)
        if request is None:
            return False
        loop = request._loop
        if getattr(loop, "_thread_id", None) != _get_ident() and _runs_elsewhere(loop):
            return self._on_loop(loop, self.release, pending_id)
        if self._active.pop(pending_id, None) is None:
            return False
        self._settle(request, OutcomeKind.GIVEN_UP, "Human input request released")
        return True

    @staticmethod
    def _on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., _T], *args: Any) -> _T:
        """Run ``fn(*args)`` on ``loop`` (running in another thread) and return its result.

        Blocks the calling thread until the loop has run it. If the loop stops first, the
        call is withdrawn and this raises instead of waiting for a loop that may never run.
        """
        done: concurrent.futures.Future[_T] = concurrent.futures.Future()

        def run() -> None:
            if done.set_running_or_notify_cancel():
                try:
                    done.set_result(fn(*args))
                except BaseException as exc:
                    done.set_exception(exc)

        try:
            handle = loop.call_soon_threadsafe(run)
        except RuntimeError:  # closed meanwhile
            raise RuntimeError("the event loop of this request is closed") from None
        while True:
            try:
                return done.result(timeout=_HANDOFF_POLL)
            except concurrent.futures.TimeoutError:
                if not loop.is_running() and done.cancel():
                    handle.cancel()
                    raise RuntimeError(
                        "the event loop of this request stopped before it could take the call"
                    ) from None

    async def close(self, *, channel_id: str | None = None) -> None:
        """Give up active requests and refuse later creates: all, or one channel's.

        The closed scope's notification callback is dropped (so a closed channel is not kept
        alive by a shared handler) and its notification tasks are cancelled and awaited.
        Idempotent.

        Every request is settled before the first await (a late ``resolve()`` returns False),
        but their waiters are woken a slice at a time, one slice per loop turn, so closing
        thousands of requests never stalls the other work on the loop for long.

        Cancellation: the requests are given up before the first await; cancelling only stops
        the wait for notification tasks to finish (they were already cancelled).
        """
        if channel_id is None:
            self._closed = True
            requests: Iterable[Request] = list(self._active.values())
            tasks = [t for group in self._notify_tasks.values() for t in group]
            self._notifiers.clear()
            self._notify_tasks.clear()
        else:
            self._closed_channels.add(channel_id)
            requests = [r for r in self._active.values() if r.channel_id == channel_id]
            tasks = list(self._notify_tasks.pop(channel_id, ()))
            self._notifiers.pop(channel_id, None)
        reason = "Human input handler closed"
        loop = asyncio.get_running_loop()
        deferred: list[asyncio.Future[None]] = []
        for request in requests:
            waiter = request._waiter
            if waiter is not None and request._loop is loop:
                request._waiter = None  # settle without waking; woken below, in slices
                self._settle(request, OutcomeKind.GIVEN_UP, reason)
                request._waiter = waiter
                deferred.append(waiter)
            elif waiter is not None and request._loop.is_running() and request._loop is not loop:
                request._waiter = None  # a wait on another thread's loop: wake it there
                self._settle(request, OutcomeKind.GIVEN_UP, reason)
                request._waiter = waiter
                request._loop.call_soon_threadsafe(_wake, waiter)
            else:
                self._settle(request, OutcomeKind.GIVEN_UP, reason)
            self._active.pop(request.pending_id, None)
        if deferred:
            _wake_in_slices(loop, deferred, 0)
        # A notification that closes its own scope is left to finish by itself.
        current = asyncio.current_task()
        tasks = [task for task in tasks if task is not current]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def reopen(self, channel_id: str) -> None:
        """Accept creates for a channel whose scope was closed (a global close is final)."""
        self._closed_channels.discard(channel_id)

    # -- inspection ----------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran without a ``channel_id``."""
        return self._closed

    def is_open_for(self, channel_id: str) -> bool:
        """True when creates for ``channel_id`` are accepted."""
        return not self._closed and channel_id not in self._closed_channels

    @property
    def pending(self) -> dict[str, PendingInput]:
        """A snapshot of the requests still waiting for an outcome."""
        return {
            pid: request
            for pid, request in self._active.items()
            if request.status is PendingInputStatus.PENDING
        }

    def get(self, pending_id: str) -> PendingInput | None:
        """The active request with that id, if any."""
        return self._active.get(pending_id)
