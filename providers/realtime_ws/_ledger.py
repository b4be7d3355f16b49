"""The delivery ledger, sans I/O: which calls are open, and which results are in flight.

A realtime conversation can lose its connection while the model waits for a tool result.
Two records keep a result from being lost:

- :class:`CallLedger`: the calls the model made, each with the number of the connection it
  came on, and the calls that can no longer be answered (answered already, withdrawn by the
  server). A call from an earlier connection stays answerable: the protocol delivers its result
  to the new conversation as context, since the new server session cannot take it as the call's
  output. :meth:`CallLedger.take` raises the same ``ProviderError`` for every provider when a
  result names a call that is not open.
- :class:`InFlight`: what was written on the current connection and the server has not yet
  taken (an acknowledgement, or the server moving past it). When the connection drops,
  :meth:`InFlight.lost` hands it back, in order, to be sent again on the next one.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from voice_hitl._exceptions import ProviderError

__all__ = ["CallLedger", "InFlight", "OpenCall"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A call the model made and nobody answered yet."""

    call_id: str
    name: str
    arguments: str
    connection: int
    """The number of the connection it came on (1, then 2 after a reconnect...)."""


class CallLedger:
    """The calls of one conversation, across its connections."""

    def __init__(self) -> None:
        self._open: dict[str, OpenCall] = {}
        self._seen: set[str] = set()
        self._withdrawn: dict[str, str] = {}

    def opened(self, call_id: str, name: str, arguments: str, connection: int) -> bool:
        """The model called ``name``; False when ``call_id`` was seen before (a repeat)."""
        if call_id in self._seen:
            return False
        self._seen.add(call_id)
        self._open[call_id] = OpenCall(call_id, name, arguments, connection)
        return True

    def served(self, call_id: str) -> bool:
        """A call the server ran itself (never answered); False when seen before."""
        if call_id in self._seen:
            return False
        self._seen.add(call_id)
        return True

    def withdraw(self, call_id: str, why: str) -> bool:
        """The call can no longer be answered; False when it was not open."""
        if self._open.pop(call_id, None) is None:
            return False
        self._withdrawn[call_id] = why
        return True

    def get(self, call_id: str) -> OpenCall | None:
        """The open call ``call_id``, if any."""
        return self._open.get(call_id)

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._open

    def open_ids(self, connection: int | None = None) -> list[str]:
        """Ids of the open calls (only those that came on ``connection`` when given)."""
        if connection is None:
            return list(self._open)
        return [c.call_id for c in self._open.values() if c.connection == connection]

    def earlier(self, connection: int) -> list[OpenCall]:
        """The open calls that came on a connection before ``connection``."""
        return [c for c in self._open.values() if c.connection != connection]

    def take(self, call_id: str) -> OpenCall:
        """The open call a result answers; it is no longer open.

        Raises:
            ProviderError: ``call_withdrawn`` or ``unknown_call`` (unknown, or already
                answered), recoverable; nothing changes.
        """
        call = self._open.pop(call_id, None)
        if call is not None:
            return call
        if call_id in self._withdrawn:
            raise ProviderError(
                f"result of call {call_id!r} not delivered: the call was withdrawn "
                f"({self._withdrawn[call_id]})",
                code="call_withdrawn",
                recoverable=True,
            )
        known = "was already answered" if call_id in self._seen else "is unknown"
        raise ProviderError(
            f"result of call {call_id!r} not delivered: the call {known}",
            code="unknown_call",
            recoverable=True,
        )


class InFlight(Generic[T]):
    """What was written on the current connection and not yet taken, by a token (a client
    event id, or the frame itself), in the order written."""

    def __init__(self) -> None:
        self._items: dict[Hashable, T] = {}

    def wrote(self, token: Hashable, item: T) -> None:
        """``item`` went out under ``token``."""
        self._items[token] = item

    def take(self, token: Hashable) -> T | None:
        """The server took what went under ``token``; returns it (None if unknown)."""
        return self._items.pop(token, None)

    def take_all(self) -> None:
        """The server moved past everything written so far."""
        self._items.clear()

    def lost(self) -> list[T]:
        """The connection dropped: everything in flight, in order, to send again."""
        items = list(self._items.values())
        self._items.clear()
        return items

    def items(self) -> list[tuple[Hashable, T]]:
        """(token, item) pairs in flight, in order."""
        return list(self._items.items())

    def __len__(self) -> int:
        return len(self._items)
