"""Signed receipts: an HMAC-SHA256 over (request id, participant, decision, timestamp)."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Literal

__all__ = ["ApprovalReceipt", "Decision", "sign_receipt", "verify_receipt"]

Decision = Literal["approve", "deny"]


def _message(request_id: str, participant_id: str, decision: str, timestamp: str) -> bytes:
    # A JSON array is unambiguous: no field can smuggle a separator into another.
    return json.dumps(
        [request_id, participant_id, decision, timestamp], separators=(",", ":")
    ).encode()


def _check_key(key: bytes) -> None:
    if not isinstance(key, bytes | bytearray) or not key:
        raise ValueError("the receipt key must be non-empty bytes")


@dataclass(frozen=True, slots=True)
class ApprovalReceipt:
    """Proof that ``participant_id`` gave ``decision`` on ``request_id`` at ``timestamp``.

    ``timestamp`` is ISO-8601 UTC; ``signature`` is the hex HMAC-SHA256 of the four fields.
    """

    request_id: str
    participant_id: str
    decision: Decision
    timestamp: str
    signature: str


def sign_receipt(
    key: bytes, request_id: str, participant_id: str, decision: Decision, timestamp: str
) -> ApprovalReceipt:
    """Sign one decision with the application's key.

    Raises:
        ValueError: The key is empty, or the decision is not ``approve`` / ``deny``.
    """
    _check_key(key)
    if decision not in ("approve", "deny"):
        raise ValueError(f"decision must be 'approve' or 'deny', got {decision!r}")
    digest = hmac.new(
        bytes(key), _message(request_id, participant_id, decision, timestamp), hashlib.sha256
    )
    return ApprovalReceipt(request_id, participant_id, decision, timestamp, digest.hexdigest())


def verify_receipt(receipt: ApprovalReceipt, key: bytes) -> bool:
    """True when ``receipt`` was signed with ``key`` and none of its fields changed.

    Raises:
        ValueError: The key is empty.
    """
    _check_key(key)
    expected = hmac.new(
        bytes(key),
        _message(receipt.request_id, receipt.participant_id, receipt.decision, receipt.timestamp),
        hashlib.sha256,
    ).hexdigest()
    return hmac.compare_digest(expected, receipt.signature)
