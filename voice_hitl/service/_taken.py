"""Taken means taken: an operator's answer is reported taken only when the call took it.

The desk does not settle a request itself. It *claims* it on the board
(:mod:`voice_hitl.board._protocol` draws the states), then waits, bounded, for the owning
worker's acknowledgement, which is the board's settled record carrying this claim::

    claim ─▶ "claimed" ──(worker takes it within WINDOW, hands it to its handler,
                          settles the record with it)──────────────────▶ taken   → 200
          │            ──(the call settled first: timed out, withdrawn;
          │               or another operator's answer was taken)──────▶ settled → 409
          │            ──(not taken within WINDOW: the claim is released;
          │               the worker is busy or was just killed)────────▶ not_taken → 503
          │                                  (its heartbeat lapsed) ────▶ gone    → 409
          │            ──(taken, but no settle in another WINDOW; or the
          │               board unreachable until the end)──────────────▶ unknown → 504
          ├─ "busy"     another operator's claim is waiting               → 409
          ├─ "settled"  already settled (by this very token: taken → 200)
          └─ "missing"  no such request                                  → 404

A claim not taken within its window can never be taken afterwards (the board checks the window
on its own clock), so "not taken" is final: the answer will not reach the call later. The one
uncertain end is ``unknown``; the claim's token comes from the ``Idempotency-Key`` when given,
so a retry with the same key returns the first attempt's outcome instead of answering twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ..board import BoardEvent, BoardRequest, BoardStatus, BoardUnavailableError, RequestBoard

__all__ = ["Acknowledgements", "Taken", "claim_and_wait", "claim_token"]

MAX_KEY = 200
"""Longest ``Idempotency-Key`` accepted."""


def claim_token(operator: str, key: str | None) -> str:
    """The claim's token: derived from the operator and the idempotency key (a retry makes
    the same claim), or random without a key."""
    if key is None:
        return secrets.token_hex(16)
    return hashlib.sha256(f"{operator}\0{key}".encode()).hexdigest()[:32]


class Acknowledgements:
    """Wakes the desk's waiters when a board event about their request arrives.

    :meth:`notify` is a :class:`~voice_hitl.service.FeedHub` listener; waiters also re-read
    the board on a short timer, so a missed event (the hub re-subscribing) only delays them.
    """

    def __init__(self) -> None:
        self._waiting: dict[str, list[_Watch]] = {}

    def notify(self, event: BoardEvent) -> None:
        """Wake whoever waits on ``event``'s request (a settled record is handed over)."""
        for watch in self._waiting.get(event.request.id, ()):
            if not event.request.is_open:
                watch.settled = event.request
            watch.set()

    @contextlib.contextmanager
    def watching(self, request_id: str) -> Iterator[_Watch]:
        """An event set whenever the board says something about ``request_id``."""
        changed = _Watch()
        self._waiting.setdefault(request_id, []).append(changed)
        try:
            yield changed
        finally:
            waiters = self._waiting[request_id]
            waiters.remove(changed)
            if not waiters:
                del self._waiting[request_id]


class _Watch(asyncio.Event):
    """Set on every board event about one request; keeps the settled record it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.settled: BoardRequest | None = None


@dataclass(frozen=True, slots=True)
class Taken:
    """How a claim ended (see the module docstring); ``request`` is the board's record."""

    outcome: Literal["taken", "settled", "busy", "missing", "not_taken", "gone", "unknown"]
    request: BoardRequest | None


def _ours(request: BoardRequest, token: str) -> bool:
    claim = request.claim
    return (
        not request.is_open
        and claim is not None
        and claim.token == token
        and claim.taken
        and request.status is claim.status
        and request.text == claim.text
    )


async def claim_and_wait(
    board: RequestBoard,
    acks: Acknowledgements,
    request_id: str,
    status: BoardStatus,
    text: str,
    *,
    token: str,
    window: float,
    by: str | None,
    via: str | None,
) -> Taken:
    """Claim ``request_id`` and wait for the owner's acknowledgement (module docstring).

    Waits at most about two ``window`` s. An unreachable board does not end the wait early
    once the claim may have landed: only a record read back tells what happened. "Taken" and
    "not taken" are said only once the board confirms them (:meth:`RequestBoard.confirm`:
    held by its ``min_replicas``, so a failover cannot take them back); else ``unknown``.

    Cancellation: the claim may be on the board; it is taken or lapses within ``window``.
    """
    taken = await _claim_and_wait(
        board, acks, request_id, status, text, token=token, window=window, by=by, via=via
    )
    if taken.outcome in ("taken", "not_taken"):
        try:
            await board.confirm()
        except BoardUnavailableError:
            return Taken("unknown", taken.request)
    return taken


async def _claim_and_wait(
    board: RequestBoard,
    acks: Acknowledgements,
    request_id: str,
    status: BoardStatus,
    text: str,
    *,
    token: str,
    window: float,
    by: str | None,
    via: str | None,
) -> Taken:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + window + 0.2  # past the board's window, whatever the clocks
    record: BoardRequest | None = None
    with acks.watching(request_id) as changed:
        try:
            claimed = await board.claim(
                request_id, status, text, token=token, window=window, by=by, via=via
            )
        except BoardUnavailableError:
            pass  # it may have landed: only a record read back tells
        else:
            if claimed.outcome == "missing":
                return Taken("missing", None)
            record = claimed.request
            if claimed.outcome == "busy":
                return Taken("busy", record)
            if claimed.outcome == "settled":
                assert record is not None
                return Taken("taken" if _ours(record, token) else "settled", record)
        delay = 0.02  # board events wake the wait sooner (the hub); polling is the fallback
        taken_deadline: float | None = None
        while True:
            if record is not None and not record.is_open:
                return Taken("taken" if _ours(record, token) else "settled", record)
            claim = record.claim if record is not None else None
            mine = claim is not None and claim.token == token
            if record is not None and not mine:
                # Open without our claim: it never landed (an unreachable board refused it) or
                # the request was opened again after being abandoned; nothing can take it.
                return Taken("not_taken", record)
            if claim is not None and mine and claim.taken and taken_deadline is None:
                taken_deadline = loop.time() + window
            now = loop.time()
            if taken_deadline is not None and now >= taken_deadline:
                return Taken("unknown", record)
            if taken_deadline is None and now >= deadline:
                try:
                    released = await board.release(request_id, token)
                except BoardUnavailableError:
                    return Taken("unknown", record)
                if released is None:
                    return Taken("missing", None)
                if not released.is_open:
                    if released.status is BoardStatus.ABANDONED and not _ours(released, token):
                        return Taken("gone", released)
                    return Taken("taken" if _ours(released, token) else "settled", released)
                if released.claim is not None and released.claim.token == token:
                    record = released  # taken just in time: wait for the settle
                    continue
                return Taken("not_taken", released)
            try:
                async with asyncio.timeout(delay):
                    await changed.wait()
            except TimeoutError:
                delay = min(delay * 2, 0.25)  # no event: poll less often
            # Cleared before reading: an event that comes after the read wakes the next wait
            # (one that came before, even during the claim, is in what the read returns).
            changed.clear()
            if changed.settled is not None:
                record = changed.settled  # the board's event carried the settled record
                continue
            try:
                record = await board.get(request_id)
            except BoardUnavailableError:
                record = None  # the release step at the deadline decides
                continue
            if record is None:
                return Taken("missing", None)
