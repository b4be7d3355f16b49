"""``ApprovalRequest``: answers collected per participant until a quorum of distinct approvers.

The request settles at the first of: ``quorum`` distinct addressed approvers said yes (a repeat
from the same person counts once), any addressed approver said no, enough approvers left that
the quorum can no longer be reached, or the deadline passed. Answers from anyone not addressed
are ignored and logged. Every counted decision carries a signed
:class:`~conference.ApprovalReceipt`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from voice_hitl._checks import positive_seconds
from voice_hitl.tools._approval_policy import ALWAYS_HINT

from ._backend import Participant
from ._exceptions import ApprovalDeniedError, ApprovalTimeoutError
from ._receipts import ApprovalReceipt, Decision, sign_receipt

__all__ = ["Approval", "ApprovalRequest", "ApprovalResult"]

logger = logging.getLogger("conference.approval")


@dataclass(frozen=True, slots=True)
class Approval:
    """One counted approval: who, when, and the signed receipt."""

    participant: Participant
    at: datetime
    receipt: ApprovalReceipt


@dataclass(frozen=True, slots=True)
class ApprovalResult:
    """A granted approval: the distinct approvers in the order they answered."""

    request_id: str
    action: str
    quorum: int
    approvals: tuple[Approval, ...]
    approved_at: datetime
    approved: bool = True
    always: bool = False
    """Every counted approver asked for "always" ("approve always", as the question offers)."""

    @property
    def approvers(self) -> tuple[str, ...]:
        """The approving participant ids, in the order they approved."""
        return tuple(a.participant.participant_id for a in self.approvals)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary (what a model reads as the tool's result)."""
        return {
            "approved": self.approved,
            "action": self.action,
            "approvers": [a.participant.display_name for a in self.approvals],
            "approved_at": self.approved_at.isoformat(),
            **({"always": True} if self.always else {}),
        }


class ApprovalRequest:
    """Collects approve/deny answers from addressed participants.

    Args:
        action: What is being approved (shown to people, recorded in the result).
        approvers: Who may answer; repeats of one participant count once.
        quorum: How many distinct approvals grant it (1 .. number of approvers).
        key: The application's HMAC key for the receipts.
        request_id: An id to use (a fresh one by default).
        details: Free-form details kept with the request (e.g. the tool arguments).

    Raises:
        ValueError: No approvers, a quorum out of range, or an empty key.
    """

    def __init__(
        self,
        action: str,
        approvers: Iterable[Participant],
        *,
        quorum: int = 1,
        key: bytes,
        request_id: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        unique = {p.participant_id: p for p in approvers}
        if not unique:
            raise ValueError("an approval request needs at least one approver")
        if isinstance(quorum, bool) or not 1 <= quorum <= len(unique):
            raise ValueError(f"quorum must be between 1 and {len(unique)}, got {quorum!r}")
        if not key:
            raise ValueError("the receipt key must be non-empty bytes")
        self.request_id = request_id or f"ap_{secrets.token_hex(6)}"
        self.action = action.removesuffix(ALWAYS_HINT)  # refusals read the action, not the hint
        self._asked_always: set[str] = set()
        self.quorum = quorum
        self.approvers: Mapping[str, Participant] = MappingProxyType(unique)
        self.details: Mapping[str, Any] = MappingProxyType(dict(details or {}))
        self._key = bytes(key)
        self._eligible = set(unique)
        self._approvals: dict[str, Approval] = {}
        self._result: ApprovalResult | None = None
        self._error: BaseException | None = None
        self._settled = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._callbacks: list[Callable[[ApprovalRequest], None]] = []
        self._vote_listeners: list[Callable[[Participant, ApprovalReceipt], None]] = []

    # -- state -------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once granted, denied, failed or timed out."""
        return self._settled.is_set()

    @property
    def result(self) -> ApprovalResult | None:
        """The grant, once the quorum was reached."""
        return self._result

    @property
    def error(self) -> BaseException | None:
        """Why the request ended without a grant (denial, timeout, withdrawal)."""
        return self._error

    @property
    def approvals(self) -> tuple[Approval, ...]:
        """The approvals counted so far."""
        return tuple(self._approvals.values())

    def add_done_callback(self, callback: Callable[[ApprovalRequest], None]) -> None:
        """Call ``callback(request)`` once it settles (at once if it already has)."""
        if self.done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def add_vote_listener(self, listener: Callable[[Participant, ApprovalReceipt], None]) -> None:
        """Call ``listener(participant, receipt)`` for every vote that counts (approve or deny).

        The receipt is the signed proof of that vote (what a journal keeps).
        """
        self._vote_listeners.append(listener)

    def _counted(self, participant: Participant, receipt: ApprovalReceipt) -> None:
        for listener in list(self._vote_listeners):
            try:
                listener(participant, receipt)
            except Exception:
                logger.exception("approval %s: vote listener failed", self.request_id)

    def arm(self, timeout: float) -> None:
        """Fail the request with :class:`ApprovalTimeoutError` ``timeout`` seconds from now.

        Raises:
            ValueError: ``timeout`` is not a finite number of seconds above zero.
            RuntimeError: No running event loop.
        """
        timeout = positive_seconds("timeout", timeout)
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(timeout, self._time_out, timeout)

    def _time_out(self, timeout: float) -> None:
        self.fail(
            ApprovalTimeoutError(
                f"approval of {self.action!r} timed out after {timeout:g}s with "
                f"{len(self._approvals)} of {self.quorum} approvals"
            )
        )

    # -- answers -----------------------------------------------------------------------------

    def _receipt(self, participant_id: str, decision: Decision, at: datetime) -> ApprovalReceipt:
        return sign_receipt(self._key, self.request_id, participant_id, decision, at.isoformat())

    def vote(self, participant_id: str, decision: Decision, *, always: bool = False) -> bool:
        """Record one participant's answer (``always``: an approval that asked for "always",
        granted only when every counted approver asked for it).

        Returns:
            True when the answer counted; False when it was ignored (logged): the request
            had settled, the participant is not addressed (or left), or it repeats an approval.

        Raises:
            ValueError: ``decision`` is not ``approve`` or ``deny``.
        """
        if decision not in ("approve", "deny"):
            raise ValueError(f"decision must be 'approve' or 'deny', got {decision!r}")
        if self.done:
            logger.info(
                "approval %s: %s answered after it settled", self.request_id, participant_id
            )
            return False
        participant = self.approvers.get(participant_id)
        if participant is None or participant_id not in self._eligible:
            logger.warning(
                "approval %s: answer from %r ignored: not an addressed approver (%s)",
                self.request_id,
                participant_id,
                ", ".join(sorted(self._eligible)),
            )
            return False
        at = datetime.now(UTC)
        if decision == "deny":
            receipt = self._receipt(participant_id, "deny", at)
            self._counted(participant, receipt)
            self.fail(
                ApprovalDeniedError(
                    f"{participant} denied {self.action!r}",
                    denied_by=participant_id,
                    receipt=receipt,
                )
            )
            return True
        if participant_id in self._approvals:
            logger.info(
                "approval %s: repeat approval from %r counts once", self.request_id, participant_id
            )
            return False
        approval = Approval(participant, at, self._receipt(participant_id, "approve", at))
        self._approvals[participant_id] = approval
        if always:
            self._asked_always.add(participant_id)
        self._counted(participant, approval.receipt)
        if len(self._approvals) >= self.quorum:
            self._settle(
                ApprovalResult(
                    self.request_id,
                    self.action,
                    self.quorum,
                    tuple(self._approvals.values()),
                    at,
                    always=self._approvals.keys() <= self._asked_always,
                ),
                None,
            )
        return True

    def participant_left(self, participant: Participant, reason: str = "left") -> None:
        """An approver left: fail the request if the quorum can no longer be reached.

        An approval the participant already gave stays counted.
        """
        pid = participant.participant_id
        if self.done or pid not in self._eligible:
            return
        self._eligible.discard(pid)
        reachable = len(self._approvals) + len(self._eligible - self._approvals.keys())
        if reachable < self.quorum:
            self.fail(
                ApprovalDeniedError(
                    f"{participant} {reason} before answering; the quorum of {self.quorum} "
                    f"for {self.action!r} can no longer be reached"
                )
            )

    def fail(self, error: BaseException) -> bool:
        """End the request with ``error`` (what :meth:`wait` raises). True if it was open."""
        return self._settle(None, error)

    def _settle(self, result: ApprovalResult | None, error: BaseException | None) -> bool:
        if self.done:
            return False
        self._result, self._error = result, error
        self._settled.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(self)
            except Exception:
                logger.exception("approval %s: done callback failed", self.request_id)
        return True

    async def wait(self) -> ApprovalResult:
        """Wait until the request settles.

        Returns:
            The grant.

        Raises:
            ApprovalDeniedError: An approver denied it, or the quorum became unreachable.
            ApprovalTimeoutError: The deadline passed first.
            ChannelClosedError: The channel closed first.

        Cancellation: safe; the request stays open (withdraw it with :meth:`fail`).
        """
        await self._settled.wait()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def __repr__(self) -> str:
        state = "granted" if self._result else type(self._error).__name__ if self._error else "open"
        return (
            f"ApprovalRequest({self.request_id!r}, {self.action!r}, quorum={self.quorum}, "
            f"approvals={len(self._approvals)}, {state})"
        )
