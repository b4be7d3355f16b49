""":class:`OperatorDesk`: the typed operations the HTTP API, the live feed and the CLI share.

The service is a thin shell over this desk: each handler authenticates, calls one method, and
turns the result or the :class:`DeskError` into its wire form. Answers are checked against the
request's :class:`~voice_hitl.speech.AnswerSpec` with :func:`~voice_hitl.speech.typed_answer`
(the same typed rules as spoken answers) and claimed on the board as
``{"answer", "choice_id", "transcript", "confidence", "via": "operator", "actor_id": <name>}``.
The desk reports an answer or a rejection taken only when the owning worker's handler took it
(:mod:`voice_hitl.service._taken`); otherwise the refusal names why.
"""

from __future__ import annotations

from typing import Any

from ..board import BoardRequest, BoardStatus, RequestBoard
from ..human._answer_json import answer_json
from ..speech import AnswerSpec, AnswerSpecError, NoMatch, typed_answer
from ._auth import Operator, Operators
from ._taken import MAX_KEY, Acknowledgements, claim_and_wait, claim_token

__all__ = [
    "MAX_REASON",
    "DeskError",
    "ForbiddenError",
    "InvalidError",
    "NotFoundError",
    "NotTakenError",
    "OperatorDesk",
    "OutcomeUnknownError",
    "SettledError",
    "UnauthorizedError",
]

MAX_REASON = 2000


class DeskError(Exception):
    """An operation the desk refused; ``status`` is its HTTP status, ``code`` a short name."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, request: BoardRequest | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.request = request

    def to_wire(self) -> dict[str, Any]:
        """``{"status", "code", "message"}``, plus ``settled`` for a request that settled."""
        body: dict[str, Any] = {"status": self.status, "code": self.code, "message": self.message}
        if self.request is not None and not self.request.is_open:
            body["settled"] = self.request.settlement_wire()
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


class SettledError(DeskError):
    """The request was already answered, rejected, timed out, withdrawn or abandoned."""

    status, code = 409, "already_settled"


class NotTakenError(DeskError):
    """The owning worker did not take the answer in time (busy, or just killed); nothing was
    delivered and the request is open again (the claim lapsed for good)."""

    status, code = 503, "not_taken"


class OutcomeUnknownError(DeskError):
    """The worker took the answer but its settle was not seen in time, or the board became
    unreachable after the answer was sent: retry with the same ``Idempotency-Key`` (or read
    the request) to learn the outcome."""

    status, code = 504, "outcome_unknown"


class InvalidError(DeskError):
    """The answer or reason does not fit (the message says what would)."""

    status, code = 422, "invalid"


def _settled_message(request: BoardRequest) -> str:
    from ..board._model import iso

    who = f" by {request.settled_by}" if request.settled_by else ""
    return f"request {request.id} was already {request.status}{who} at {iso(request.settled_at)}"


def _ended_message(request: BoardRequest) -> str:
    """Why an answer that was claimed did not reach the call."""
    if request.status is BoardStatus.ABANDONED:
        return (
            f"request {request.id} was not answered: its worker is gone "
            f"(heartbeat lapsed); the call never got the answer"
        )
    if request.status in (BoardStatus.WITHDRAWN, BoardStatus.TIMED_OUT):
        how = "timed out" if request.status is BoardStatus.TIMED_OUT else "was withdrawn"
        why = f" ({request.text})" if request.text else ""
        return f"request {request.id} {how}{why} before the answer was taken; the call never got it"
    return _settled_message(request)


def not_found_message(request_id: str) -> str:
    """The one refusal for an unknown id and for a request outside the operator's scope."""
    return f"no request {request_id!r} (unknown, or settled long ago)"


def spec_of(request: BoardRequest) -> AnswerSpec:
    """The request's answer spec, rebuilt from its tool call (free text when unmapped)."""
    try:
        return AnswerSpec.from_tool_call(request.tool, request.arguments)
    except AnswerSpecError:
        return AnswerSpec.free_text(str(request.arguments.get("question", "")))


class OperatorDesk:
    """Lists, shows, answers and rejects requests on a board for authenticated operators."""

    def __init__(
        self, board: RequestBoard, operators: Operators, *, ack_timeout: float = 3.0
    ) -> None:
        self.board = board
        self.operators = operators
        self.ack_timeout = ack_timeout
        """Seconds the owning worker has to take an answer (see :class:`NotTakenError`)."""
        self.acks = Acknowledgements()
        """Wakes waiting answers on board events (the app feeds it from its hub)."""

    def authenticate(self, authorization: str | None) -> Operator:
        """The operator of an ``Authorization: Bearer <token>`` header value (or a bare token).

        Raises:
            UnauthorizedError: Missing, malformed or unknown.
        """
        if not authorization:
            raise UnauthorizedError("a bearer token is required (Authorization: Bearer <token>)")
        scheme, _, token = authorization.strip().partition(" ")
        if not token:
            scheme, token = "bearer", scheme
        operator = self.operators.find(token.strip()) if scheme.lower() == "bearer" else None
        if operator is None:
            raise UnauthorizedError("the bearer token is not valid")
        return operator

    async def list(
        self,
        operator: Operator,
        *,
        room: str | None = None,
        channel: str | None = None,
        tool: str | None = None,
        for_: str | None = None,
    ) -> list[BoardRequest]:
        """Open requests the operator may see, filtered; ``for_`` keeps those addressed to
        that participant or operator, or to nobody in particular.

        Cancellation: safe.
        """
        found = []
        for request in await self.board.open_requests():
            if not operator.may_see(request):
                continue
            if room is not None and request.room != room:
                continue
            if channel is not None and request.channel != channel:
                continue
            if tool is not None and request.tool != tool:
                continue
            if for_ is not None:
                named = set(request.addressed) | set(request.approvers)
                if named and for_ not in named:
                    continue
            found.append(request)
        return found

    async def get(self, operator: Operator, request_id: str) -> BoardRequest:
        """One request (open or settled).

        A request outside the operator's rooms and channels is refused exactly as an unknown
        id is (same status, same message), so the refusal does not tell that it exists.

        Raises:
            NotFoundError: Unknown id, or outside the operator's scope.

        Cancellation: safe.
        """
        request = await self.board.get(request_id)
        if request is None or not operator.may_see(request):
            raise NotFoundError(not_found_message(request_id))
        return request

    async def answer(
        self,
        operator: Operator,
        request_id: str,
        value: Any,
        *,
        via: str = "api",
        idempotency_key: str | None = None,
    ) -> BoardRequest:
        """Answer a request with a typed value (rules in :func:`voice_hitl.speech.typed_answer`).

        Returns only once the owning worker's handler took the answer (module docstring of
        :mod:`voice_hitl.service._taken`). With an ``idempotency_key``, a retry by the same
        operator returns the first attempt's outcome instead of answering again.

        Returns:
            The settled request.

        Raises:
            NotFoundError: As :meth:`get`.
            SettledError: Somebody settled it first, the call ended first, or its worker is
                gone (the message says which).
            NotTakenError: The worker did not take it within :attr:`ack_timeout`.
            OutcomeUnknownError: Taken or not could not be learnt in time.
            InvalidError: ``value`` does not fit the request's spec, or a bad key.

        Cancellation: the answer may or may not have been taken; :meth:`get` tells.
        """
        key = _check_key(idempotency_key)
        request = await self._retry_or_open(operator, request_id, key)
        if not request.is_open:
            return request
        checked = typed_answer(value, spec_of(request), via="operator")
        if isinstance(checked, NoMatch):
            raise InvalidError(f"the answer does not fit the question: {checked.detail}")
        text = answer_json(checked, operator.name)
        return await self._settle(request, BoardStatus.ANSWERED, text, operator, via, key)

    async def reject(
        self,
        operator: Operator,
        request_id: str,
        reason: Any,
        *,
        via: str = "api",
        idempotency_key: str | None = None,
    ) -> BoardRequest:
        """Refuse a request; the model reads ``reason``.

        Raises:
            NotFoundError, SettledError, NotTakenError, OutcomeUnknownError: As :meth:`answer`.
            InvalidError: ``reason`` is not a non-empty string of at most 2,000 characters.

        Cancellation: as :meth:`answer`.
        """
        if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
            raise InvalidError(
                f"'reason' must be a non-empty string of at most {MAX_REASON} characters"
            )
        key = _check_key(idempotency_key)
        request = await self._retry_or_open(operator, request_id, key)
        if not request.is_open:
            return request
        return await self._settle(
            request, BoardStatus.REJECTED, reason.strip(), operator, via, key
        )

    async def _retry_or_open(
        self, operator: Operator, request_id: str, key: str | None
    ) -> BoardRequest:
        """The open request, or (a retry) the request this key's first attempt settled."""
        request = await self.get(operator, request_id)
        if request.is_open:
            return request
        claim = request.claim
        if (
            key is not None
            and claim is not None
            and claim.taken
            and claim.token == claim_token(operator.name, key)
            and request.status is claim.status
        ):
            return request
        raise SettledError(_settled_message(request), request)

    async def _settle(
        self,
        request: BoardRequest,
        status: BoardStatus,
        text: str,
        operator: Operator,
        via: str,
        key: str | None,
    ) -> BoardRequest:
        taken = await claim_and_wait(
            self.board,
            self.acks,
            request.id,
            status,
            text,
            token=claim_token(operator.name, key),
            window=self.ack_timeout,
            by=operator.name,
            via=via,
        )
        found = taken.request
        if taken.outcome == "taken" and found is not None:
            return found
        if taken.outcome == "missing" or (found is None and taken.outcome != "unknown"):
            raise NotFoundError(f"no request {request.id!r} (it left the board)")
        if taken.outcome == "busy" and found is not None:
            waiting = found.claim.by if found.claim is not None else None
            who = f" by {waiting}" if waiting else ""
            raise SettledError(f"request {request.id} is being answered{who}", found)
        if taken.outcome in ("settled", "gone") and found is not None:
            raise SettledError(_ended_message(found), found)
        if taken.outcome == "not_taken":
            raise NotTakenError(
                f"the worker of request {request.id} did not take the answer within "
                f"{self.ack_timeout:g} s (busy, or just stopped); nothing was delivered and "
                "the request is open again"
            )
        raise OutcomeUnknownError(
            f"request {request.id}: the answer was sent but whether the call took it is not "
            "known yet; retry with the same Idempotency-Key, or read the request"
        )


def _check_key(key: str | None) -> str | None:
    """An ``Idempotency-Key`` as given (printable ASCII, 1-200 characters), or None.

    Raises:
        InvalidError: Empty, too long, or other characters.
    """
    if key is None:
        return None
    if not 0 < len(key) <= MAX_KEY or not key.isascii() or not key.isprintable():
        raise InvalidError(
            f"the Idempotency-Key must be 1 to {MAX_KEY} printable ASCII characters"
        )
    return key
