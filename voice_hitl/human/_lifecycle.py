"""What a :class:`~voice_hitl.HumanInputHandler` tells its observers about each request.

One narrow interface for everything that follows requests from outside the call path (an
operator board, a journal): ``handler.add_observer(callback)``. The handler calls ``callback``
synchronously with one event per step of a request's life, in order:

- :class:`RequestOpened` once, when the request becomes answerable;
- :class:`RequestNotified` when its ``ON_USER_INPUT_REQUIRED`` notification has run;
- :class:`RequestNoted` for steps other layers add (an escalation, a conference approval with its
  receipt), any number of times while it is open;
- :class:`RequestSettled` once, when it is answered, rejected, timed out or withdrawn;
- :class:`RequestDelivered` when the gate has turned the outcome into what the model reads.

Observer policy: a callback must not block (hand slow work to a task or a thread of its own);
an exception it raises is logged with its traceback and never reaches the call path. A callback
that must see a settled outcome stored before the call goes on (a journal in ``sync``
durability) returns a :class:`concurrent.futures.Future` for the :class:`RequestSettled` event:
the request's ``wait()`` awaits it before returning the outcome (its exception, if any, is
raised there). Any other return value is ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ._pending import PendingInput, PendingInputEvent, PendingInputStatus

__all__ = [
    "RequestDelivered",
    "RequestEvent",
    "RequestNoted",
    "RequestNotified",
    "RequestObserver",
    "RequestOpened",
    "RequestSettled",
    "SettledOutcome",
]

SettledOutcome = Literal["answered", "rejected", "timed_out", "withdrawn"]


@dataclass(frozen=True, slots=True)
class RequestOpened:
    """A request was created and can be answered.

    ``request.deadline`` is when its wait times out (None when unbounded) and
    ``request.context`` carries what the door knew (e.g. ``transcript``: the last lines of the
    call before the question).
    """

    source: PendingInput
    """The handler's record (its fixed fields; ``request`` is the frozen view of them)."""
    at: datetime
    type: Literal["opened"] = "opened"

    @property
    def request(self) -> PendingInputEvent:
        """The request as hooks see it, built when asked (off the call path)."""
        return self.source.to_event()

    @property
    def pending_id(self) -> str:
        """The request's id."""
        return self.source.pending_id


@dataclass(frozen=True, slots=True)
class RequestNotified:
    """The request's ``ON_USER_INPUT_REQUIRED`` notification ran (``error`` if it raised)."""

    pending_id: str
    at: datetime
    denied: str | None = None
    error: str | None = None
    type: Literal["notified"] = "notified"


@dataclass(frozen=True, slots=True)
class RequestNoted:
    """A step another layer recorded on an open request (escalated, approval, ...)."""

    pending_id: str
    at: datetime
    note: str
    data: Mapping[str, Any]
    type: Literal["noted"] = "noted"


@dataclass(frozen=True, slots=True)
class RequestSettled:
    """The request's outcome: the first settle, which is the only one.

    ``text`` is the answer (``answered``) or the reason; ``detail`` says why a request was
    withdrawn when the canceller gave a reason (e.g. "the voice session ended"). ``by`` and
    ``via`` name who settled it and how (``speech``, ``dtmf``, ``operator``, ``api``), when the
    settling code said so.
    """

    pending_id: str
    at: datetime
    status: PendingInputStatus
    outcome: SettledOutcome
    text: str
    detail: str = ""
    by: str | None = None
    via: str | None = None
    type: Literal["settled"] = "settled"


@dataclass(frozen=True, slots=True)
class RequestDelivered:
    """What the model reads for the request's tool call (``outcome`` as ``ON_TOOL_CALL``)."""

    pending_id: str
    at: datetime
    tool_call_id: str
    outcome: str
    text: str
    detail: str = ""
    type: Literal["delivered"] = "delivered"


RequestEvent = RequestOpened | RequestNotified | RequestNoted | RequestSettled | RequestDelivered
"""Every event a handler's observers receive."""

RequestObserver = Callable[[RequestEvent], "Future[None] | None"]
"""Receives a handler's request events; must not block (see the module's observer policy)."""
