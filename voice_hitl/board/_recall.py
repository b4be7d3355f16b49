"""What a worker remembers of its settled requests, to put back on a board that forgot them."""

from __future__ import annotations

from collections import OrderedDict

from ._model import BoardRequest, BoardStatus
from ._protocol import RequestBoard

__all__ = ["SettledRecords"]


class SettledRecords:
    """The settled records of a worker's last ``size`` requests (oldest forgotten first).

    After a server restarted without persistence, :meth:`restore` puts them back (the board
    never overwrites a record it has), so a late answer hears who settled the request instead
    of "no such request".
    """

    def __init__(self, size: int) -> None:
        self._records: OrderedDict[str, BoardRequest] = OrderedDict()
        self._size = size

    def keep(self, record: BoardRequest) -> None:
        """Remember ``record`` if it is settled (the latest record of an id wins)."""
        if record.is_open:
            return
        self._records[record.id] = record
        self._records.move_to_end(record.id)
        while len(self._records) > self._size:
            self._records.popitem(last=False)

    async def restore(self, board: RequestBoard) -> None:
        """Put every remembered record back where ``board`` lost it (abandoned ones aside:
        their owner re-publishes what it still holds).

        Raises:
            BoardUnavailableError: The server cannot be reached.

        Cancellation: some records may be back; restoring again is safe.
        """
        kept = [r for r in self._records.values() if r.status is not BoardStatus.ABANDONED]
        if kept:
            await board.restore(kept)
