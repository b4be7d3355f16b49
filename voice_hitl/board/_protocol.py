"""The request board interface every backend implements (:class:`RequestBoard`).

Backends: :class:`~voice_hitl.board.MemoryBoard` (one process, no server: the embedded
default) and :class:`~voice_hitl.board.RedisBoard` (many workers on many machines). One test
suite runs against both.

Rules every backend keeps:

- **First settle wins, atomically.** :meth:`RequestBoard.settle` changes an open request's
  status once; every later attempt gets ``won=False`` and the settled record (status, when,
  by whom). A settle never overwrites another.
- **Owners heartbeat.** A worker calls :meth:`RequestBoard.heartbeat` with a time to live;
  when it lapses, its open requests are ``abandoned`` (by :meth:`RequestBoard.reap`, or at the
  latest when somebody tries to answer one).
- **Settled records outlive a restart.** A worker remembers what its requests settled to
  (its own settles included, before the board confirms them) and :meth:`RequestBoard.restore`
  puts back the ones a server restarted without persistence forgot, so a late answer gets
  "already settled", and a retried answer its first outcome, not "no such request".
- **A lost state is told, not hidden.** :meth:`RequestBoard.lost_state` says how long ago the
  board found that its server had forgotten everything (a restart without persistence). Until
  the workers have re-published (their heartbeat interval bounds when they notice), a missing
  id means "not back yet", not "no such request"; afterwards, within the retention, "this board
  may have forgotten it".
- **Publishing is idempotent.** Re-publishing an open request changes nothing; re-publishing a
  settled one returns the settled record (so a reconnecting worker learns what it missed);
  ``revive=True`` reopens a request that was only ``abandoned``, for an owner that is back.
- **Events.** :meth:`RequestBoard.subscribe` yields :class:`BoardOpened` and
  :class:`BoardSettled` (all of them, or those of one worker's requests), and
  :class:`BoardEscalated` (:meth:`RequestBoard.escalate`; all-requests subscriptions only),
  from the moment its
  ``async with`` block is entered. A subscription may lose events while the server is
  unreachable: it then raises :class:`BoardUnavailableError`, and the subscriber re-reads what
  it needs after subscribing again.

**Taken means taken.** An operator's answer is not a settle: the operator service *claims* the
request, and only the owning worker settles it, after its handler took the answer. A request's
claim moves through these states (one claim at a time; all steps atomic on the board)::

    open ──claim(token, answer, window)──▶ claimed ──take(token)──▶ taken ──▶ settled
      ▲                                       │                       │   (answered/rejected
      └──────────release(token)───────────────┘                       │    with the claim,
             (window over, not taken;                                 │    or the handler's
              abandoned if the worker's                               │    own outcome if it
              heartbeat lapsed)                                       │    settled first)
                                                                      ▼
                                                 abandoned (the worker died after taking)

- :meth:`RequestBoard.claim` puts ``(token, status, text, by, via)`` on an open request until
  ``window`` seconds from now (the board's clock) and tells the owner (a
  :class:`BoardClaimed` event on its subscription). A second claim with the same token is the
  same claim (a retry); another token gets ``busy``.
- :meth:`RequestBoard.take` is the owner's compare-and-set ``claimed → taken`` for that token
  before the window ends; only then does the worker hand the answer to its handler. A claim
  not taken in its window can never be taken.
- The owner settles the request as usual (``settle(..., worker=owner)``): with the claim's
  status and text when its handler accepted the answer, or with the handler's own outcome
  (timed out, withdrawn) when the call ended first. The settled record keeps the claim, so the
  claimant can tell its answer was the one taken.
- :meth:`RequestBoard.release` (the claimant, after the window) removes a claim that was not
  taken; the request is open again, or abandoned when its owner stopped heartbeating.

So the operator service answers 200 only for a settled record carrying its own taken claim;
every other end names the reason (settled otherwise, not taken in time, worker gone).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from ._model import BoardEvent, BoardRequest, BoardStatus, ClaimResult, SettleResult

__all__ = ["RequestBoard"]


@runtime_checkable
class RequestBoard(Protocol):
    """Where open requests are published and settled from any process (module docstring)."""

    async def publish(self, request: BoardRequest, *, revive: bool = False) -> BoardRequest:
        """Put an open request on the board; returns the board's record of it afterwards.

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: the request may or may not be on the board; publishing again is safe.
        """
        ...

    async def publish_many(
        self, requests: Sequence[BoardRequest], *, revive: bool = False
    ) -> list[BoardRequest]:
        """:meth:`publish` each of ``requests`` (in one round trip where the backend can);
        returns the board's records in the same order.

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: some may be on the board; publishing again is safe.
        """
        ...

    async def settle(
        self,
        request_id: str,
        status: BoardStatus,
        text: str = "",
        *,
        by: str | None = None,
        via: str | None = None,
        detail: str = "",
        worker: str | None = None,
    ) -> SettleResult:
        """Settle an open request, if nobody did first.

        ``worker`` names the caller when it is the request's owner (its own settles skip the
        liveness check and win over a claim); an answer for a request whose owner's heartbeat
        lapsed abandons it instead and loses, and so does another's settle while a claim
        waits.

        Raises:
            BoardUnavailableError: The server cannot be reached.
            ValueError: ``status`` is ``open``.

        Cancellation: the settle may or may not have happened; :meth:`get` tells.
        """
        ...

    async def claim(
        self,
        request_id: str,
        status: BoardStatus,
        text: str,
        *,
        token: str,
        window: float,
        by: str | None = None,
        via: str | None = None,
    ) -> ClaimResult:
        """Claim an open request for an answer (``answered``) or a rejection (``rejected``)
        that its owner must take within ``window`` seconds (module docstring).

        An owner whose heartbeat lapsed makes the request ``abandoned`` instead (``settled``).

        Raises:
            BoardUnavailableError: The server cannot be reached.
            ValueError: ``status`` is not ``answered`` or ``rejected``.

        Cancellation: the claim may or may not be on the board; claiming again with the same
        token is safe.
        """
        ...

    async def take(self, request_id: str, token: str, worker: str) -> bool:
        """The owner's step ``claimed → taken``: True when the claim is taken for ``worker``
        (open, ``worker`` is the owner, same token, and taken by this call within the window
        or by an earlier call: a take whose reply was lost can be repeated).

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: the claim may or may not be taken; :meth:`get` tells.
        """
        ...

    async def release(self, request_id: str, token: str) -> BoardRequest | None:
        """Remove a claim its owner did not take (module docstring); returns the record
        afterwards (still claimed and taken when the owner took it first; None: no such id).

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: the claim may or may not be released; :meth:`get` tells.
        """
        ...

    async def escalate(self, request_id: str, escalation: Mapping[str, Any]) -> bool:
        """Tell the all-requests subscribers that the owner escalated an open request
        (a :class:`BoardEscalated` with ``escalation``, a JSON object); changes no record.

        Returns:
            True when the request is open (the event went out); False otherwise.

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: the event may or may not have gone out.
        """
        ...

    async def restore(self, requests: Sequence[BoardRequest]) -> int:
        """Put back settled records the board lost (a server restarted without persistence),
        so late answers still hear who settled them; never overwrites a settled record, nor
        another worker's open one. A record the board shows *open* for the same worker is
        settled from it (announced as :class:`BoardSettled`): the owner settled it, and a
        failover to a replica that had not received the settle lost it.

        Returns:
            How many records were put back.

        Raises:
            BoardUnavailableError: The server cannot be reached.
            ValueError: One of ``requests`` is open (nothing is put back).

        Cancellation: some records may be back; restoring again is safe.
        """
        ...

    async def lost_state(self) -> float | None:
        """Seconds since the board found that its server had lost every record (restarted
        without persistence), or None: it never did, or longer ago than its retention.

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: safe.
        """
        ...

    async def confirm(self) -> None:
        """Return once everything this client has read or written so far is held by the
        board's configured replicas (``min_replicas``; a board with none returns at once), so
        a failover cannot take it back. The operator service confirms before it says 200.

        Raises:
            BoardOutcomeUnknownError: Not enough replicas acknowledged in time.
            BoardUnavailableError: The server cannot be reached.

        Cancellation: safe.
        """
        ...

    async def get(self, request_id: str) -> BoardRequest | None:
        """The request (open, or settled and still retained), or None.

        Cancellation: safe.
        """
        ...

    async def open_requests(self) -> list[BoardRequest]:
        """Every open request, oldest first.

        Cancellation: safe.
        """
        ...

    async def heartbeat(self, worker: str, ttl: float) -> bool:
        """Mark ``worker`` alive for ``ttl`` seconds.

        Returns:
            True when the worker had no live heartbeat before (first beat, or it lapsed).

        Cancellation: safe.
        """
        ...

    async def reap(self) -> list[BoardRequest]:
        """Abandon the open requests of workers whose heartbeat lapsed; returns them.

        Cancellation: the reap may be partial; reaping again finishes it.
        """
        ...

    def subscribe(
        self, worker: str | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[BoardEvent]]:
        """Events of every request, or only of ``worker``'s requests (see the module
        docstring); subscribed when the ``async with`` block is entered."""
        ...

    async def aclose(self) -> None:
        """Release the connections (idempotent).

        Cancellation: safe; the connections are released anyway.
        """
        ...
