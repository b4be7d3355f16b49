"""Which tool results the server has taken, so none is lost when a connection drops.

Sans-I/O bookkeeping for :class:`~providers.openai._protocol.RealtimeProtocol`: a result is
*in flight* from the moment its ``conversation.item.create`` is queued until the server adds the
item to the conversation (``conversation.item.added``/``created``/``done``) or refuses it (an
``error`` naming the client event). Results in flight when the connection drops were never
taken: they are delivered again, as context, on the next connection. A call whose connection
dropped before its result was ready stays answerable: its result goes to the new conversation
as context the model reads, with the question it answers.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from providers.realtime_ws import InFlight

__all__ = ["Delivery", "ResultDeliveries", "context_text"]


class Delivery(enum.Enum):
    """Where a submitted result stands."""

    IN_FLIGHT = "in_flight"
    TAKEN = "taken"
    """Taken as the call's ``function_call_output``."""
    TAKEN_AS_CONTEXT = "taken_as_context"
    """Taken as a message on a later connection (the call's own connection was lost)."""
    REFUSED = "refused"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class PendingResult:
    """A result the server has not taken yet."""

    call_id: str
    name: str
    arguments: str
    output: str
    as_context: bool


def context_text(name: str, arguments: str, call_id: str, output: str) -> str:
    """The message that carries a result to a conversation that never saw its call."""
    return (
        f"[Tool {name} result for your earlier call {name}({arguments}) (call {call_id}), "
        f"made before the connection to you was restored] {output}"
    )


def _marker(call_id: str) -> str:
    return f"(call {call_id}),"


class ResultDeliveries:
    """Tracks every submitted result until the server takes or refuses it."""

    def __init__(self) -> None:
        self._in_flight: dict[str, PendingResult] = {}  # until taken, across connections
        self._by_event: InFlight[str] = InFlight()  # client event id -> call id, this connection
        self._done: dict[str, Delivery] = {}
        self._refused: dict[str, str] = {}

    def sent(
        self,
        call_id: str,
        name: str,
        arguments: str,
        output: str,
        event_id: str,
        *,
        as_context: bool,
    ) -> None:
        """The result of the call ``name(arguments)`` was queued in the
        ``conversation.item.create`` with ``event_id``."""
        self._in_flight[call_id] = PendingResult(call_id, name, arguments, output, as_context)
        self._by_event.wrote(event_id, call_id)
        self._done.pop(call_id, None)

    def item_added(self, item: Any) -> None:
        """The server added ``item`` (a decoded conversation item) to the conversation."""
        if not isinstance(item, dict):
            return
        if item.get("type") == "function_call_output":
            call_id = item.get("call_id")
            if isinstance(call_id, str):
                self._take(call_id, Delivery.TAKEN)
        elif item.get("type") == "message":
            for part in item.get("content") or ():
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str):
                    for call_id, result in list(self._in_flight.items()):
                        if result.as_context and _marker(call_id) in text:
                            self._take(call_id, Delivery.TAKEN_AS_CONTEXT)

    def _take(self, call_id: str, how: Delivery) -> None:
        result = self._in_flight.pop(call_id, None)
        if result is not None:
            self._done[call_id] = how

    def refused(self, event_id: str | None, why: str) -> bool:
        """The server refused the client event ``event_id``; True if it carried a result."""
        call_id = self._by_event.take(event_id) if event_id is not None else None
        if call_id is None or self._in_flight.pop(call_id, None) is None:
            return False
        self._done[call_id] = Delivery.REFUSED
        self._refused[call_id] = why
        return True

    def lost(self) -> list[PendingResult]:
        """The connection dropped: the results still in flight, to send again as context
        (they stay in flight until the next connection's server takes them)."""
        self._by_event.lost()
        return list(self._in_flight.values())

    def state(self, call_id: str) -> Delivery:
        """Where the result of ``call_id`` stands."""
        if call_id in self._in_flight:
            return Delivery.IN_FLIGHT
        return self._done.get(call_id, Delivery.UNKNOWN)

    def why_refused(self, call_id: str) -> str:
        """The server's reason for refusing the result of ``call_id``."""
        return self._refused.get(call_id, "")

    def forget(self, call_id: str) -> None:
        """The submitter has read the outcome; drop what is kept for it."""
        self._done.pop(call_id, None)
        self._refused.pop(call_id, None)
