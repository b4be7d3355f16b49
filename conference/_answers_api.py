"""The answers-and-approvals half of :class:`~conference.ConferenceChannel`'s API."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from ._approval import ApprovalRequest, ApprovalResult
from ._backend import Participant
from ._desk import AnswerDesk

__all__ = ["AnswersApi"]

T = TypeVar("T")


class AnswersApi:
    """Answers, addressed requests and quorum approvals, routed through the answer desk."""

    _desk: AnswerDesk
    _receipt_key: bytes

    def _check_open(self) -> None:
        """Raise ``ChannelClosedError`` once the channel is closed (the channel's own)."""
        raise NotImplementedError

    @property
    def receipt_key(self) -> bytes:
        """The HMAC key signing receipts of approvals the tools ask for.

        A random per-channel key until the application sets its own.
        """
        return self._receipt_key

    @receipt_key.setter
    def receipt_key(self, key: bytes) -> None:
        if not isinstance(key, bytes | bytearray) or not key:
            raise ValueError("the receipt key must be non-empty bytes")
        self._receipt_key = bytes(key)

    def _key(self) -> bytes:
        return self._receipt_key

    def addressed_to(self, pending_id: str) -> tuple[Participant, ...] | None:
        """Who must answer an open request (None: anyone in the call may, or not open)."""
        return self._desk.addressed_to(pending_id)

    def challenge_code(self, pending_id: str, *, new: bool = False) -> str | None:
        """The one-time code a high-risk request asks for under
        ``EvidencePolicy(challenge="code")`` (drawn when first asked for; ``new`` draws
        another, which from then on is the one spoken votes must say); None when the request
        is not open here. A ``VoiceResponder`` serving the channel asks with this code."""
        return self._desk.challenge_code(pending_id, new=new)

    def approval(self, request_id: str) -> ApprovalRequest | None:
        """An open approval (a tool's ``approvers`` request, or one from :meth:`open_approval`)."""
        return self._desk.approval(request_id)

    @property
    def open_requests(self) -> list[str]:
        """Ids of the open requests answers are routed to (questions and approvals)."""
        return self._desk.open_ids

    def add_approval_listener(
        self, listener: Callable[[ApprovalRequest], None]
    ) -> Callable[[], None]:
        """Call ``listener(request)`` (synchronously; must not block) whenever an approval
        opens, from a tool's ``approvers`` or from :meth:`open_approval`; returns a remover.
        A listener that raises is logged and the others still run."""
        return self._desk.add_approval_listener(listener)

    def approval_result(self, request_id: str) -> ApprovalResult | None:
        """A granted approval with its receipts (the last 128 are kept)."""
        return self._desk.approval_result(request_id)

    # -- answers and approvals -------------------------------------------------------------

    def answer(
        self,
        pending_id: str,
        participant_id: str,
        answer: str,
        *,
        via: str = "api",
        evidence: Mapping[str, Any] | None = None,
    ) -> bool:
        """Answer an open request as one participant (an operator UI, a responder).

        For an approval, ``answer`` reads as a decision (``"approve"``/``"deny"``, yes/no);
        otherwise it is the text the model reads. ``via`` (how it arrived: ``speech``,
        ``dtmf``, ``api``) is told to observers with the participant as ``by``; ``evidence``
        (how a spoken vote was established) is journaled beside a counted vote.

        Returns:
            True when taken; False when ignored and logged (not open, not in the call, not
            addressed to them, not a yes/no for an approval, a repeated approval).
        """
        return self._desk.answer(pending_id, participant_id, answer, via=via, evidence=evidence)

    def open_approval(
        self,
        action: str,
        *,
        approvers: Sequence[str],
        quorum: int = 1,
        timeout: float | None = 300.0,
        key: bytes | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> ApprovalRequest:
        """Open an approval addressed to ``approvers`` (display names or ids) and return it.

        Answers come through :meth:`answer` or attributed speech; ``await request.wait()``.

        Args:
            action: What is to be approved.
            approvers: Who may approve (resolved against the roster now).
            quorum: How many distinct approvals grant it.
            timeout: Seconds before it fails with ``ApprovalTimeoutError`` (None: never).
            key: The receipt HMAC key (:attr:`receipt_key` by default).
            details: Kept with the request.

        Raises:
            ChannelClosedError: The channel is closed.
            AddressingError: An approver is not in the conference.
            ValueError: ``quorum`` is out of range, the key is empty, or ``timeout`` is not
                None and not a finite number of seconds above zero.
            RuntimeError: No running event loop (a timeout needs one).
        """
        self._check_open()
        return self._desk.open_approval(
            action, approvers, quorum=quorum, timeout=timeout, key=key, details=details
        )

    async def request_approval(
        self,
        action: str,
        *,
        approvers: Sequence[str],
        quorum: int = 1,
        timeout: float | None = 300.0,
        key: bytes | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> ApprovalResult:
        """Open an approval (see :meth:`open_approval`) and wait for it.

        Returns:
            The grant: who approved, when, and a receipt per approval.

        Raises:
            ApprovalDeniedError: An approver said no, or the quorum became unreachable.
            ApprovalTimeoutError: The quorum was not reached within ``timeout``.
            ChannelClosedError: The channel is (or got) closed.

        Cancellation: withdraws the request; later answers are ignored.
        """
        request = self.open_approval(
            action, approvers=approvers, quorum=quorum, timeout=timeout, key=key, details=details
        )
        try:
            return await request.wait()
        except asyncio.CancelledError:
            request.fail(RuntimeError("the approval request was withdrawn"))
            raise

    async def dual_control(
        self,
        quorum: int,
        approvers: Sequence[str],
        action: Callable[[], Awaitable[T]],
        *,
        description: str,
        timeout: float | None = 300.0,
        key: bytes | None = None,
    ) -> T:
        """Run ``action`` only after ``quorum`` distinct approvals from ``approvers``.

        Raises:
            ApprovalDeniedError: Denied; ``action`` never runs.
            ApprovalTimeoutError: Not approved in time; ``action`` never runs.

        Cancellation: before the grant, withdraws the request; after, cancels ``action``.
        """
        await self.request_approval(
            description, approvers=approvers, quorum=quorum, timeout=timeout, key=key
        )
        return await action()
