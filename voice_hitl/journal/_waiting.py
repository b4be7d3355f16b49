"""The calls a ``sync`` journal holds: one future per ``settled`` record, done once stored.

Owned by the journal's writer thread (every method is called from it); a future is completed
with None when its record is stored, or with :class:`JournalUnavailableError` when the record
is dropped, not stored within the deadline, or the journal closes first. A future the call
cancelled meanwhile is left as it is.
"""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import Future, InvalidStateError

from ._errors import JournalUnavailableError
from ._record import Record

__all__ = ["Waiting", "fail"]


class Waiting:
    """Futures of held calls, keyed by their record (the same tuple object until stored)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._held: dict[int, tuple[Future[None], float]] = {}  # id(record) -> (done, by)

    def __bool__(self) -> bool:
        return bool(self._held)

    def hold(self, record: Record, done: Future[None]) -> None:
        """``record``'s call waits on ``done`` until it is stored (or ``timeout`` passes)."""
        self._held[id(record)] = (done, time.monotonic() + self.timeout)

    def stored(self, records: list[Record]) -> None:
        """These records are in the store: their calls go on."""
        for record in records:
            held = self._held.pop(id(record), None)
            if held is not None:
                _complete(held[0])

    def failed(self, records: list[Record], why: str) -> None:
        """These records will not be stored (dropped): their calls fail with ``why``."""
        for record in records:
            held = self._held.pop(id(record), None)
            if held is not None:
                _complete(held[0], JournalUnavailableError(why))

    def expire(self) -> list[Future[None]]:
        """Stop holding the calls past their deadline (their records stay queued); the caller
        counts them, then fails them with :func:`fail`."""
        now = time.monotonic()
        late = [key for key, (_, by) in self._held.items() if by <= now]
        return [self._held.pop(key)[0] for key in late]

    def fail_all(self, why: str) -> None:
        """The journal closes: fail every call still held."""
        for done, _ in self._held.values():
            _complete(done, JournalUnavailableError(why))
        self._held.clear()


def fail(futures: list[Future[None]], why: str) -> None:
    """Fail held calls with :class:`JournalUnavailableError` (``why``)."""
    for done in futures:
        _complete(done, JournalUnavailableError(why))


def _complete(done: Future[None], error: BaseException | None = None) -> None:
    """Settle a held call's future (it may have been cancelled meanwhile)."""
    with contextlib.suppress(InvalidStateError):
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)
