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

import math
from collections.abc import Awaitable, Callable
from typing import Any

from ..board import BoardRequest, BoardStatus, RequestBoard
from ..human._answer_json import answer_json
from ..speech import AnswerSpec, AnswerSpecError, NoMatch, typed_answer
from ._auth import Operator, Operators
from ._drain import AnswerGate
from ._refusals import (
    BeingAnsweredError,
    BoardRebuildingError,
    BoardStateLostError,
    DeskError,
    InvalidError,
    NotFoundError,
    NotTakenError,
    OutcomeUnknownError,
    SettledError,
    UnauthorizedError,
)
from ._sessions import SESSION_PREFIX, Sessions
from ._taken import MAX_KEY, Acknowledgements, claim_and_wait, claim_token

__all__ = ["MAX_REASON", "OperatorDesk"]

MAX_REASON = 2000


WriteAhead = Callable[[BoardRequest, BoardStatus, str, str, str], Awaitable[None]]
"""``write_ahead(request, status, text, by, via)``: stores an operator's decision before the
desk claims the request (a ``sync`` journal); raises :class:`NotRecordedError` when it cannot."""


def _settled_message(request: BoardRequest) -> str:
    from ..board._model import iso

    who = f" by {request.settled_by}" if request.settled_by else ""
    return f"request {request.id} was already {request.status}{who} at {iso(request.settled_at)}"


def _claimed_message(request: BoardRequest) -> str:
    from ..board._model import iso

    claim = request.claim
    if claim is None:
        return f"request {request.id} is being answered by another operator"
    who = claim.by or "another operator"
    how = "rejected" if claim.status is BoardStatus.REJECTED else "answered"
    return (
        f"request {request.id} is being {how} by {who}: the call has until {iso(claim.until)} "
        "to take it; if it does not, the request is open again"
    )


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
        self,
        board: RequestBoard,
        operators: Operators,
        *,
        ack_timeout: float = 3.0,
        rebuild_window: float = 6.0,
        write_ahead: WriteAhead | None = None,
        sessions: Sessions | None = None,
    ) -> None:
        self.board = board
        self.sessions = sessions if sessions is not None else Sessions()
        """Console sign-ins (:mod:`voice_hitl.service._sessions`)."""
        self.write_ahead = write_ahead
        """Called with each decision before it is claimed (see :data:`WriteAhead`)."""
        self.operators = operators
        self.ack_timeout = ack_timeout
        """Seconds the owning worker has to take an answer (see :class:`NotTakenError`)."""
        self.rebuild_window = rebuild_window
        """Seconds after the board lost its state during which a missing id is "being
        rebuilt" (:class:`BoardRebuildingError`): the workers' heartbeat timeout, by which
        every live worker has noticed and re-published."""
        self.acks = Acknowledgements()
        """Wakes waiting answers on board events (the app feeds it from its hub)."""
        self.gate = AnswerGate()
        """Every answer and rejection passes it; closed when the service stops (a restart)."""

    def authenticate(self, authorization: str | None) -> Operator:
        """The operator of an ``Authorization: Bearer <token>`` header value (or a bare token):
        an operator's token, or a session id (:mod:`voice_hitl.service._sessions`).

        Raises:
            UnauthorizedError: Missing, malformed or unknown; a session signed out, expired,
                or whose operator's token was rotated or removed.
        """
        token = bearer_token(authorization)
        if token.startswith(SESSION_PREFIX):
            session = self.sessions.find(token)
            if session is None:
                raise UnauthorizedError("the session ended (signed out or expired): sign in again")
            operator = self.operators.current(session.operator, session.token_digest)
            if operator is None:
                self.sessions.revoke(token)
                raise UnauthorizedError(
                    "the session ended: its operator's token was rotated or revoked"
                )
            return operator
        found = self.operators.match(token)
        if found is None:
            raise UnauthorizedError("the bearer token is not valid")
        return found[0]

    def sign_in(self, authorization: str | None) -> tuple[str, Operator, float]:
        """Open a session for the operator whose own token ``authorization`` holds.

        Returns:
            The session id, the operator, and when the session expires (POSIX seconds).

        Raises:
            UnauthorizedError: Not an operator's token (a session id does not open another).
        """
        found = self.operators.match(bearer_token(authorization))
        if found is None:
            raise UnauthorizedError("sign in with an operator's token")
        operator, digest = found
        session_id, session = self.sessions.open(operator.name, digest)
        return session_id, operator, session.expires

    def sign_out(self, authorization: str | None) -> None:
        """End the session ``authorization`` holds (idempotent: an ended one stays ended).

        Raises:
            UnauthorizedError: No bearer token.
            InvalidError: An operator's token, not a session: it cannot be signed out
                (``voice-hitl operators rotate NAME`` replaces it).
        """
        token = bearer_token(authorization)
        if not token.startswith(SESSION_PREFIX):
            raise InvalidError(
                "only a session can be signed out; an operator's token is replaced with "
                "'voice-hitl operators rotate NAME'"
            )
        self.sessions.revoke(token)

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
            raise await self.missing(request_id)
        return request

    async def missing(self, request_id: str) -> DeskError:
        """The refusal for an id the board does not show this operator.

        Usually :class:`NotFoundError`. When the board's server lost its state (restarted
        without persistence; :meth:`RequestBoard.lost_state`): :class:`BoardRebuildingError`
        (503, retry) while the workers re-publish, then :class:`BoardStateLostError` (410)
        within the board's retention, so a request that was answered and then forgotten never
        reads as "no such request". Out-of-scope ids get the same refusal as unknown ones.

        Raises:
            BoardUnavailableError: The board cannot be reached to ask.

        Cancellation: safe.
        """
        lost = await self.board.lost_state()
        if lost is None:
            return NotFoundError(not_found_message(request_id))
        if lost < self.rebuild_window:
            wait = max(1, math.ceil(self.rebuild_window - lost))
            return BoardRebuildingError(
                f"request {request_id!r} is not on the board yet: the board is being rebuilt "
                f"(its Redis lost its state {lost:.1f} s ago, restarted without persistence, "
                f"and the workers are putting their requests back); retry in {wait} s",
                retry_after=wait,
            )
        return BoardStateLostError(
            f"no request {request_id!r} on the board, but the board's Redis lost its state "
            f"{lost:.0f} s ago (restarted without persistence) and no worker put this id back: "
            "if it was answered before, that outcome is unknown here (the call's own record "
            "has it)"
        )

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
            BeingAnsweredError: Another operator's answer is waiting for the call to take it.
            NotTakenError: The worker did not take it within :attr:`ack_timeout`.
            NotRecordedError: A ``sync`` journal could not store it first; it was not sent.
            OutcomeUnknownError: Taken or not could not be learnt in time.
            InvalidError: ``value`` does not fit the request's spec, or a bad key.
            ShuttingDownError: The service is stopping; nothing was tried (503, Retry-After).

        Cancellation: the answer may or may not have been taken; :meth:`get` tells.
        """
        with self.gate.admit():
            return await self._answer(operator, request_id, value, via, idempotency_key)

    async def _answer(
        self, operator: Operator, request_id: str, value: Any, via: str, idempotency_key: str | None
    ) -> BoardRequest:
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
            ShuttingDownError: As :meth:`answer`.

        Cancellation: as :meth:`answer`.
        """
        with self.gate.admit():
            return await self._reject(operator, request_id, reason, via, idempotency_key)

    async def _reject(
        self,
        operator: Operator,
        request_id: str,
        reason: Any,
        via: str,
        idempotency_key: str | None,
    ) -> BoardRequest:
        if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
            raise InvalidError(
                f"'reason' must be a non-empty string of at most {MAX_REASON} characters"
            )
        key = _check_key(idempotency_key)
        request = await self._retry_or_open(operator, request_id, key)
        if not request.is_open:
            return request
        return await self._settle(request, BoardStatus.REJECTED, reason.strip(), operator, via, key)

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
        if self.write_ahead is not None:  # stored before the call can take it
            await self.write_ahead(request, status, text, operator.name, via)
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
            error = await self.missing(request.id)
            if isinstance(error, NotFoundError):
                raise NotFoundError(f"no request {request.id!r} (it left the board)")
            raise error
        if taken.outcome == "busy" and found is not None:
            raise BeingAnsweredError(_claimed_message(found), found)
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


def bearer_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` value (or a bare token).

    Raises:
        UnauthorizedError: Missing, or another scheme.
    """
    if not authorization:
        raise UnauthorizedError("a bearer token is required (Authorization: Bearer <token>)")
    scheme, _, token = authorization.strip().partition(" ")
    if not token:
        scheme, token = "bearer", scheme
    if scheme.lower() != "bearer" or not token.strip():
        raise UnauthorizedError("the bearer token is not valid")
    return token.strip()


def _check_key(key: str | None) -> str | None:
    """An ``Idempotency-Key`` as given (printable ASCII, 1-200 characters), or None.

    Raises:
        InvalidError: Empty, too long, or other characters.
    """
    if key is None:
        return None
    if not 0 < len(key) <= MAX_KEY or not key.isascii() or not key.isprintable():
        raise InvalidError(f"the Idempotency-Key must be 1 to {MAX_KEY} printable ASCII characters")
    return key
