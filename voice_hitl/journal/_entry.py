"""A journal entry and its place in the tamper-evident chain.

Each entry carries the digest of the entry before it and its own digest, an HMAC-SHA256 keyed
with the application's key over its canonical JSON form (sequence number, request id, time,
kind, data and the previous digest). Editing an entry breaks its digest; deleting one breaks
the sequence and the next entry's link.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["GENESIS", "ChainProblem", "JournalEntry", "digest_of", "verify_chain"]

GENESIS = "0" * 64
"""The ``prev`` of the first entry."""


def _canonical(
    seq: int, request_id: str, at: str, kind: str, data: Mapping[str, Any], prev: str
) -> bytes:
    body = [seq, request_id, at, kind, data, prev]
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()


def digest_of(
    key: bytes, seq: int, request_id: str, at: str, kind: str, data: Mapping[str, Any], prev: str
) -> str:
    """The HMAC-SHA256 (hex) that links an entry into the chain."""
    return hmac.new(
        key, _canonical(seq, request_id, at, kind, data, prev), hashlib.sha256
    ).hexdigest()


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


def verify_chain(entries: Iterable[JournalEntry], key: bytes) -> list[ChainProblem]:
    """Check entries read in sequence order; an empty list means the chain is intact."""
    problems: list[ChainProblem] = []
    expected_seq, prev = 1, GENESIS
    for entry in entries:
        if entry.seq != expected_seq:
            missing = (
                f"{expected_seq}"
                if entry.seq == expected_seq + 1
                else (f"{expected_seq}..{entry.seq - 1}")
            )
            problems.append(ChainProblem(entry.seq, f"entries {missing} are missing (deleted?)"))
        elif entry.prev != prev:
            problems.append(ChainProblem(entry.seq, "does not link to the entry before it"))
        want = digest_of(
            key, entry.seq, entry.request_id, entry.at, entry.kind, entry.data, entry.prev
        )
        if not hmac.compare_digest(want, entry.digest):
            problems.append(
                ChainProblem(entry.seq, "its content does not match its digest (edited?)")
            )
        expected_seq, prev = entry.seq + 1, entry.digest
    return problems
