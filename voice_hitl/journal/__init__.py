"""The journal: every human-input request's story, kept in order and tamper-evident.

Off by default. Attach one to a handler::

    journal = Journal.open("journal.sqlite3", key=app_key)
    journal.attach(human.handler)
    ...
    journal.close()  # writes what is queued

Many workers share one journal on Redis Streams::

    journal = Journal(RedisJournalStore(redis_url), key=app_key)
    journal.start()

Choose ``durability="sync"`` to have every settled outcome stored before the call reads it.
Each writer signs checkpoints into an anchor beside the journal (``<file>.anchor``, or
``{prefix}:anchor`` on Redis) so that entries deleted from the end are found too.

``voice-hitl journal list|show|verify|export`` reads either, read-only.
"""

from __future__ import annotations

from .._public import publish
from ._anchor import Checkpoint, FileAnchor, JournalAnchor, RedisAnchor
from ._entry import GENESIS, ChainProblem, JournalEntry, digest_of, verify_chain
from ._errors import ChainMoved, JournalUnavailableError, NotAJournalError
from ._journal import Durability, Journal, default_anchor
from ._record import record_of
from ._redis import RedisJournalStore
from ._sqlite import SqliteJournalStore
from ._store import JournalStats, JournalStore
from ._verify import Verdict, verify_journal

__all__ = [
    "GENESIS",
    "ChainMoved",
    "ChainProblem",
    "Checkpoint",
    "Durability",
    "FileAnchor",
    "Journal",
    "JournalAnchor",
    "JournalEntry",
    "JournalStats",
    "JournalStore",
    "JournalUnavailableError",
    "NotAJournalError",
    "RedisAnchor",
    "RedisJournalStore",
    "SqliteJournalStore",
    "Verdict",
    "default_anchor",
    "digest_of",
    "record_of",
    "verify_chain",
    "verify_journal",
]

publish(__name__, globals(), __all__)
