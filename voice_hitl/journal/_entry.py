"""A journal entry and its place in the tamper-evident chain.

Each entry carries the digest of the entry before it and its own digest, an HMAC-SHA256 keyed
with the application's key over its canonical JSON form (sequence number, request id, time,
kind, data and the previous digest). Editing an entry breaks its digest; deleting one breaks
the sequence and the next entry's link.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EDITED",
    "GENESIS",
    "ChainCheck",
    "ChainProblem",
    "JournalEntry",
    "digest_of",
    "verify_chain",
]

GENESIS = "0" * 64
"""The ``prev`` of the first entry."""


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)
"""What ``json.dumps(..., sort_keys=True, separators=(",", ":"), default=str)`` builds on each
call, built once (the chain's canonical form; verify spends a third of its time here)."""


def _canonical(
    seq: int, request_id: str, at: str, kind: str, data: Mapping[str, Any], prev: str
) -> bytes:
    return _ENCODER.encode([seq, request_id, at, kind, data, prev]).encode()


def digest_of(
    key: bytes, seq: int, request_id: str, at: str, kind: str, data: Mapping[str, Any], prev: str
) -> str:
    """The HMAC-SHA256 (hex) that links an entry into the chain."""
    return hmac.digest(key, _canonical(seq, request_id, at, kind, data, prev), "sha256").hex()


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One step of one request's story, as the journal keeps it."""

    seq: int
    request_id: str
    at: str
    """ISO 8601 UTC time of the step."""
    kind: str
    """``opened``, ``notified``, ``noted``, ``settled``, ``delivered`` or ``gap``."""
    data: Mapping[str, Any]
    prev: str
    digest: str

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON object (what ``voice-hitl journal export`` writes)."""
        return {
            "seq": self.seq,
            "request_id": self.request_id,
            "at": self.at,
            "kind": self.kind,
            "data": dict(self.data),
            "prev": self.prev,
            "digest": self.digest,
        }


@dataclass(frozen=True, slots=True)
class ChainProblem:
    """Where the chain breaks and why."""

    seq: int
    problem: str

    def __str__(self) -> str:
        return f"entry {self.seq}: {self.problem}"


class ChainCheck:
    """Checks entries one at a time, in sequence order, keeping nothing but the last link.

    ``feed`` returns the problems of one entry; ``verified`` counts the entries whose digest
    matches under the key (none at all, over a non-empty journal, means a wrong key).
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self.expected_seq, self.prev = 1, GENESIS
        self.count = 0
        self.verified = 0

    def feed(self, entry: JournalEntry) -> list[ChainProblem]:
        """The problems of ``entry`` (the next one read); an empty list when it is sound."""
        problems: list[ChainProblem] = []
        expected_seq = self.expected_seq
        if entry.seq != expected_seq:
            missing = (
                f"{expected_seq}"
                if entry.seq == expected_seq + 1
                else (f"{expected_seq}..{entry.seq - 1}")
            )
            problems.append(ChainProblem(entry.seq, f"entries {missing} are missing (deleted?)"))
        elif entry.prev != self.prev:
            problems.append(ChainProblem(entry.seq, "does not link to the entry before it"))
        want = digest_of(
            self._key, entry.seq, entry.request_id, entry.at, entry.kind, entry.data, entry.prev
        )
        if hmac.compare_digest(want, entry.digest):
            self.verified += 1
        else:
            problems.append(ChainProblem(entry.seq, EDITED))
        self.count += 1
        self.expected_seq, self.prev = entry.seq + 1, entry.digest
        return problems


EDITED = "its content does not match its digest (edited?)"


def verify_chain(entries: Iterable[JournalEntry], key: bytes) -> list[ChainProblem]:
    """Check entries read in sequence order; an empty list means the chain is intact."""
    check = ChainCheck(key)
    return [problem for entry in entries for problem in check.feed(entry)]
