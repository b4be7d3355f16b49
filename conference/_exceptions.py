"""The exceptions the conference package adds, under voice-hitl's one root::

VoiceHitlError
├── AddressingError (also ValueError)           a name matches nobody (or several) on the roster
├── HumanInputRejectedError (also RuntimeError)
│   └── ApprovalDeniedError                     an addressed approver said no
└── ApprovalTimeoutError (also TimeoutError)    the quorum was not reached in time
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voice_hitl import HumanInputRejectedError, VoiceHitlError

if TYPE_CHECKING:
    from ._receipts import ApprovalReceipt

__all__ = ["AddressingError", "ApprovalDeniedError", "ApprovalTimeoutError"]


class AddressingError(VoiceHitlError, ValueError):
    """A request names someone who is not (unambiguously) in the conference."""


class ApprovalDeniedError(HumanInputRejectedError):
    """An addressed approver denied the request (or the quorum became unreachable).

    Attributes:
        denied_by: The participant id who denied, or None when nobody did (e.g. the quorum
            became unreachable because approvers left).
        receipt: The signed record of the denial, when a participant denied.
    """

    def __init__(
        self,
        reason: str,
        *,
        denied_by: str | None = None,
        receipt: ApprovalReceipt | None = None,
    ) -> None:
        super().__init__(reason)
        self.denied_by = denied_by
        self.receipt = receipt


class ApprovalTimeoutError(VoiceHitlError, TimeoutError):
    """The quorum of approvals was not reached before the deadline."""
