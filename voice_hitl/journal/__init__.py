"""The journal: every human-input request's story, kept in order and tamper-evident.

Off by default. Attach one to a handler::

    journal = Journal.open("journal.sqlite3", key=app_key)
    journal.attach(human.handler)
    ...
    journal.close()  # writes what is queued

Many workers share one journal on Redis Streams::

    journal = Journal(RedisJournalStore(redis_url), key=app_key)
    journal.start()

``voice-hitl journal list|show|verify|export`` reads either.
"""

from __future__ import annotations

from .._public import publish
from ._entry import GENESIS, ChainProblem, JournalEntry, digest_of, verify_chain
from ._errors import ChainMoved
from ._journal import Journal, JournalStats, JournalStore, record_of
from ._redis import RedisJournalStore
from ._sqlite import SqliteJournalStore

__all__ = [
    "GENESIS",
    "ChainMoved",
    "ChainProblem",
    "Journal",
    "JournalEntry",
    "JournalStats",
    "JournalStore",
    "RedisJournalStore",
    "SqliteJournalStore",
    "digest_of",
    "record_of",
    "verify_chain",
]

publish(__name__, globals(), __all__)
