"""The desk's refusals: each a :class:`DeskError` with its HTTP status and a short code.

::

    DeskError (400 bad_request)
    ├── UnauthorizedError      401 unauthorized
    ├── ForbiddenError         403 forbidden
    ├── NotFoundError          404 not_found
    ├── SettledError           409 already_settled    (with settled)
    ├── BeingAnsweredError     409 being_answered     (with claim, Retry-After)
    ├── BoardStateLostError    410 board_state_lost
    ├── InvalidError           422 invalid
    ├── BoardRebuildingError   503 board_rebuilding   (Retry-After)
    ├── NotTakenError          503 not_taken
    ├── NotRecordedError       503 not_recorded
    ├── ShuttingDownError      503 shutting_down      (Retry-After)
    └── OutcomeUnknownError    504 outcome_unknown
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..board import BoardRequest

__all__ = [
    "BeingAnsweredError",
    "BoardRebuildingError",
    "BoardStateLostError",
    "DeskError",
    "ForbiddenError",
    "InvalidError",
    "NotFoundError",
    "NotRecordedError",
    "NotTakenError",
    "OutcomeUnknownError",
    "SettledError",
    "ShuttingDownError",
    "UnauthorizedError",
]


class DeskError(Exception):
    """An operation the desk refused; ``status`` is its HTTP status, ``code`` a short name;
    ``retry_after`` (seconds) when trying again later is expected to work."""

    status = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        request: BoardRequest | None = None,
        *,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.request = request
        self.retry_after = retry_after

    def to_wire(self) -> dict[str, Any]:
        """``{"status", "code", "message"}``, plus ``settled`` for a request that settled and
        ``retry_after`` (seconds) for a refusal worth retrying then."""
        body: dict[str, Any] = {"status": self.status, "code": self.code, "message": self.message}
        if self.request is not None and not self.request.is_open:
            body["settled"] = self.request.settlement_wire()
        if self.retry_after is not None:
            body["retry_after"] = self.retry_after
        return body


class UnauthorizedError(DeskError):
    """No bearer token, or one nobody has."""

    status, code = 401, "unauthorized"


class ForbiddenError(DeskError):
    """Refused for the operator's scope. The desk no longer raises it for a request outside
    the scope (that is a :class:`NotFoundError`, so a refusal does not tell the request
    exists); kept for callers that catch it."""

    status, code = 403, "forbidden"


class NotFoundError(DeskError):
    """No request has that id (never, or no longer retained)."""

    status, code = 404, "not_found"


class BoardRebuildingError(DeskError):
    """The board's server lost its state a moment ago (restarted without persistence) and the
    workers are putting their requests back: the id may be one of them. Retry after
    ``retry_after`` seconds (an answer with the same ``Idempotency-Key`` is still made once)."""

    status, code = 503, "board_rebuilding"


class BoardStateLostError(DeskError):
    """No such id on a board whose server lost its state within the retention, and no worker
    put it back: it may have existed (an earlier answer's outcome is unknown here), or not."""

    status, code = 410, "board_state_lost"


class SettledError(DeskError):
    """The request was already answered, rejected, timed out, withdrawn or abandoned."""

    status, code = 409, "already_settled"


class BeingAnsweredError(DeskError):
    """Another operator's answer or rejection is waiting for the call to take it (their claim
    holds the request). The body's ``claim`` says who, how (``answered`` / ``rejected``) and
    ``until`` when the claim holds; ``retry_after`` is the seconds until then. If the call does
    not take it by then the request is open again; if it does, a retry gets
    :class:`SettledError`."""

    status, code = 409, "being_answered"

    def __init__(self, message: str, request: BoardRequest) -> None:
        claim = request.claim
        left = 0.0 if claim is None else claim.until - time.time()
        super().__init__(message, request, retry_after=max(1, math.ceil(left)))

    def to_wire(self) -> dict[str, Any]:
        """As :meth:`DeskError.to_wire`, plus ``claim``: ``{"by", "via", "status", "until"}``."""
        from ..board._model import iso

        body = super().to_wire()
        claim = self.request.claim if self.request is not None else None
        if claim is not None:
            body["claim"] = {
                "by": claim.by,
                "via": claim.via,
                "status": str(claim.status),
                "until": iso(claim.until),
            }
        return body


class NotTakenError(DeskError):
    """The owning worker did not take the answer in time (busy, or just killed); nothing was
    delivered and the request is open again (the claim lapsed for good)."""

    status, code = 503, "not_taken"


class NotRecordedError(DeskError):
    """The service keeps a ``sync`` journal and could not store the operator's decision in
    time, so the answer was not sent (nothing was delivered; retrying is safe)."""

    status, code = 503, "not_recorded"


class OutcomeUnknownError(DeskError):
    """The worker took the answer but its settle was not seen in time, or the board became
    unreachable after the answer was sent: retry with the same ``Idempotency-Key`` (or read
    the request) to learn the outcome."""

    status, code = 504, "outcome_unknown"


class InvalidError(DeskError):
    """The answer or reason does not fit (the message says what would)."""

    status, code = 422, "invalid"


class ShuttingDownError(DeskError):
    """The service is stopping (a rolling restart): the answer was not tried; send it again
    after ``retry_after`` seconds (to this service once restarted, or another instance)."""

    status, code = 503, "shutting_down"
